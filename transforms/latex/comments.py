"""Comment removal that keeps every newline, so line numbers still point into the original file.

Three kinds: an unescaped `%` to the end of its line, `comment`-like environments, and
`\\iffalse ... \\fi` (nested conditionals counted). All scans are linear: possessive repeats over an
unambiguous alternation, and plain `str.find` for environment ends.
"""
from __future__ import annotations

import re
from typing import Iterable

from transforms.latex.scan import escaped

_CONDITIONAL_RE = re.compile(r"\\(?:(iffalse)|(if[A-Za-z@]*)|(else)|(fi))(?![A-Za-z@])")
_NEWIF_RE = re.compile(r"\\newif\s*\\(if[A-Za-z@]+)")
# `\let\ifdraft\iffalse` copies a conditional: neither token after `\let` (nor the name after `\newif`) opens one.
_LET_IF_RE = re.compile(r"\\let\s*\\(if[A-Za-z@]+)\s*=?\s*\\if(?:true|false)(?![A-Za-z@])")
_NAMED_BEFORE_RE = re.compile(
    r"\\(?:let|newif)\s*(?:(?:\\[A-Za-z@]+|\\csname\s*[A-Za-z@]+\s*\\endcsname)\s*=?\s*)?\Z")
_LOOKBEHIND = 80
# TeX's conditionals (and the usual \newif ones); etoolbox's \ifdefempty{..}{..}{..} and ifthen's
# \ifthenelse take arguments instead and have no \fi, so they must not count as nesting.
PRIMITIVE_CONDITIONALS = frozenset({
    "if", "ifcat", "ifnum", "ifdim", "ifodd", "ifvmode", "ifhmode", "ifmmode", "ifinner", "ifvoid",
    "ifhbox", "ifvbox", "ifx", "ifeof", "iftrue", "iffalse", "ifcase", "ifdefined", "ifcsname",
    "iffontchar", "ifincsname", "ifpdf", "ifxetex", "ifluatex", "ifdraft", "ifpdfprimitive",
})
_IFFALSE = "\\iffalse"

DEFAULT_COMMENT_ENVS = frozenset({"comment"})


def blank_keeping_lines(text: str) -> str:
    """The newlines of `text` only: what replaces removed source so that lines stay aligned."""
    return "\n" * text.count("\n")


def strip_line_comments(text: str) -> str:
    """`text` without `%` comments; the newline ending a commented line stays.

    A `%` starts a comment unless an odd run of backslashes comes just before it (`\\%` is escaped,
    `\\\\%` is a line break then a comment): only the `%` signs are visited, with `str.find`.
    """
    find = text.find
    percent = find("%")
    if percent < 0:
        return text
    out: list[str] = []
    pos = 0
    while percent >= 0:
        if escaped(text, percent, pos):
            percent = find("%", percent + 1)
            continue
        out.append(text[pos:percent])
        pos = find("\n", percent)
        if pos < 0:
            return "".join(out)
        percent = find("%", pos)
    out.append(text[pos:])
    return "".join(out)


def strip_comment_environments(text: str, names: Iterable[str] = DEFAULT_COMMENT_ENVS) -> str:
    """`text` with `\\begin{X}...\\end{X}` removed for every comment-like environment X.

    An unclosed one runs to the end of the text, as the comment package does.
    """
    names = sorted(set(names))
    if not names or "\\begin" not in text:
        return text
    begin_re = re.compile(r"\\begin\s*\{(" + "|".join(re.escape(n) for n in names) + r")\}")
    out: list[str] = []
    pos = 0
    while True:
        m = begin_re.search(text, pos)
        if not m:
            break
        end_tag = "\\end{" + m.group(1) + "}"
        end = text.find(end_tag, m.end())
        stop = len(text) if end < 0 else end + len(end_tag)
        out.append(text[pos:m.start()])
        out.append(blank_keeping_lines(text[m.start():stop]))
        pos = stop
    out.append(text[pos:])
    return "".join(out)


def strip_iffalse(text: str) -> str:
    """`text` with `\\iffalse` branches removed up to their `\\else` or matching `\\fi`; an `\\iffalse` that
    `\\let` copies (`\\let\\ifdraft\\iffalse`) opens nothing."""
    if _IFFALSE not in text:
        return text
    conditionals = (PRIMITIVE_CONDITIONALS | {m.group(1) for m in _NEWIF_RE.finditer(text)}
                    | {m.group(1) for m in _LET_IF_RE.finditer(text)})

    def named(at: int) -> bool:
        """Whether the conditional at `at` is only named (`\\let\\ifdraft\\iffalse`), not run."""
        return bool(_NAMED_BEFORE_RE.search(text, max(at - _LOOKBEHIND, 0), at))
    out: list[str] = []
    pos = 0
    while True:
        start = text.find(_IFFALSE, pos)
        if start < 0:
            break
        m0 = _CONDITIONAL_RE.match(text, start)
        if not m0.group(1) or named(start):   # e.g. \iffalsefoo, \let\iffoo\iffalse
            out.append(text[pos:start + len(_IFFALSE)])
            pos = start + len(_IFFALSE)
            continue
        depth = 1
        stop = len(text)
        for m in _CONDITIONAL_RE.finditer(text, m0.end()):
            if (m.group(1) or (m.group(2) and m.group(2) in conditionals)) and not named(m.start()):
                depth += 1
            elif m.group(4):
                depth -= 1
                if depth == 0:
                    stop = m.end()
                    break
            elif m.group(3) and depth == 1:   # \else of our \iffalse: the rest is live
                stop = m.end()
                break
        out.append(text[pos:start])
        out.append(blank_keeping_lines(text[start:stop]))
        pos = stop
    out.append(text[pos:])
    return "".join(out)


def strip_comments(text: str, comment_envs: Iterable[str] = DEFAULT_COMMENT_ENVS) -> str:
    """All three kinds of comment removed; the result has exactly as many lines as `text`."""
    return strip_iffalse(strip_comment_environments(strip_line_comments(text), comment_envs))
