"""A deterministic stand-in for a model, answering from the prompt alone ("echo the input").

The heuristic, stated so a report built from it can be read:
  * a question whose answer is "an integer" gets the last integer of the instance's setup;
  * a question whose answer is a list of integers gets the setup's integers in order of appearance
    (the input as given: right for untouched arrays, wrong after most operations);
  * every other question (names, nested lists, trees, graphs, automata) gets the empty answer of
    its shape: `null` where the format says so, `[]` otherwise.
The answer's spelling varies with a hash of the prompt, as real models' does: plain JSON, fenced
JSON after some prose, Python-style single quotes, a bare "Final answer:" line, and one response
in twelve that gives no answer at all (it scores 0 with a parse error).

`heuristic-sorted` is the same policy with every list of integers sorted ascending (nearer the
truth for in-order traversals and other ascending outputs), so a report has two models to compare.
The server callback `respond` picks the variant from the request's model name.
"""
from __future__ import annotations

import hashlib
import json
import re
from typing import Any

_INTEGER = re.compile(r"(?<![\w.])-?\d+(?![\w.])")
_FORMAT = re.compile(r"final_answer is (.+?)\.?\s*$", re.S)
STYLES = 12


def heuristic_answer(prompt: str, sort_lists: bool = False) -> Any:
    """The policy's answer value for a rendered benchmark prompt."""
    blocks = prompt.strip().split("\n\n")
    setup = blocks[-2] if len(blocks) >= 2 else prompt
    match = _FORMAT.search(blocks[-1])
    answer_format = match.group(1).strip() if match else ""
    numbers = [int(n) for n in _INTEGER.findall(setup)]
    if answer_format.startswith("an integer"):
        return numbers[-1] if numbers else 0
    if re.match(r"a list of (\d+ )?integers", answer_format):
        return sorted(numbers) if sort_lists else numbers
    return None if "null" in answer_format else []


def respond(request: dict) -> str:
    """The chat server callback: the answer of the last user message, in a prompt-chosen style."""
    prompt = next((m.get("content", "") for m in reversed(request.get("messages") or [])
                   if m.get("role") == "user"), "")
    answer = heuristic_answer(prompt, sort_lists=str(request.get("model", "")).endswith("sorted"))
    style = int.from_bytes(hashlib.sha256(prompt.encode()).digest()[:4], "big") % STYLES
    as_json = json.dumps({"final_answer": answer})
    if style == 0:
        return "I cannot determine the final state from this description."
    if style in (1, 2):
        return f"Let me restate the input.\n```json\n{json.dumps({'final_answer': answer}, indent=2)}\n```\nDone."
    if style == 3:
        return repr({"steps": ["echo the input"], "final_answer": answer})
    if style == 4:
        return f"Reading the setup again.\nFinal answer: {json.dumps(answer)}"
    return json.dumps({"steps": ["echo the input"], "final_answer": answer}) if style % 2 else as_json
