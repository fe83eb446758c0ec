"""Versioned prompt templates (`templates/<id>.txt`) and the chat messages built from them.

A template id such as `slogan-v1` is stored on every described row and is part of the cache key, so
changing a prompt means adding a new file with a new id, never editing an old one.
"""
from __future__ import annotations

import dataclasses
import functools
import pathlib
import string
from typing import Optional

TEMPLATE_DIR = pathlib.Path(__file__).with_name("templates")
DEFAULT_TEMPLATE = "slogan-v1"
CONTEXTS = ("body", "body+abstract", "body+intro", "body+deps")
_CONTEXT_HEADERS = {
    "body+abstract": "For context, the abstract of the paper it comes from:",
    "body+intro": "For context, the introduction of the paper it comes from:",
    "body+deps": "For context, the statements of the same paper it uses:",
}


@dataclasses.dataclass(frozen=True)
class PromptTemplate:
    id: str
    system: str
    user: str
    stricter: str


def available_templates() -> list[str]:
    return sorted(p.stem for p in TEMPLATE_DIR.glob("*.txt"))


@functools.lru_cache(maxsize=None)
def load_template(template_id: str) -> PromptTemplate:
    """Parse `templates/<id>.txt`: `[system]`, `[user]` and `[stricter]` sections; `#` lines are comments."""
    path = TEMPLATE_DIR / f"{template_id}.txt"
    if not path.is_file():
        raise ValueError(f"unknown describe template {template_id!r}; available: {', '.join(available_templates())}")
    sections: dict[str, list[str]] = {}
    current: Optional[str] = None
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            continue
        stripped = line.strip()
        if stripped.startswith("[") and stripped.endswith("]") and stripped[1:-1] in ("system", "user", "stricter"):
            current = stripped[1:-1]
            sections[current] = []
        elif current is not None:
            sections[current].append(line)
    missing = {"system", "user", "stricter"} - set(sections)
    if missing:
        raise ValueError(f"template {path} lacks sections {sorted(missing)}")
    text = {name: "\n".join(lines).strip() for name, lines in sections.items()}
    return PromptTemplate(id=template_id, system=text["system"], user=text["user"], stricter=text["stricter"])


def context_block(context: str, context_text: Optional[str]) -> str:
    """The context paragraph placed before the instruction ("" for `body`)."""
    if context == "body" or not context_text:
        return ""
    return f"{_CONTEXT_HEADERS[context]}\n{context_text.strip()}\n\n"


def first_messages(template: PromptTemplate, heading: str, statement: str, context: str,
                   context_text: Optional[str]) -> list[dict]:
    user = string.Template(template.user).substitute(
        statement=statement, heading=heading, context=context_block(context, context_text))
    return [{"role": "system", "content": template.system}, {"role": "user", "content": user}]


def stricter_messages(template: PromptTemplate, messages: list[dict], rejected_answer: str, reason: str) -> list[dict]:
    """The conversation continued with the rejected answer and the stricter instruction."""
    return messages + [
        {"role": "assistant", "content": rejected_answer},
        {"role": "user", "content": string.Template(template.stricter).substitute(reason=reason)},
    ]
