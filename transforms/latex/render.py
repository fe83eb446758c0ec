"""Plain-text rendering of a statement: prose through pylatexenc, math kept as LaTeX between `$`.

pylatexenc's latex2text is the slow part of extraction, and it has nothing to do for math (which
stays verbatim) or for prose without commands. So the statement is split once into prose and math
pieces, math is swapped for private-use placeholders, and only prose that has commands goes
through one latex2text call. Any exception there falls back to a regex rendering and is recorded.
"""
from __future__ import annotations

import logging
import re
import unicodedata
from typing import Optional

from pylatexenc.latex2text import LatexNodes2Text

from transforms.latex.model import Event

logging.getLogger("pylatexenc").setLevel(logging.CRITICAL)

MATH_ENVS = ("equation", "equation*", "align", "align*", "gather", "gather*", "multline", "multline*",
             "eqnarray", "eqnarray*", "flalign", "flalign*", "alignat", "alignat*", "displaymath", "math",
             "dmath", "dmath*")
_ALIGNED = {"align", "eqnarray", "flalign", "alignat"}
_GATHERED = {"gather", "multline"}
_OPEN_RE = re.compile(
    r"(?P<paren>\\\()|(?P<bracket>\\\[)|(?P<escaped>\\[^A-Za-z])|(?P<dd>\$\$)|(?P<d>\$)"
    r"|\\begin\s*\{(?P<env>" + "|".join(re.escape(e) for e in MATH_ENVS) + r")\}")
_CLOSE_RE = {
    "d": re.compile(r"(?:[^$\\]++|\\.)*+\$", re.S),
    "dd": re.compile(r"(?:[^$\\]++|\\.|\$(?!\$))*+\$\$", re.S),
    "paren": re.compile(r"(?:[^\\]++|\\[^)])*+\\\)", re.S),
    "bracket": re.compile(r"(?:[^\\]++|\\[^\]])*+\\\]", re.S),
}
_LABEL_RE = re.compile(r"\\label\s*\{[^{}]*\}")
_SPACE_RE = re.compile(r"\s+")
_OPENLOGIC_RE = re.compile(r"!(!|A)([a-z^]*)\{([^{}]*)\}")
_PLACEHOLDER_RE = re.compile("\ue000(\\d+)\ue001")
_NEEDS_LATEX2TEXT_RE = re.compile(r"[\\{}~&#^_]|--|``|''")
_FALLBACK_CS_RE = re.compile(r"\\[A-Za-z@]+\*?|\\.|[{}]")

_converter = LatexNodes2Text(math_mode="verbatim", strict_latex_spaces=False)


def normalize_space(text: str) -> str:
    return unicodedata.normalize("NFC", _SPACE_RE.sub(" ", text).strip())


def _math_piece(kind: str, content: str, env: Optional[str] = None) -> str:
    content = _SPACE_RE.sub(" ", _LABEL_RE.sub("", content)).strip()
    if kind in ("d", "paren"):
        return f"${content}$"
    if env:
        base = env.rstrip("*")
        if base in _ALIGNED:
            content = "\\begin{aligned}" + content + "\\end{aligned}"
        elif base in _GATHERED:
            content = "\\begin{gathered}" + content + "\\end{gathered}"
        elif base == "math":
            return f"${content}$"
    return f"$${content}$$"


def split_math(latex: str) -> tuple[str, list[str]]:
    """(prose with math replaced by placeholders, the math pieces as `$...$` / `$$...$$`)."""
    prose: list[str] = []
    maths: list[str] = []
    pos = 0
    n = len(latex)
    while pos < n:
        m = _OPEN_RE.search(latex, pos)
        if not m:
            break
        if m.group("escaped"):
            prose.append(latex[pos:m.end()])
            pos = m.end()
            continue
        prose.append(latex[pos:m.start()])
        env = m.group("env")
        if env:
            end_tag = "\\end{" + env + "}"
            stop = latex.find(end_tag, m.end())
            content_end, after = (n, n) if stop < 0 else (stop, stop + len(end_tag))
            piece = _math_piece("env", latex[m.end():content_end], env)
        else:
            kind = m.lastgroup
            close = _CLOSE_RE[kind].match(latex, m.end())
            if close is None:               # unbalanced: the rest is prose
                prose.append(latex[m.start():])
                pos = n
                break
            width = {"d": 1, "dd": 2, "paren": 2, "bracket": 2}[kind]
            piece = _math_piece(kind, latex[m.end():close.end() - width])
            after = close.end()
        prose.append(f" \ue000{len(maths)}\ue001 " if piece.startswith("$$") else f"\ue000{len(maths)}\ue001")
        maths.append(piece)
        pos = after
    prose.append(latex[pos:])
    return "".join(prose), maths


def openlogic_readable(text: str) -> str:
    """Open Logic's `!!{formula}`, `!!a{formula}`, `!A{formula}`, `!!^{formula}` as words."""
    def word(m: re.Match) -> str:
        mark, flags, noun = m.groups()
        article = "A " if mark == "A" else ("a " if "a" in flags else "")
        return article + noun + ("s" if "^" in flags else "")
    return _OPENLOGIC_RE.sub(word, text) if "!" in text else text


def fallback_text(latex: str) -> str:
    """A rendering that cannot fail: control sequences and braces dropped."""
    return _FALLBACK_CS_RE.sub(" ", latex).replace("~", " ")


def render_text(latex: str, location: str = "") -> tuple[str, list[Event]]:
    """(plain text, events): prose rendered, math verbatim between `$`, whitespace and NFC normalized."""
    events: list[Event] = []
    prose, maths = split_math(openlogic_readable(latex))
    if _NEEDS_LATEX2TEXT_RE.search(prose):
        try:
            prose = _converter.latex_to_text(prose)
        except Exception as exc:         # pylatexenc raises IndexError & co. on real input
            events.append(Event("render", type(exc).__name__, f"latex2text failed, regex fallback used: {exc}"[:500],
                                location))
            prose = fallback_text(prose)
    if maths:
        prose = _PLACEHOLDER_RE.sub(lambda m: maths[int(m.group(1))] if int(m.group(1)) < len(maths) else "",
                                    prose)
    return normalize_space(prose), events
