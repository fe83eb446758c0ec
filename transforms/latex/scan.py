"""Small linear scanning helpers shared by the extraction steps: groups, optional arguments, spaces.

Every scan is bounded (`max_len`) so that an unbalanced brace costs a bounded look-ahead, never a
pass over the rest of a 30 MB file.
"""
from __future__ import annotations

import re
from typing import Optional

_SPACES_RE = re.compile(r"[ \t\r\n]*")
_INLINE_SPACES_RE = re.compile(r"[ \t]*(?:\r?\n[ \t]*)?")     # at most one newline: no \par
_GROUP_CHARS = {"{": re.compile(r"\\.|[{}]", re.S), "[": re.compile(r"\\.|[{}\]]", re.S)}

DEFAULT_MAX_GROUP = 20_000


def skip_spaces(text: str, pos: int) -> int:
    return _SPACES_RE.match(text, pos).end()


def skip_inline_spaces(text: str, pos: int) -> int:
    """Spaces and at most one line break: what LaTeX skips before an optional argument."""
    return _INLINE_SPACES_RE.match(text, pos).end()


def group(text: str, pos: int, max_len: int = DEFAULT_MAX_GROUP) -> Optional[tuple[str, int]]:
    """(content, index after) of the `{...}` or `[...]` group starting at text[pos]; braces balanced.

    For `[...]` the closing bracket counts only outside braces, so `[$\\{x\\}$ and {a]b}]` works.
    """
    if pos >= len(text) or text[pos] not in _GROUP_CHARS:
        return None
    opener = text[pos]
    depth = 0
    limit = min(len(text), pos + max_len)
    for m in _GROUP_CHARS[opener].finditer(text, pos + (opener == "["), limit):
        c = m.group()
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth < 0:
                return None
            if opener == "{" and depth == 0:
                return text[pos + 1:m.start()], m.end()
        elif c == "]" and depth == 0:
            return text[pos + 1:m.start()], m.end()
    return None


def mandatory(text: str, pos: int, max_len: int = DEFAULT_MAX_GROUP) -> Optional[tuple[str, int]]:
    """A `{...}` argument after optional spaces (or a single token, as TeX reads `\\cmd x`)."""
    p = skip_spaces(text, pos)
    if p < len(text) and text[p] == "{":
        return group(text, p, max_len)
    return None


def optional(text: str, pos: int, max_len: int = DEFAULT_MAX_GROUP) -> tuple[Optional[str], int]:
    """(content, index after) of a `[...]` argument after spaces, or (None, pos) when absent."""
    p = skip_spaces(text, pos)
    if p < len(text) and text[p] == "[":
        got = group(text, p, max_len)
        if got:
            return got
    return None, pos


def split_top_level(text: str, sep: str = ",") -> list[str]:
    """`text` split at `sep` outside braces (key=value lists)."""
    parts, depth, start = [], 0, 0
    for i, c in enumerate(text):
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        elif c == sep and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


def strip_braces(text: str) -> str:
    text = text.strip()
    while len(text) >= 2 and text[0] == "{" and text[-1] == "}" and group(text, 0) == (text[1:-1], len(text)):
        text = text[1:-1].strip()
    return text
