"""Render any prompt mode from stored prompt parts, without regenerating the instance.

An instance stores `prompt_parts` (JSON): the PromptParts fields plus `exemplars`, three solved
instances of the same task drawn from other seeds (never the instance itself) for k-shot mode.

Description modes: `full` (the structure's definition) or `name` (its name only); both state the
task's rules, so every prompt says which convention its answer follows. Prompt modes:

    answer-only     only the JSON answer
    zero-shot-cot   think step by step, then the JSON answer
    stepwise        JSON with `steps` (the state after each operation) and `final_answer`
    k-shot          three solved exemplars, then the instance, answer only
    code-allowed    the model may write and run code in its head before answering
    code-required   the model must write a Python program; JSON with `code` and `final_answer`
"""
from __future__ import annotations

import dataclasses
import json
from typing import Any, Mapping

from transforms.bench.registry import PromptParts

MODES = ("answer-only", "zero-shot-cot", "stepwise", "k-shot", "code-allowed", "code-required")
DESCRIPTIONS = ("full", "name")
DEFAULT_MODE = "stepwise"
DEFAULT_DESCRIPTION = "full"
MODE_ALIASES = {"cot": "zero-shot-cot", "kshot": "k-shot", "code": "code-allowed"}


def normalize_mode(mode: str) -> str:
    """The mode an alias (cot, kshot, code) stands for; other names unchanged."""
    return MODE_ALIASES.get(mode, mode)


def parts_record(parts: PromptParts, exemplars: list[dict]) -> dict:
    """The JSON-ready record stored in the `prompt_parts` column."""
    return {**{f.name: getattr(parts, f.name) for f in dataclasses.fields(parts)}, "exemplars": exemplars}


def render(parts: Mapping[str, Any], mode: str = DEFAULT_MODE, description: str = DEFAULT_DESCRIPTION) -> str:
    """The prompt text of one mode; `parts` is the stored record (or a PromptParts)."""
    if isinstance(parts, PromptParts):
        parts = parts_record(parts, [])
    if mode not in MODES:
        raise ValueError(f"unknown prompt mode {mode!r}; choose one of {', '.join(MODES)}")
    if description not in DESCRIPTIONS:
        raise ValueError(f"unknown description mode {description!r}; choose one of {', '.join(DESCRIPTIONS)}")
    blocks = [_description(parts, description)]
    if mode == "k-shot":
        exemplars = parts.get("exemplars") or []
        if not exemplars:
            raise ValueError("k-shot mode needs stored exemplars; this record has none")
        for number, example in enumerate(exemplars, 1):
            answer = json.dumps({"final_answer": example["answer"]}, separators=(", ", ": "))
            blocks.append(f"Example {number}:\n{example['setup']}\n{example['question']}\nAnswer: {answer}")
        blocks.append("Now your turn:")
    blocks.append(f"{parts['setup']}\n{parts['question']}")
    blocks.append(_instructions(mode, parts["answer_format"]))
    return "\n\n".join(b for b in blocks if b)


def _description(parts: Mapping[str, Any], description: str) -> str:
    head = parts["definition"] if description == "full" else f"You are working with a {parts['name']}."
    rules = parts.get("rules") or ""
    return f"{head}\nRules: {rules}" if rules else head


def _instructions(mode: str, answer_format: str) -> str:
    shape = f'{{"final_answer": ...}} where final_answer is {answer_format}'
    if mode in ("answer-only", "k-shot"):
        return f"Respond with only a JSON object {shape}. Do not explain."
    if mode == "zero-shot-cot":
        return f"Let's think step by step. Then end your response with a JSON object {shape}."
    if mode == "stepwise":
        return ('Respond with a JSON object {"steps": [...], "final_answer": ...}: "steps" lists your work one '
                "string per step (for a sequence of operations: one per operation, with the state after it); "
                f"final_answer is {answer_format}.")
    if mode == "code-allowed":
        return f"You may write Python code and trace it to work this out. End your response with a JSON object {shape}."
    return ('Write a Python program that computes the answer, then give the output it prints. Respond with a '
            f'JSON object {{"code": "<the program>", "final_answer": ...}} where final_answer is {answer_format}.')
