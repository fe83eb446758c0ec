"""Extract the `final_answer` a model gave from its raw response text.

The prompts ask for JSON with a `final_answer` key, but models wrap it in Markdown fences, add
prose after it, use Python's single quotes, or end with a bare `Final answer: ...` line. This
module accepts exactly those shapes and nothing looser: when no unambiguous answer is found the
result carries an error instead of a guess, and the prediction scores 0.

Precedence (the last occurrence wins inside each rule, since models revise themselves):
  1. a JSON object with a final-answer key anywhere in the text (fenced or not, or nested in a
     wrapper object);
  2. a labelled line `final answer: VALUE` / `answer: VALUE` whose VALUE is JSON;
  3. the whole response, or its last fenced block, being one bare JSON value.
Reasoning inside `<think>...</think>` is ignored.
"""
from __future__ import annotations

import dataclasses
import json
import re
from typing import Any

_THINK = re.compile(r"<think>.*?</think>", re.S | re.I)
_FENCE = re.compile(r"```[ \t]*[\w+-]*[ \t]*\n?(.*?)```", re.S)
_LABELLED = re.compile(
    r"^[\s>#*_-]*(?:the\s+)?(?:final[\s_-]*answer|answer)[*_\s]*(?:[:=]|\bis\b)[*_\s`]*(?P<value>.+?)[*_`\s.]*$",
    re.I | re.M,
)
_PY_WORDS = {"None": "null", "True": "true", "False": "false"}
_ANSWER_KEY = "finalanswer"


@dataclasses.dataclass(frozen=True)
class Extraction:
    """The answer value found in a response, or why none was found (`error` set, `value` None)."""

    value: Any = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


def extract_answer(response: str | None) -> Extraction:
    """The model's final answer, following the precedence in the module docstring."""
    if response is None or not response.strip():
        return Extraction(error="empty response")
    text = _THINK.sub("", response)
    if "<think>" in text.lower():
        return Extraction(error="reasoning never closed (<think> without </think>)")
    holders = [holder for obj in _json_objects(text) for holder in _answer_holders(obj)]
    if holders:
        holder = holders[-1]
        return Extraction(value=holder[_answer_key(holder)])
    labelled = [m.group("value").strip() for m in _LABELLED.finditer(text)]
    if labelled:
        try:
            return Extraction(value=relaxed_loads(labelled[-1]))
        except ValueError:
            pass
    fences = _FENCE.findall(text)
    for candidate in ([fences[-1]] if fences else []) + [text]:
        try:
            value = relaxed_loads(candidate.strip())
        except ValueError:
            continue
        if isinstance(value, dict):
            return Extraction(error=f"JSON object without final_answer: keys {sorted(map(str, value))[:5]}")
        return Extraction(value=value)
    if labelled:
        return Extraction(error=f"final answer line is not JSON: {_clip(labelled[-1])}")
    return Extraction(error="no final_answer found")


def relaxed_loads(text: str) -> Any:
    """JSON, or the Python-literal spelling of JSON (single quotes, None/True/False, tuples,
    trailing commas)."""
    try:
        return json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        pass
    try:
        return json.loads(_python_literal_to_json(text))
    except (json.JSONDecodeError, RecursionError) as exc:
        raise ValueError(str(exc)) from None


def _answer_key(obj: Any) -> str | None:
    if not isinstance(obj, dict):
        return None
    for key in obj:
        if isinstance(key, str) and re.sub(r"[^a-z]", "", key.lower()) == _ANSWER_KEY:
            return key
    return None


def _answer_holders(value: Any) -> list[dict]:
    """Objects holding a final-answer key, the outermost first (a wrapper like {"result": {...}})."""
    if isinstance(value, dict):
        if _answer_key(value) is not None:
            return [value]
        return [h for v in value.values() for h in _answer_holders(v)]
    if isinstance(value, list):
        return [h for v in value for h in _answer_holders(v)]
    return []


def _json_objects(text: str):
    """Outermost `{...}` objects in the text, strict JSON first, then the relaxed spelling."""
    decoder = json.JSONDecoder()
    pos = text.find("{")
    while pos != -1:
        end = None
        try:
            obj, end = decoder.raw_decode(text, pos)
        except (json.JSONDecodeError, RecursionError):
            close = _matching_brace(text, pos)
            if close is not None:
                try:
                    obj, end = relaxed_loads(text[pos:close + 1]), close + 1
                except ValueError:
                    pass
        if end is None:
            pos = text.find("{", pos + 1)
            continue
        yield obj
        pos = text.find("{", end)


def _matching_brace(text: str, start: int) -> int | None:
    """Index of the `}` closing the `{` at `start`, skipping quoted strings of either kind."""
    depth, quote, i = 0, None, start
    while i < len(text):
        c = text[i]
        if quote:
            if c == "\\":
                i += 1
            elif c == quote:
                quote = None
        elif c in "\"'":
            quote = c
        elif c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return None


def _python_literal_to_json(text: str) -> str:
    """Rewrite single-quoted strings, Python constants, tuples and trailing commas into JSON."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c in "\"'":
            j, body = i + 1, []
            while j < n and text[j] != c:
                if text[j] == "\\" and j + 1 < n:
                    body.append(text[j:j + 2])
                    j += 2
                    continue
                body.append('\\"' if text[j] == '"' else text[j])
                j += 1
            if j >= n:
                raise ValueError("unterminated string")
            literal = "".join(body).replace("\\'", "'")
            out.append(f'"{literal}"')
            i = j + 1
        elif c.isalpha() or c == "_":
            j = i
            while j < n and (text[j].isalnum() or text[j] == "_"):
                j += 1
            word = text[i:j]
            out.append(_PY_WORDS.get(word, word))
            i = j
        elif c == "," and _closes_next(text, i + 1):
            i += 1                                  # a trailing comma: [1, 2,] -> [1, 2]
        else:
            out.append({"(": "[", ")": "]"}.get(c, c))
            i += 1
    return "".join(out)


def _closes_next(text: str, start: int) -> bool:
    rest = text[start:].lstrip()
    return rest[:1] in ("]", "}", ")")


def _clip(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[:limit] + "..."
