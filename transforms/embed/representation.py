"""The text a statement's `embedding` encodes: its "representation", one of a few named templates.

`plain` is the description, else the statement text. `context-v1` (the default) adds what a reader
sees around the statement, so that queries naming the book, the chapter or the result match:

    {paper title} > {section path, outermost first, joined by " > "} | {display name} {number} ({title}): {body}

Empty parts are left out with their separators; `body` is the description, or the statement text
when the description is the offline `text` describer's (`Title: text`, the title already being in
the heading). `blend-v1` embeds both texts and stores their weighted, normalized sum: the context
vector carries the section and paper, the plain one keeps the statement's own words from being
outweighed by them. The template's name is recorded in the manifest's "embedding" section.
"""
from __future__ import annotations

from typing import Any, Mapping, Optional, Sequence

import numpy as np

from transforms.describe.records import PAPER_TITLE_KEY, normalize_space
from transforms.describe.text import text_description

PLAIN = "plain"
CONTEXT = "context-v1"
BLEND = "blend-v1"
TEMPLATES = (PLAIN, CONTEXT, BLEND)
DEFAULT_TEMPLATE = CONTEXT
# Embedded one by one; the statement's vector is their weighted sum, normalized (weights chosen on the
# tuning sets of retrieval/evalsets: results-2026-12-05-blend.md).
COMPONENTS = {BLEND: (PLAIN, CONTEXT)}
COMPONENT_WEIGHTS = {BLEND: (0.2, 0.8)}
TEMPLATE_TEXT = {     # recorded in the manifest's "embedding" section
    PLAIN: "description, else statement_text",
    CONTEXT: "{paper title} > {section path} | {display name} {number} ({title}): {description, "
             "else statement_text; statement_text for the text describer}",
}
TEMPLATE_TEXT[BLEND] = (f"normalized sum of 0.2 x the {PLAIN} vector ({TEMPLATE_TEXT[PLAIN]}) and 0.8 x the "
                        f"{CONTEXT} vector ({TEMPLATE_TEXT[CONTEXT]})")


def plain_text(row: Mapping[str, Any]) -> str:
    """The description, else the statement text."""
    return (row.get("description") or row.get("statement_text") or "").strip()


def context_text(row: Mapping[str, Any], paper_title: Optional[str] = None) -> str:
    """`context-v1`: paper title, section path and heading before the body; "" without any body."""
    description = normalize_space(row.get("description"))
    body = description if description and description != text_description(row) else normalize_space(
        row.get("statement_text")) or description
    if not body:
        return ""
    place = " > ".join(p for p in [normalize_space(paper_title or row.get(PAPER_TITLE_KEY)),
                                   *(normalize_space(s) for s in row.get("section_path") or [])] if p)
    name = " ".join(p for p in (normalize_space(row.get("display_name")), normalize_space(row.get("number"))) if p)
    title = normalize_space(row.get("title"))
    heading = f"{name} ({title})" if name and title else name or title
    head = " | ".join(p for p in (place, heading) if p)
    return f"{head}: {body}" if head else body


def component_texts(row: Mapping[str, Any], template: str = PLAIN) -> list[str]:
    """The texts embedded for a statement: one, or one per component of a summed template; [] without any body."""
    texts = [representation_text(row, t) for t in COMPONENTS.get(template, (template,))]
    return texts if all(texts) else []


def combine(vectors: Sequence[np.ndarray], weights: Optional[Sequence[float]] = None) -> np.ndarray:
    """The unit-length (weighted) sum of the components' vectors, each of them normalized first."""
    total = sum(w * v / np.maximum(np.linalg.norm(v, axis=-1, keepdims=True), 1e-12)
                for v, w in zip(vectors, weights or [1.0] * len(vectors)))
    return (total / np.maximum(np.linalg.norm(total, axis=-1, keepdims=True), 1e-12)).astype(np.float32)


def representation_text(row: Mapping[str, Any], template: str = PLAIN, paper_title: Optional[str] = None) -> str:
    if template == PLAIN:
        return plain_text(row)
    if template == CONTEXT:
        return context_text(row, paper_title)
    raise ValueError(f"--embed-template: choose one of {', '.join(TEMPLATES)}")
