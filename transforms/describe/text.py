"""The offline `text` describer: the statement's own plain-text rendering, no LLM.

Faithful by construction (nothing is invented); the title, when the author gave one, leads,
because that is how people search for named results.
"""
from __future__ import annotations

from typing import Any, Mapping, Optional

from transforms.describe.records import normalize_space

TEXT_MODEL = "text"
TEXT_TEMPLATE = "text-v1"


def text_description(row: Mapping[str, Any]) -> Optional[str]:
    """`Title: statement text`, or the statement text alone; None when there is no text at all."""
    text = normalize_space(row.get("statement_text")) or normalize_space(row.get("statement_latex"))
    if not text:
        return None
    title = normalize_space(row.get("title"))
    return f"{title}: {text}" if title else text
