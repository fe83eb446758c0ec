"""What a description is keyed by, what is asked for, and what comes back: plain data, no Beam.

A description is a function of (normalized statement, context, template, model), so that is the
cache key; rows with the same key are described once and all receive the answer.
"""
from __future__ import annotations

import dataclasses
import hashlib
import unicodedata
from typing import Any, Mapping, Optional

NAMESPACE = "thmforge.describe"   # the describe stage's Beam metrics

ABSTRACT_KEY = "_abstract"           # transient row keys the corpus pipeline may set; dropped on output
INTRODUCTION_KEY = "_introduction"
DEPENDENCIES_KEY = "_dependencies"   # the text of the statements of the same document a statement uses
TRANSIENT_KEYS = (ABSTRACT_KEY, INTRODUCTION_KEY, DEPENDENCIES_KEY)
PAPER_TITLE_KEY = "_paper_title"     # read by the embed stage's context template; not a theorems column
STAGE = "describe"


def normalize_space(text: Optional[str]) -> str:
    return " ".join(unicodedata.normalize("NFC", text or "").split())


def statement_body(row: Mapping[str, Any]) -> str:
    """The statement as the describer sees it: macro-expanded LaTeX, else raw LaTeX, else the text."""
    for column in ("statement_latex", "statement_latex_raw", "statement_text"):
        body = normalize_space(row.get(column))
        if body:
            return body
    return ""


def statement_heading(row: Mapping[str, Any]) -> str:
    """'theorem (Bolzano-Weierstrass)': what kind of statement it is, with its title if any."""
    kind = (row.get("kind") or "statement").lower()
    kind = "statement" if kind == "other" else kind
    title = normalize_space(row.get("title"))
    return f"{kind} ({title})" if title else kind


def statement_hash(row: Mapping[str, Any]) -> str:
    """Content hash of the normalized statement (heading and body): the same text hashes the same anywhere."""
    text = f"{statement_heading(row)}\x00{statement_body(row)}"
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def description_key(statement_digest: str, context: str, template: str, model: str) -> str:
    return hashlib.sha256("\x00".join((statement_digest, context, template, model)).encode()).hexdigest()[:32]


def effective_context(requested: str, row: Mapping[str, Any], max_chars: int) -> tuple[str, Optional[str]]:
    """The context variant actually available for a row, and its text (falls back to `body`)."""
    source = {"body+abstract": ABSTRACT_KEY, "body+intro": INTRODUCTION_KEY,
              "body+deps": DEPENDENCIES_KEY}.get(requested)
    text = normalize_space(row.get(source)) if source else ""
    if not text:
        return "body", None
    return requested, text[:max_chars]


def output_row(row: Mapping[str, Any], **updates: Any) -> dict:
    """The row without transient keys, with the description columns set."""
    out = {k: v for k, v in row.items() if k not in TRANSIENT_KEYS}
    out.update(updates)
    return out


def failure_record(row: Mapping[str, Any], error_class: str, message: str, stage: str = STAGE) -> dict:
    """A `schemas.FAILURES` row for one statement (non-fatal: the statement row is kept), in the
    statement's input (its bundle names the failures file it lands in)."""
    return {
        "paper_id": row.get("paper_id"), "theorem_id": row.get("theorem_id"), "stage": stage,
        "error_class": error_class, "message": message,
        "location": f"{row.get('file') or ''}:{row.get('line') or ''}".strip(":"), "fatal": False,
        "bundle": row.get("bundle"),
    }


@dataclasses.dataclass(frozen=True)
class DescribeRequest:
    """One description to obtain, with the rows waiting for it."""

    key: str
    statement_hash: str
    heading: str
    statement: str
    context: str
    context_text: Optional[str]
    rows: tuple[dict, ...] = ()


@dataclasses.dataclass(frozen=True)
class DescribeOutcome:
    """The final answer for a request: a description, or why there is none."""

    key: str
    description: Optional[str]
    input_tokens: int = 0
    output_tokens: int = 0
    requests: int = 0                 # HTTP requests made (all attempts)
    rejected_answers: int = 0         # answers that failed validation
    throttled: int = 0                # attempts delayed by client-side throttling
    error_class: Optional[str] = None
    message: Optional[str] = None
