"""The token reader every extraction step uses: control sequences, groups, arguments, spaces.

TeX's arguments come in three shapes: a `{...}` group (or `[...]` optional group), a single token
(`\\cmd x` takes `x`), and, for `\\def` with delimited parameters, everything up to a delimiter at
brace depth 0. All three rest on one brace-balancing scan (`_balanced_stop`), a linear regex walk,
so no input can make a reader backtrack. Scans that look ahead for a closing brace are bounded
(`max_len`) where an unbalanced brace would otherwise cost a pass over the rest of a 30 MB file.
"""
from __future__ import annotations

import functools
import re
from typing import Callable, Optional

_SPACES_RE = re.compile(r"[ \t\r\n]*")
_INLINE_SPACES_RE = re.compile(r"[ \t]*(?:\r?\n[ \t]*)?")     # at most one newline: no \par
_GROUP_CHARS = {"{": re.compile(r"\\.|[{}]", re.S), "[": re.compile(r"\\.|[{}\]]", re.S)}
CONTROL_SEQUENCE_RE = re.compile(r"\\([A-Za-z@]+|.)", re.S)      # group(1): the name, without backslash

DEFAULT_MAX_GROUP = 20_000


def is_letter(c: str) -> bool:
    """Whether `c` may continue a control word (`\\name`): a letter or `@`."""
    return ("a" <= c <= "z") or ("A" <= c <= "Z") or c == "@"


def escaped(text: str, pos: int, floor: int = 0) -> bool:
    """Whether the character at `pos` follows an odd run of backslashes, counted back no further than
    `floor` (`\\{` is no brace, `\\%` no comment, `\\\\%` a line break then a comment)."""
    start = pos
    while start > floor and text[start - 1] == "\\":
        start -= 1
    return (pos - start) % 2 == 1


def skip_spaces(text: str, pos: int) -> int:
    return _SPACES_RE.match(text, pos).end()


def skip_inline_spaces(text: str, pos: int) -> int:
    """Spaces and at most one line break: what LaTeX skips before an optional argument."""
    return _INLINE_SPACES_RE.match(text, pos).end()


def each_command(text: str, pattern: re.Pattern, read: Callable[[re.Match], int]) -> None:
    """Call `read` on each match of `pattern` (a command) in order; `read` returns where the command's
    arguments end, and the search resumes there, so text just read as an argument is not searched."""
    pos = 0
    while True:
        m = pattern.search(text, pos)
        if not m:
            return
        pos = max(read(m), m.end())


def _balanced_stop(text: str, start: int, end: int, tokens: re.Pattern, brace_closes: bool) -> Optional[re.Match]:
    """The first stop token at brace depth 0 in text[start:end]: a non-brace token of `tokens`, or,
    when `brace_closes`, the `}` that closes the group `start` is in.

    Escaped characters (`\\{`) are skipped. None when no stop comes, or when a `}` closes the
    enclosing group first (an argument never runs past its own group).
    """
    depth = 0
    for m in tokens.finditer(text, start, end):
        c = m.group()
        if c == "{":
            depth += 1
        elif c == "}":
            if depth == 0:
                return m if brace_closes else None
            depth -= 1
        elif depth == 0 and c[0] != "\\":
            return m
    return None


def group(text: str, pos: int, max_len: int = DEFAULT_MAX_GROUP) -> Optional[tuple[str, int]]:
    """(content, index after) of the `{...}` or `[...]` group starting at text[pos]; braces balanced.

    For `[...]` the closing bracket counts only outside braces, so `[$\\{x\\}$ and {a]b}]` works.
    """
    if pos >= len(text) or text[pos] not in _GROUP_CHARS:
        return None
    opener = text[pos]
    end = min(len(text), pos + max_len)
    closer = "}" if opener == "{" else "]"
    close = text.find(closer, pos + 1, end)
    if close < 0:                       # only that character can end the group
        return None
    if text.find("\\", pos + 1, close) < 0 and text.find("{", pos + 1, close) < 0 and (
            opener == "{" or text.find("}", pos + 1, close) < 0):
        return text[pos + 1:close], close + 1      # nothing nested or escaped before it: no scan
    stop = _balanced_stop(text, pos + 1, end, _GROUP_CHARS[opener], opener == "{")
    return None if stop is None else (text[pos + 1:stop.start()], stop.end())


def group_end(text: str, start: int) -> int:
    """Index just after the `{...}` (or `[...]`) group opening at `start`; -1 if unbalanced (unbounded)."""
    found = group(text, start, max_len=len(text))
    return found[1] if found else -1


def undelimited_argument(text: str, pos: int) -> Optional[tuple[str, int]]:
    """An undelimited TeX argument at `pos` (spaces skipped): a group's content or one token."""
    pos = skip_spaces(text, pos)
    if pos >= len(text):
        return None
    c = text[pos]
    if c == "{":
        end = group_end(text, pos)
        return None if end < 0 else (text[pos + 1:end - 1], end)
    if c == "}":
        return None
    if c == "\\":
        m = CONTROL_SEQUENCE_RE.match(text, pos)
        return (m.group(), m.end()) if m else None
    return c, pos + 1


def delimited_argument(text: str, pos: int, delimiter: str) -> Optional[tuple[str, int]]:
    """A `\\def` argument ending at `delimiter` at brace depth 0; one outer brace pair removed."""
    stop = _balanced_stop(text, pos, len(text), _delimiter_tokens(delimiter), False)
    if stop is None:
        return None
    arg = text[pos:stop.start()]
    if arg.startswith("{") and group_end(arg, 0) == len(arg):
        arg = arg[1:-1]
    return arg, stop.end()


@functools.lru_cache(maxsize=256)
def _delimiter_tokens(delimiter: str) -> re.Pattern:
    return re.compile(r"\\.|[{}]|" + re.escape(delimiter), re.S)


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
    parts, start = [], 0
    tokens = _delimiter_tokens(sep)
    while True:
        stop = _balanced_stop(text, start, len(text), tokens, False)
        if stop is None:
            break
        parts.append(text[start:stop.start()])
        start = stop.end()
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


def strip_braces(text: str) -> str:
    text = text.strip()
    while len(text) >= 2 and text[0] == "{" and text[-1] == "}" and group(text, 0) == (text[1:-1], len(text)):
        text = text[1:-1].strip()
    return text
