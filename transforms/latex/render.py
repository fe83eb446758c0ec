"""Plain-text rendering of a statement: prose through pylatexenc, math kept as LaTeX between `$`.

pylatexenc's latex2text is the slow part of extraction, and it has nothing to do for math (which
stays verbatim) or for prose without commands. So the statement is split once into prose and math
pieces, math is swapped for private-use placeholders, and prose with commands goes through a fast
path that renders the common ones itself and hands any other construct (an accent, `\\vdash`, a
`tabular`) to latex2text alone, node by node, instead of the whole prose. Only prose the fast path
cannot vouch for goes through one latex2text call; an exception there falls back to a regex
rendering and is recorded.
"""
from __future__ import annotations

import functools
import logging
import re
import unicodedata
from typing import Optional

from pylatexenc import latex2text, latexwalker
from pylatexenc.latex2text import LatexNodes2Text

from transforms.latex.model import Event
from transforms.latex.references import NO_REFERENCES, References, resolve_references
from transforms.latex.scan import group, skip_spaces

logging.getLogger("pylatexenc").setLevel(logging.CRITICAL)

MATH_ENVS = ("equation", "equation*", "align", "align*", "gather", "gather*", "multline", "multline*",
             "eqnarray", "eqnarray*", "flalign", "flalign*", "alignat", "alignat*", "displaymath", "math",
             "dmath", "dmath*")
# Drawings: their code says nothing in plain text (and is the slowest thing latex2text parses).
DRAWING_ENVS = ("tikzpicture", "tikzcd", "pgfpicture", "picture", "xy", "asy", "circuitikz")
_ALIGNED = {"align", "eqnarray", "flalign", "alignat"}
_GATHERED = {"gather", "multline"}
_OPEN_RE = re.compile(   # one leading `$` or backslash first: the engine then tries few alternatives per character
    r"\$(?P<dd>\$)?|\\(?:(?P<paren>\()|(?P<bracket>\[)|begin\s*\{(?P<env>"
    + "|".join(re.escape(e) for e in MATH_ENVS + DRAWING_ENVS) + r")\}|(?P<escaped>[^A-Za-z]))")
_CLOSE_RE = {
    "d": re.compile(r"(?:[^$\\]++|\\.)*+\$", re.S),
    "dd": re.compile(r"(?:[^$\\]++|\\.|\$(?!\$))*+\$\$", re.S),
    "paren": re.compile(r"(?:[^\\]++|\\[^)])*+\\\)", re.S),
    "bracket": re.compile(r"(?:[^\\]++|\\[^\]])*+\\\]", re.S),
}
_LABEL_RE = re.compile(r"\\label\s*\{[^{}]*\}")
_CONTROL_RE = re.compile(r"[\x00-\x08\x0e-\x1b\x7f]")   # TeX ignores or rejects them; terminals obey them
_OPENLOGIC_RE = re.compile(r"!(!|A)([a-z^]*)\{([^{}]*)\}")
_PLACEHOLDER_RE = re.compile("\ue000(\\d+)\ue001")
_NEEDS_LATEX2TEXT_RE = re.compile(r"[\\{}~&#^_]|--|``|''")
_MATH_REFERENCE_RE = re.compile(r"\\[A-Za-z]*(?:ref|cite)|\\label|\\index")
_FALLBACK_CS_RE = re.compile(r"\\[A-Za-z@]+\*?(?:\s*=\s*-?[\d.]+(?:pt|em|ex|mm|cm|in|bp|sp)?)?|\\.|[{}]")

MAX_LATEX2TEXT_CHARS = 200_000
_converter = LatexNodes2Text(math_mode="verbatim", strict_latex_spaces=False)
_WALKER_CONTEXT = latexwalker.get_default_latex_context_db()   # built once, not on every latex2text call


def _known_to_pylatexenc() -> tuple[frozenset[str], frozenset[str]]:
    """(macro names, environment names) that pylatexenc's parser or latex2text give a meaning."""
    dbs = (_WALKER_CONTEXT, latex2text.get_default_latex_context_db())
    return (frozenset(spec.macroname for db in dbs for spec in db.iter_macro_specs()),
            frozenset(spec.environmentname for db in dbs for spec in db.iter_environment_specs()))


# latex2text prints nothing for a macro or environment delimiter it does not know (an author's
# `\cG`, `\begin{mathpar}`) and renders what follows as ordinary text: the fast path does the same.
_PYLATEXENC_MACROS, _PYLATEXENC_ENVIRONMENTS = _known_to_pylatexenc()

# The prose commands the fast path renders itself, exactly as latex2text does (a test holds the two
# equal); anything else pylatexenc knows goes to latex2text one construct at a time.
_STYLE_COMMANDS = frozenset({"emph", "textbf", "textit", "textsc", "textsl", "textnormal", "textrm",
                             "textsf", "text", "underline"})
_SILENT_COMMANDS = frozenset({"noindent", "par", "newline", "medskip", "bigskip", "smallskip", "qedhere"})
_LIST_ENVS = {"enumerate": "", "itemize": "", "description": "", "center": "\n"}


def _symbols() -> dict[str, str]:
    """Control words latex2text replaces by a fixed string (`\\vdash` -> "\u22a2", `\\oe` -> "\u0153") and
    pylatexenc's parser gives no arguments: the fast path prints that string itself."""
    db = latex2text.get_default_latex_context_db()
    symbols = {}
    for name in {spec.macroname for spec in db.iter_macro_specs() if spec.macroname.isalpha()}:
        replacement, parsed = db.get_macro_spec(name).simplify_repl, _WALKER_CONTEXT.get_macro_spec(name)
        if isinstance(replacement, str) and "%" not in replacement and (parsed is None or not parsed.args_parser.argspec):
            symbols[name] = replacement
    return symbols


_SYMBOL_COMMANDS = _symbols()
_ONE_ARGUMENT_COMMANDS = {"color": "", "vspace": "\n", "hspace": ""}


def _control_symbols() -> dict[str, str]:
    """Control symbols (`\\;` -> " ", `\\{` -> "{") that latex2text replaces by a fixed string and
    pylatexenc's parser gives no arguments, plus `\\%` and `\\\\` (a line break unless `[` or `*` follows)."""
    db = latex2text.get_default_latex_context_db()
    symbols = {}
    for spec in db.iter_macro_specs():
        name, parsed = spec.macroname, _WALKER_CONTEXT.get_macro_spec(spec.macroname)
        if len(name) == 1 and not name.isalpha() and isinstance(spec.simplify_repl, str) and \
                "%" not in spec.simplify_repl and (parsed is None or not parsed.args_parser.argspec):
            symbols[name] = spec.simplify_repl
    return {**symbols, "%": "%", "\\": "\n"}


_CONTROL_SYMBOLS = _control_symbols()
_LIGATURES = {"---": "\u2014", "--": "\u2013", "``": "\u201c", "''": "\u201d", "~": " ", "{": "", "}": "",
              "!`": "\u00a1", "?`": "\u00bf"}
_PLAIN_OPTION_RE = re.compile(r"\[[^\[\]{}\\]*\]")
# Of TeX's special characters, `^`, `_` and `#` are plain characters to pylatexenc's parser (latex2text
# prints them as they are); the others (`&`) go to latex2text.
_SPECIAL_CHARS = "".join(c for c in "^_&#" if _WALKER_CONTEXT.get_specials_spec(c) is not None)
_FAST_TOKEN_RE = re.compile(r"\\([A-Za-z]+)|\\(.)|(---|--|``|''|[!?]`|[{}~])|([" + re.escape(_SPECIAL_CHARS) + r"\\])",
                            re.S)


def normalize_space(text: str) -> str:
    """Control characters dropped, whitespace runs as one space, ends stripped, NFC.

    `str.split()` splits where the regex `\\s` matches (both use Python's Unicode whitespace), 3x
    faster than substituting runs."""
    return unicodedata.normalize("NFC", " ".join(_CONTROL_RE.sub("", text).split()))


def _math_piece(kind: str, content: str, env: Optional[str] = None) -> str:
    """The math as `$...$` or `$$...$$`, labels dropped; its inner whitespace is left to `normalize_space`."""
    if "\\label" in content:
        content = _LABEL_RE.sub("", content)
    content = content.strip()
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


_DELIMITER_WIDTH = {"d": 1, "dd": 2, "paren": 2, "bracket": 2}


def split_math(latex: str) -> tuple[str, list[str]]:
    """(prose with math replaced by placeholders, the math pieces as `$...$` / `$$...$$`)."""
    prose: list[str] = []
    maths: list[str] = []
    pos = 0
    n = len(latex)
    search = _OPEN_RE.search
    while pos < n:
        m = search(latex, pos)
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
            if env in DRAWING_ENVS:
                prose.append(" ")
                pos = after
                continue
            piece = _math_piece("env", latex[m.end():content_end], env)
        else:
            kind = "dd" if m.group("dd") else "d" if m.lastgroup is None else m.lastgroup
            close = _CLOSE_RE[kind].match(latex, m.end())
            if close is None:               # unbalanced: the rest is prose
                prose.append(latex[m.start():])
                pos = n
                break
            piece = _math_piece(kind, latex[m.end():close.end() - _DELIMITER_WIDTH[kind]])
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
    """A rendering that cannot fail: control sequences (with any `=value` assigned) and braces dropped."""
    return _FALLBACK_CS_RE.sub(" ", latex).replace("~", " ")


def fast_prose(prose: str) -> Optional[str]:
    """latex2text's rendering of prose, None when the fast path cannot vouch for it (latex2text renders all)."""
    return _fast_prose(prose)[0]


def fast_path_report(prose: str) -> tuple[Optional[str], list[str]]:
    """(the construct that sends the whole prose to latex2text or None, the constructs handed to it one by one)."""
    delegated: list[str] = []
    return _fast_prose(prose, delegated)[1], delegated


class _Delegate:
    """latex2text on one construct: pylatexenc's parser reads the node starting at a position (a macro with
    its arguments, an environment, a special character) and latex2text renders that node alone. latex2text
    renders a node list as the concatenation of its nodes (with `strict_latex_spaces=False`, i.e. its
    "macros" preset), so this is what latex2text prints for that node inside the whole prose."""

    def __init__(self, prose: str, names: Optional[list[str]]):
        self.prose, self.names, self.walker = prose, names, None

    def __call__(self, start: int, name: str) -> Optional[tuple[str, int]]:
        try:
            if self.walker is None:
                self.walker = latexwalker.LatexWalker(self.prose, latex_context=_WALKER_CONTEXT)
            nodes, at, length = self.walker.get_latex_nodes(pos=start, read_max_nodes=1)
            text = _converter.nodelist_to_text(nodes)
        except Exception:                    # latex2text on the whole prose decides (or fails, recorded)
            return None
        if at + length <= start:             # nothing read (a lone backslash): no progress, no vouching
            return None
        if self.names is not None:
            self.names.append(name)
        return text, at + length


def _fast_prose(prose: str, delegated: Optional[list[str]] = None) -> tuple[Optional[str], Optional[str]]:
    """(latex2text's rendering, None), or (None, the construct neither the fast path nor a one-node
    latex2text call could render)."""
    out: list[str] = []
    pos = 0
    n = len(prose)
    delegate = _Delegate(prose, delegated)
    while True:
        m = _FAST_TOKEN_RE.search(prose, pos)
        if not m:
            break
        out.append(prose[pos:m.start()])
        pos = m.end()
        word, symbol, ligature = m.group(1), m.group(2), m.group(3)
        obstacle = None
        if ligature is not None:
            out.append(_LIGATURES[ligature])
            continue
        if symbol is not None:
            if symbol in _CONTROL_SYMBOLS and not (symbol == "\\" and prose.startswith(("[", "*"), pos)):
                out.append(_CONTROL_SYMBOLS[symbol])
                continue
            obstacle = "\\" + symbol
        elif word is None:
            obstacle = m.group(4)
        elif word not in _PYLATEXENC_MACROS and word not in ("begin", "end"):
            pos = skip_spaces(prose, pos)          # TeX: spaces after a control word are skipped
            continue
        elif pos < n and prose[pos] == "*":
            obstacle = f"\\{word}*"
        else:
            pos = skip_spaces(prose, pos)
            obstacle, pos = _fast_command(prose, word, pos, out)
        if obstacle is not None:
            got = delegate(m.start(), obstacle)
            if got is None:
                return None, obstacle
            out.append(got[0])
            pos = got[1]
    out.append(prose[pos:])
    return "".join(out), None


def _fast_command(prose: str, word: str, pos: int, out: list[str]) -> tuple[Optional[str], int]:
    """(None, where it ends) after rendering a command pylatexenc knows into `out`; (what it is, pos)
    when the fast path does not render it itself."""
    if word in _STYLE_COMMANDS or word in _SILENT_COMMANDS:
        return None, pos
    if word in _SYMBOL_COMMANDS:
        out.append(_SYMBOL_COMMANDS[word])
        return None, pos
    if word == "item":
        if prose.startswith("[", skip_spaces(prose, pos)):
            return "\\item[]", pos
        out.append("\n  * ")
        return None, pos
    if word in ("begin", "end"):
        got = group(prose, pos, 100) if prose.startswith("{", pos) else None
        if got is None:
            return f"\\{word}", pos
        env = got[0]
        if env not in _PYLATEXENC_ENVIRONMENTS:
            return None, got[1]
        if env not in _LIST_ENVS:
            return f"\\{word}{{{env}}}", pos
        pos = got[1]
        if word == "begin" and env != "center" and prose.startswith("[", pos):
            option = _PLAIN_OPTION_RE.match(prose, pos)    # `[(a)]`; anything nested: latex2text decides
            if option is None:
                return f"\\begin{{{env}}}[...]", pos
            pos = option.end()
        out.append(_LIST_ENVS[env] if word == "end" or env == "center" else "")
        return None, pos
    if word == "footnote":                       # latex2text prints its text in brackets
        got = group(prose, pos, len(prose)) if prose.startswith("{", pos) else None
        inner = _fast_prose(got[0])[0] if got is not None else None
        if inner is None:
            return "\\footnote", pos
        out.append(f"[{inner}]")
        return None, got[1]
    if word in _ONE_ARGUMENT_COMMANDS:
        got = group(prose, pos, 500) if prose.startswith("{", pos) else None
        if got is None:
            return f"\\{word}", pos
        out.append(_ONE_ARGUMENT_COMMANDS[word])
        return None, got[1]
    return f"\\{word}", pos


@functools.lru_cache(maxsize=64)
def _label_re(names: frozenset[str]) -> re.Pattern:
    return re.compile(r"\\(?:" + "|".join(sorted(map(re.escape, names))) + r")(?![A-Za-z@])\s*\{[^{}]*\}")


def render_text(latex: str, location: str = "", label_macros: frozenset[str] = frozenset(),
                references: References = NO_REFERENCES) -> tuple[str, list[Event]]:
    """(plain text, events): prose rendered, math verbatim between `$`, whitespace and NFC normalized.

    `label_macros` are author commands that set labels (`\\ollabel{...}`): dropped like `\\label`.
    References and citations print as the PDF prints them with `references` (`??` for unknown labels).
    """
    events: list[Event] = []
    if label_macros and "\\" in latex:
        latex = _label_re(label_macros).sub("", latex)
    prose, maths = split_math(openlogic_readable(latex))

    def verbatim(text: str) -> str:
        maths.append(text)
        return f"\ue000{len(maths) - 1}\ue001"

    prose = resolve_references(prose, references, verbatim)
    maths = [resolve_references(m, references, str, math=True) if _MATH_REFERENCE_RE.search(m) else m for m in maths]
    fast = fast_prose(prose) if _NEEDS_LATEX2TEXT_RE.search(prose) else prose
    if fast is not None:
        prose = fast
    elif len(prose) > MAX_LATEX2TEXT_CHARS:     # latex2text takes seconds per 100 kB: keep the budget
        events.append(Event("render", "too-large-for-latex2text",
                            f"{len(prose)} characters of prose; regex rendering used", location))
        prose = fallback_text(prose)
    else:
        try:
            prose = _converter.latex_to_text(prose, latex_context=_WALKER_CONTEXT)
        except Exception as exc:         # pylatexenc raises IndexError & co. on real input
            events.append(Event("render", type(exc).__name__, f"latex2text failed, regex fallback used: {exc}"[:500],
                                location))
            prose = fallback_text(prose)
    if maths:                # split, not sub with a callback: one list comprehension instead of a call a piece
        parts = _PLACEHOLDER_RE.split(prose)
        parts[1::2] = [maths[int(i)] if int(i) < len(maths) else "" for i in parts[1::2]]
        prose = "".join(parts)
    return normalize_space(prose), events
