"""Counters: the number the compiled PDF prints for each theorem-like statement.

A small model of LaTeX's counter machinery, fed with the events of the flattened body in document
order. Counters hold values in registers (two counters share a register after
`\\let\\c@equation\\c@thm` or `\\newaliascnt`), each counter has a reset list (`within`,
`\\numberwithin`, `\\@addtoreset`) and a `\\the<counter>` format (`\\thesection.\\arabic{theorem}`,
`\\Alph{chapter}` after `\\appendix`, or an author's `\\renewcommand{\\thetheorem}{...}`).
Stepping a counter clears the counters in its reset list, as `\\stepcounter` does.

The body may redefine a format (`\\renewcommand{\\thetheorem}{...}`, `\\def\\thelemma{...}`): it counts from
there on, to the end of its group or environment (`\\gdef` and `\\global`: to the end of the document).
`\\edef`/`\\xdef` of the body freeze what they read as it is at the definition (`freeze`): counter values and
formats, macros frozen before, `\\noexpand\\x` kept as `\\x`; a frozen macro then prints its value in a
format, in `\\setcounter{c}{\\saved}`, in the statements after it and in the rest of the statement that
defines it. A preamble's (or a class's) `\\edef` of a format is expanded the same way where it stands, so
`\\expandafter\\noexpand\\thesection` keeps the first token of `\\thesection`'s one-level expansion live and
freezes the rest, as TeX does. A reference in a format (`\\ref`, `\\cref`, `\\autoref`, `\\nameref`) prints
what it prints in the text (`references.py`), once every label is known.
"""
from __future__ import annotations

import dataclasses
import functools
import re
from typing import Mapping, Optional

from transforms.latex.definitions import MacroDef
from transforms.latex.model import DocEvent, EnvSpec, LabelTarget
from transforms.latex.references import NO_REFERENCES, UNKNOWN, References, print_reference
from transforms.latex.scan import group_end, skip_spaces

SECTION_LEVELS = {"part": -1, "chapter": 0, "section": 1, "subsection": 2, "subsubsection": 3,
                  "paragraph": 4, "subparagraph": 5}

# Environments of amsmath and LaTeX that print equation numbers (starred forms print none).
NUMBERED_EQUATION_ENVS = frozenset({
    "equation", "multline", "align", "alignat", "flalign", "xalignat", "xxalignat", "gather",
    "eqnarray",
})
_SINGLE_NUMBER_ENVS = frozenset({"equation", "multline"})

_STYLE_CS = r"arabic|roman|Roman|alph|Alph|fnsymbol"
# What prints a counter's value: \arabic{theorem}, \@Alph\c@section, \number\value{section}, \the\c@chapter,
# \romannumeral\value{lemma}, or another counter's format, \thesection.
_COUNTER_VALUE = (
    r"\\(?P<style>" + _STYLE_CS + r")\s*\{\s*(?P<counter>[A-Za-z@*]+)\s*\}"
    r"|\\@(?P<internal_style>" + _STYLE_CS + r")\s*\\c@(?P<internal_counter>[A-Za-z@]+)"
    r"|\\(?P<primitive>the|number|romannumeral)\s*"
    r"(?:\\value\s*\{\s*(?P<value_counter>[A-Za-z@*]+)\s*\}|\\c@(?P<register_counter>[A-Za-z@]+))"
    r"|\\the(?P<the>[A-Za-z@]+)")
_REFERENCE_COMMANDS = r"ref|[cC]ref|labelcref|name[cC]ref|[vV]ref|[aA]utoref|[nN]ameref"
_FORMAT_TOKEN_RE = re.compile(
    _COUNTER_VALUE
    + r"|\\(?P<refcmd>" + _REFERENCE_COMMANDS + r")\*?\s*\{\s*(?P<ref>[^{}]*?)\s*\}"   # a restatement's \ref{thm:main}
    + r"|\\(?P<macro>[A-Za-z@]+)\*?|\\.|[{}~]"    # a macro (an \edef'd one prints its value); others dropped
    + r"|(?P<text>[^\\{}~]+)")                         # literal text
# What `\edef` expands now: counter values and formats, macros frozen before; `\noexpand\x` (and `\protect\x`, which
# `\protected@edef` makes `\noexpand`) keeps `\x`; `\expandafter\noexpand\the<c>` keeps the first token of `\the<c>`'s
# one-level expansion, `\expandafter\noexpand\csname name\endcsname` the command it names; the kernel's
# `\@thmcountersep` (".") and `\@thmcounter{c}` (`\noexpand\arabic{c}`) as LaTeX defines them.
_FREEZE_TOKEN_RE = re.compile(
    r"\\expandafter\s*\\noexpand\s*(?:\\the(?P<once>[A-Za-z@]+)|\\csname\s*(?P<named>[A-Za-z@]+)\s*\\endcsname)"
    r"|\\(?:noexpand|protect)(?![A-Za-z@])\s*(?P<kept>\\(?:[A-Za-z@]+|.))"
    r"|\\csname\s*the(?P<csname_the>[A-Za-z@]+)\s*\\endcsname"
    r"|\\(?P<sep>@thmcountersep)(?![A-Za-z@])|\\@thmcounter\s*\{\s*(?P<thmcounter>[A-Za-z@*]+)\s*\}|"
    + _COUNTER_VALUE + r"|\\(?P<macro>[A-Za-z@]+)")
_FORWARD = "\x00"                                    # around a reference a format makes before every label is known
_COMMAND_SEP = "\x01"                                # between the command and the labels of a `\cref` there
_FORWARD_RE = re.compile("\x00([^\x00]*)\x00")
_MAX_REFERENCE_CHAIN = 4
_SETCOUNTER_VALUE_RE = re.compile(r"\\value\s*\{\s*(?P<counter>[A-Za-z@*]+)\s*\}|\\(?P<macro>[A-Za-z@]+)")
_PRIMITIVE_STYLES = {"the": "arabic", "number": "arabic", "romannumeral": "roman"}
_NAME = r"\s*\{\s*([A-Za-z@*]+)\s*\}"
_DIRECTIVE_RE = re.compile(
    r"\\(newaliascnt)" + _NAME + _NAME
    + r"|\\(aliascntresetthe)" + _NAME
    + r"|\\(let)\s*\\c@([A-Za-z@]+)\s*=?\s*\\c@([A-Za-z@]+)"
    + r"|\\(numberwithin|counterwithin\*?|counterwithout\*?|@addtoreset)" + _NAME + _NAME
    + r"|\\(newcounter)" + _NAME + r"(?:\s*\[\s*([A-Za-z@]+)\s*\])?"
    + r"|\\(setcounter|addtocounter)" + _NAME + r"\s*\{\s*(-?\d+)\s*\}"
    + r"|\\(renewcommand\*?|def|gdef|xdef|edef|protected@[ex]def)\s*(\{)?\s*\\the([A-Za-z@]+)\s*\}?"
)
_NEWENV_RE = re.compile(r"\\(?:re)?newenvironment\s*\{\s*([A-Za-z@*]+)\s*\}\s*(?:\[\s*\d\s*\]\s*)?(?=\{)")
_OPENS_DISPLAY_RE = re.compile(
    r"\\begin\s*\{(" + "|".join(sorted(NUMBERED_EQUATION_ENVS)) + r")\}"
    r"|\\csname\s*(" + "|".join(sorted(NUMBERED_EQUATION_ENVS)) + r")\s*\\endcsname"
    r"|\\(" + "|".join(sorted(NUMBERED_EQUATION_ENVS)) + r")(?![A-Za-z@*])")
# Escaped braces are read as one token so they do not count; other escapes cannot start a token.
_EQUATION_SCAN_RE = re.compile(r"\\begin\{[^{}]*\}|\\end\{[^{}]*\}|\\(?:nonumber|notag|tag)(?![A-Za-z])|\\\\|\\[{}]|[{}]")


def _roman(n: int) -> str:
    if n <= 0:
        return ""
    out = []
    for value, letters in ((1000, "m"), (900, "cm"), (500, "d"), (400, "cd"), (100, "c"), (90, "xc"),
                           (50, "l"), (40, "xl"), (10, "x"), (9, "ix"), (5, "v"), (4, "iv"), (1, "i")):
        while n >= value:
            out.append(letters)
            n -= value
    return "".join(out)


def _alph(n: int) -> str:
    return chr(ord("a") + n - 1) if 1 <= n <= 26 else str(n)


_FNSYMBOLS = ("", "*", "\u2020", "\u2021", "\u00a7", "\u00b6", "\u2016", "**", "\u2020\u2020", "\u2021\u2021")


def render_value(style: str, n: int) -> str:
    """`n` as LaTeX's `\\arabic`, `\\roman`, `\\Roman`, `\\alph`, `\\Alph` or `\\fnsymbol` prints it."""
    if style == "roman":
        return _roman(n)
    if style == "Roman":
        return _roman(n).upper()
    if style == "alph":
        return _alph(n)
    if style == "Alph":
        return _alph(n).upper()
    if style == "fnsymbol":
        return _FNSYMBOLS[n] if 0 <= n < len(_FNSYMBOLS) else str(n)
    return str(n)


def _counter_part(m: re.Match) -> Optional[tuple[str, str]]:
    """(style, counter) or ("the", counter) of a `_COUNTER_VALUE` match; None for another token."""
    if m.group("style"):
        return m.group("style"), m.group("counter")
    if m.group("internal_style"):
        return m.group("internal_style"), m.group("internal_counter")
    if m.group("primitive"):                 # TeX's own \number/\the/\romannumeral of a counter's value
        return _PRIMITIVE_STYLES[m.group("primitive")], m.group("value_counter") or m.group("register_counter")
    if m.group("the"):
        return "the", m.group("the")
    return None


def parse_format(body: str) -> list[tuple[str, str]]:
    """A `\\the<counter>` definition as parts: (style, counter), ("the", counter), ("ref", label), ("macro", name)
    or ("text", s)."""
    parts: list[tuple[str, str]] = []
    for m in _FORMAT_TOKEN_RE.finditer(body):
        part = _counter_part(m)
        if part:
            parts.append(part)
        elif m.group("ref") is not None:
            command = m.group("refcmd")
            parts.append(("ref", m.group("ref") if command == "ref" else command + _COMMAND_SEP + m.group("ref")))
        elif m.group("macro"):
            parts.append(("macro", m.group("macro")))
        elif m.group("text"):
            parts.append(("text", m.group("text").strip("\n")))
    return parts


def _written(parts: list[tuple[str, str]]) -> str:
    """Format parts written back as LaTeX (what `parse_format` reads)."""
    out = []
    for style, arg in parts:
        if style == "text":
            out.append(arg)
        elif style in ("the", "macro"):
            out.append(("\\the" if style == "the" else "\\") + arg + "{}")
        elif style == "ref":
            command, _, labels = arg.rpartition(_COMMAND_SEP)
            out.append(f"\\{command or 'ref'}{{{labels}}}")
        else:
            out.append(f"\\{style}{{{arg}}}")
    return "".join(out)


# A definition in a statement: the name after it is not a use, and from there on it holds its new meaning.
_DEFINITION_OR_USE_RE = re.compile(
    r"\\(?:global\s*\\)?(?P<definer>[gex]?def|protected@[ex]def|(?:re)?newcommand\*?)\s*\{?\s*\\(?P<defined>[A-Za-z@]+)"
    r"|\\([A-Za-z@]+)[ \t]*|\\.")


def substitute_frozen(text: str, frozen: dict[str, str], defined: list[tuple[str, str]] = ()) -> str:
    """`text` with the uses of macros an `\\edef` froze (`Numberer.frozen_at`) replaced by their values.

    `defined`: the `\\edef`s/`\\xdef`s made inside this text, in order (`Numberer.defined_within`): a use after
    one prints its value; after any other definition of a frozen name the name means what that defines."""
    if not (frozen or defined) or "\\" not in text:
        return text
    pending: dict[str, list[str]] = {}
    for name, value in defined:
        pending.setdefault(name, []).append(value)
    current = frozen

    def replace(m: re.Match) -> str:
        nonlocal current
        name = m.group("defined")
        if name is None:
            return current.get(m.group(3), m.group()) if m.group(3) else m.group()
        values = pending.get(name) if m.group("definer").endswith(("edef", "xdef")) else None
        if values:
            current = {**current, name: values.pop(0)}
        elif name in current:
            current = {n: v for n, v in current.items() if n != name}
        return m.group()
    return _DEFINITION_OR_USE_RE.sub(replace, text)


def equation_wrappers(preamble: str) -> dict[str, str]:
    """Author environments that open a numbered display: {name: the display environment}.

    The HoTT book's `\\newenvironment{narrowmultline}{\\csname equation\\endcsname}{...}` prints an
    equation number like `equation` does; a starred display inside (`equation*`) prints none.
    """
    found: dict[str, str] = {}
    for m in _NEWENV_RE.finditer(preamble):
        end = group_end(preamble, m.end())
        if end < 0:
            continue
        opened = _OPENS_DISPLAY_RE.search(preamble, m.end(), end)
        if opened:
            found[m.group(1)] = opened.group(1) or opened.group(2) or opened.group(3)
    return found


def count_equation_numbers(env: str, body: str) -> int:
    """How many numbers a numbered display environment with this body prints.

    `equation` and `multline` print one unless `\\nonumber`, `\\notag` or `\\tag` is present;
    `align`-like environments print one per row (rows split by `\\\\` outside nested
    environments and braces) that has content and no such command.
    """
    base = env.rstrip("*")
    if env.endswith("*") or base not in NUMBERED_EQUATION_ENVS:
        return 0
    if base == "eqnarray":
        base = "align"
    if "\\nonumber" not in body and "\\notag" not in body and "\\tag" not in body:
        if base in _SINGLE_NUMBER_ENVS:
            return 1
        if "\\\\" not in body:                  # one row
            return 1 if body.strip() else 0
    rows: list[bool] = []     # per finished row: does it print a number?
    row_suppressed = any_suppressed = False
    row_start = 0
    depth = 0
    for m in _EQUATION_SCAN_RE.finditer(body):
        token = m.group()
        if token == "{" or token.startswith("\\begin{"):
            depth += 1
        elif token == "}" or token.startswith("\\end{"):
            depth -= 1
        elif depth == 0 and token == "\\\\":
            rows.append(bool(body[row_start:m.start()].strip()) and not row_suppressed)
            row_suppressed = False
            row_start = m.end()
        elif depth == 0 and token in ("\\nonumber", "\\notag", "\\tag"):
            row_suppressed = any_suppressed = True
    rows.append(bool(body[row_start:].strip()) and not row_suppressed)
    if base in _SINGLE_NUMBER_ENVS:
        return 0 if any_suppressed else 1
    return sum(rows)


class Numberer:
    """Counters of one document; `feed` its events in order to get each statement's number.

    `declarations` is the prepared preamble (`declarations.prepare_declarations`): comments already
    stripped and declaration wrappers already expanded within the run's limits, the same text
    discovery read, so numbering neither re-reads the sources nor expands macros on its own.
    """

    def __init__(self, declarations: str, envs: dict[str, EnvSpec], *, book: bool,
                 macros: Optional[Mapping[str, MacroDef]] = None):
        self.book = book
        self._macros = macros or {}                    # the document's macros: an \edef expands argument-free ones
        self._values: dict[str, int] = {}
        self._register: dict[str, str] = {}        # counter -> counter whose value it uses
        self._resets: dict[str, list[str]] = {}
        self._formats: dict[str, list[tuple[str, str]]] = {}
        self._secnumdepth = 2 if book else 3
        self._numbering_chapters = True             # False in \frontmatter and \backmatter
        self._env_counter: dict[str, str] = {}
        self._envs = envs
        self.labels: dict[str, LabelTarget] = {}
        self._statements: dict[int, tuple[Optional[str], str]] = {}   # ordinal -> (number, display name)
        self._current: tuple[str, Optional[str], str] = ("other", None, "")   # LaTeX's \@currentlabel
        self._equation_base = 0
        self._frozen: dict[str, str] = {}       # macros an \edef of the body froze; replaced, never changed in place
        self.frozen_at: dict[int, dict[str, str]] = {}   # statement ordinal -> the frozen macros it sees
        self.defined_within: dict[int, list[tuple[str, str]]] = {}   # ordinal -> (name, value) of its own \edefs
        self._saved: dict[int, list[tuple[str, str, object]]] = {}   # group -> what its local definitions replaced
        self._init_standard_counters()
        for spec in envs.values():
            if spec.numbered and spec.counter is None:
                self._new_counter(spec.name, spec.within)
                self._env_counter[spec.name] = spec.name
                if spec.reset_by:
                    self._reset_by(spec.name, spec.reset_by)
        self._apply_preamble(declarations)
        self.equation_envs: dict[str, str] = {e: e for e in NUMBERED_EQUATION_ENVS}
        self.equation_envs.update(equation_wrappers(declarations))
        for spec in envs.values():
            if spec.numbered and spec.name not in self._env_counter:
                self._env_counter[spec.name] = self._resolve_shared(spec, envs)

    # -- setup ---------------------------------------------------------------------------------

    def _init_standard_counters(self) -> None:
        chain = ["section", "subsection", "subsubsection", "paragraph", "subparagraph"]
        self._new_counter("part")
        self._formats["part"] = [("Roman", "part")]
        parent = None
        if self.book:
            self._new_counter("chapter")
            parent = "chapter"
        for name in chain:
            self._new_counter(name, parent)
            parent = name
        self._new_counter("equation", "chapter" if self.book else None)
        self._new_counter("figure", "chapter" if self.book else None)
        self._new_counter("table", "chapter" if self.book else None)

    def _known(self, counter: str) -> bool:
        return counter in self._values or counter in self._register

    def _counter_named(self, name: str) -> str:
        """The counter `\\the<name>` prints: `name`, or the one an environment `\\newtheorem{name}[shared]` steps."""
        return name if self._known(name) or name in self._formats else self._env_counter.get(name, name)

    def _new_counter(self, name: str, within: Optional[str] = None) -> None:
        self._values.setdefault(name, 0)
        self._resets.setdefault(name, [])
        if within:
            self._reset_by(name, within)
            self._formats[name] = [("the", within), ("text", "."), ("arabic", name)]
        else:
            self._formats.setdefault(name, [("arabic", name)])

    def _reset_by(self, counter: str, within: str) -> None:
        resets = self._resets.setdefault(within, [])
        if counter not in resets:
            resets.append(counter)

    def _resolve_shared(self, spec: EnvSpec, envs: dict[str, EnvSpec]) -> str:
        """The counter a `\\newtheorem{x}[shared]` environment steps, following env names."""
        counter = spec.counter or spec.name
        seen = set()
        while not self._known(counter) and counter in envs and counter not in seen:
            seen.add(counter)
            counter = self._env_counter.get(counter) or envs[counter].counter or counter
        if not self._known(counter):
            self._new_counter(counter)
        return counter

    def _apply_preamble(self, preamble: str) -> None:
        for m in _DIRECTIVE_RE.finditer(preamble):
            if m.group(1):                                   # \newaliascnt{new}{existing}
                new, existing = m.group(2), m.group(3)
                self._register[new] = self._register_of(existing)
                self._resets[new] = self._resets.setdefault(existing, [])
                self._formats[new] = [("the", existing)]
            elif m.group(4):                                 # \aliascntresetthe{new}
                pass                                         # \thenew already is \theexisting
            elif m.group(6):                                 # \let\c@a\c@b
                self._register[m.group(7)] = self._register_of(m.group(8))
            elif m.group(9):
                self._within_directive(m.group(9), m.group(10), m.group(11))
            elif m.group(12):                                # \newcounter{c}[within]: \thec stays \arabic{c}
                self._new_counter(m.group(13))
                if m.group(14):
                    self._reset_by(m.group(13), m.group(14))
            elif m.group(15):
                self._set(m.group(15), m.group(16), int(m.group(17)))
            elif m.group(18):                                # \renewcommand{\thec}{...}
                self._renew_the(preamble, m)

    def _within_directive(self, command: str, counter: str, within: str) -> None:
        if command == "@addtoreset":
            self._reset_by(counter, within)
            return
        if command.startswith("counterwithout"):
            resets = self._resets.get(within, [])
            if counter in resets:
                resets.remove(counter)
            if not command.endswith("*"):
                self._formats[counter] = [("arabic", counter)]
            return
        self._values.setdefault(counter, 0)
        self._reset_by(counter, within)
        if not command.endswith("*"):
            self._formats[counter] = [("the", within), ("text", "."), ("arabic", counter)]

    def _renew_the(self, preamble: str, m: re.Match) -> None:
        """`\\renewcommand{\\thec}{...}` as written; an `\\edef` expanded with what the preamble has set so far."""
        start = skip_spaces(preamble, m.end())
        end = group_end(preamble, start) if preamble.startswith("{", start) else -1
        if end > 0:
            body = preamble[start + 1:end - 1]
            self._formats[m.group(20)] = parse_format(self.freeze(body) if m.group(18).endswith(("edef", "xdef"))
                                                      else body)

    # -- counter operations ---------------------------------------------------------------------

    def _register_of(self, counter: str) -> str:
        seen = set()
        while counter in self._register and counter not in seen:
            seen.add(counter)
            counter = self._register[counter]
        return counter

    def _set(self, command: str, counter: str, value: int) -> None:
        if counter == "secnumdepth":
            self._secnumdepth = value if command == "setcounter" else self._secnumdepth + value
            return
        register = self._register_of(counter)
        if command == "setcounter":
            self._values[register] = value
        else:
            self._values[register] = self._values.get(register, 0) + value

    def step(self, counter: str) -> None:
        """`\\stepcounter`: add one, clear the counters this one resets."""
        register = self._register_of(counter)
        self._values[register] = self._values.get(register, 0) + 1
        self._clear_dependents(counter, {counter})

    def _clear_dependents(self, counter: str, seen: set[str]) -> None:
        """LaTeX clears a reset-list counter by stepping it from -1 (`\\@stpelt`), so the reset
        cascades: a theorem numbered within `subsection` restarts at every new `section` too."""
        for dependent in self._resets.get(counter, ()):
            if dependent not in seen:
                seen.add(dependent)
                self._values[self._register_of(dependent)] = 0
                self._clear_dependents(dependent, seen)

    def format(self, counter: str, depth: int = 0) -> str:
        """`\\the<counter>` as printed now."""
        counter = self._counter_named(counter)
        return self._render(self._formats.get(counter) or [("arabic", counter)], depth)

    def _render(self, parts: list[tuple[str, str]], depth: int) -> str:
        if depth > 8:
            return ""
        out = []
        for style, arg in parts:
            if style == "text":
                out.append(arg)
            elif style == "the":
                out.append(self.format(arg, depth + 1))
            elif style == "macro":
                out.append(self._render(parse_format(self._frozen[arg]), depth + 1) if arg in self._frozen else "")
            elif style == "ref":        # filled in by `resolve_forward_references`: a label not seen yet, a `\\cref`
                target = self.labels.get(arg) if _COMMAND_SEP not in arg else None
                out.append((target.number or "") if target is not None else _FORWARD + arg + _FORWARD)
            else:
                out.append(render_value(style, self._values.get(self._register_of(arg), 0)))
        return "".join(out)

    def resolve_forward_references(self, numbers: dict[int, str], style: References = NO_REFERENCES) -> None:
        """Fill in the references of formats, in `numbers`, in the labels and in the frozen macros, as a second
        LaTeX run does: `\\ref`s to labels set later (a restatement before its theorem), "??" for a label never
        set, and `\\cref`, `\\autoref`, `\\nameref` as the text prints them with `style`'s cleveref names."""
        refs = dataclasses.replace(style, labels=self.labels)
        resolved = functools.partial(self._resolved, refs=refs)
        for _ in range(_MAX_REFERENCE_CHAIN):        # a label's number may print another label's
            pending = [t for t in self.labels.values() if t.number and _FORWARD in t.number]
            for target in pending:
                target.number = resolved(target.number, final=False)
            if not pending:
                break
        for target in self.labels.values():
            if target.number:
                target.number = resolved(target.number)
        for ordinal, text in numbers.items():
            numbers[ordinal] = resolved(text)
        for ordinal, frozen in self.frozen_at.items():
            self.frozen_at[ordinal] = {name: resolved(value) for name, value in frozen.items()}
        for ordinal, defined in self.defined_within.items():
            self.defined_within[ordinal] = [(name, resolved(value)) for name, value in defined]

    @staticmethod
    def _resolved(text: str, refs: References, final: bool = True) -> str:
        """`text` with its references printed; not `final`: one still waiting on another is left for later."""
        def printed(m: re.Match) -> str:
            command, _, labels = m.group(1).rpartition(_COMMAND_SEP)
            names = [n.strip() for n in labels.split(",") if n.strip()] if command else [labels]
            if any(_FORWARD in (refs.labels[n].number or "") for n in names if n in refs.labels):
                return m.group() if not final else UNKNOWN
            text, inline = print_reference(command or "ref", names, refs)
            return inline if inline is not None else text
        return _FORWARD_RE.sub(printed, text) if _FORWARD in text else text

    def freeze(self, body: str, depth: int = 0) -> str:
        """What `\\edef` stores for `body` now: counter values and formats printed as they are at this point,
        macros frozen before by their values, the document's argument-free macros expanded, `\\noexpand\\x` as
        `\\x`, `\\expandafter\\noexpand\\the<c>` as the first part of `\\the<c>` kept and the rest frozen
        (`_FREEZE_TOKEN_RE`); other commands stay as written."""
        def expanded(m: re.Match) -> str:
            if m.group("kept"):
                return m.group("kept")
            if m.group("named"):
                return "\\" + m.group("named") + "{}"
            if m.group("once"):
                name = self._counter_named(m.group("once"))
                parts = self._formats.get(name) or [("arabic", name)] if self._known(name) else None
                if parts is None or depth > 8:
                    return "\\the" + name + "{}"
                return _written(parts[:1]) + self.freeze(_written(parts[1:]), depth + 1)
            if m.group("csname_the") and self._known(self._counter_named(m.group("csname_the"))):
                return self.format(m.group("csname_the"))
            if m.group("sep"):
                return "."
            if m.group("thmcounter"):
                return "\\arabic{" + m.group("thmcounter") + "}"
            part = _counter_part(m)
            if part and part[0] == "the" and self._known(self._counter_named(part[1])):
                return self.format(part[1])
            if part and part[0] != "the" and self._known(part[1]):
                return render_value(part[0], self._values.get(self._register_of(part[1]), 0))
            name = m.group("macro") or ("the" + part[1] if part and part[0] == "the" else None)
            if name in self._frozen or name is None:
                return self._frozen.get(name, m.group())
            macro = self._macros.get(name)
            if (macro is None or macro.args or macro.template is not None or macro.delimiters is not None
                    or macro.literal or depth > 8):
                return m.group()
            return self.freeze(macro.body, depth + 1)
        return _FREEZE_TOKEN_RE.sub(expanded, body)

    def _counter_value(self, arg: object) -> Optional[int]:
        """The number a `\\setcounter` argument gives: digits, `\\value{c}`, or a macro an `\\edef` froze to digits."""
        if isinstance(arg, int) or arg is None:
            return arg
        m = _SETCOUNTER_VALUE_RE.fullmatch(str(arg).strip())
        if m and m.group("counter") and self._known(m.group("counter")):
            return self._values.get(self._register_of(m.group("counter")), 0)
        text = self._frozen.get(m.group("macro"), "").strip() if m and m.group("macro") else ""
        return int(text) if text.lstrip("-").isdigit() else None

    def _assign(self, what: str, name: str, value: object, group: Optional[int]) -> None:
        """Set a counter's format or a frozen macro; in a group, what it replaced comes back at its end."""
        table = self._formats if what == "format" else self._frozen
        if group is not None:
            self._saved.setdefault(group, []).append((what, name, table.get(name)))
        if what == "format":
            self._formats[name] = value
        else:
            self._frozen = {**self._frozen, name: value}

    def _end_group(self, group: int) -> None:
        for what, name, old in reversed(self._saved.pop(group, [])):
            if what == "format":
                if old is None:
                    self._formats.pop(name, None)
                else:
                    self._formats[name] = old
            else:
                self._frozen = {n: v for n, v in self._frozen.items() if n != name}
                if old is not None:
                    self._frozen[name] = old

    def counter_of(self, env: str) -> Optional[str]:
        """The counter environment `env` steps, or None when it is unnumbered or unknown."""
        return self._env_counter.get(env)

    # -- events ---------------------------------------------------------------------------------

    def feed(self, event: DocEvent) -> Optional[str]:
        """Apply one body event; for a numbered statement, return the number the PDF shows."""
        kind = event.type
        if kind == "begin_statement":
            counter = self._env_counter.get(event.name)
            spec = self._envs.get(event.name)
            display = spec.display_name if spec else event.name
            number = None
            if counter is not None:
                self.step(counter)
                number = self.format(counter)
                self._current = ("statement", number, display)
            self._statements[event.arg] = (number if number is not None else self._current[1], display)
            if self._frozen:
                self.frozen_at[event.arg] = self._frozen
            return number
        if kind == "label":
            self._label(event.name, event.arg if isinstance(event.arg, dict) else {})
        elif kind == "sectioning":
            self._section(event)
        elif kind == "begin_env":
            # arg: how many numbers the display prints (count_equation_numbers); None: one, if numbered
            count = event.arg if isinstance(event.arg, int) else int(event.name in self.equation_envs)
            self._equation_base = self._values.get(self._register_of("equation"), 0)
            for _ in range(max(count, 0)):
                self.step("equation")
        elif kind in ("setcounter", "addtocounter"):
            value = self._counter_value(event.arg)
            if value is not None:
                self._set(kind, event.name, value)
        elif kind in ("stepcounter", "refstepcounter"):
            self.step(event.name)
            if kind == "refstepcounter":
                self._current = (event.name, self.format(event.name), event.name.capitalize())
        elif kind == "appendix":
            self._appendix()
        elif kind in ("frontmatter", "mainmatter", "backmatter"):
            self._numbering_chapters = kind == "mainmatter"
        elif kind == "numberwithin" and isinstance(event.arg, str):
            self._within_directive("numberwithin", event.name, event.arg)
        elif kind == "renewthe":                  # arg: (body, group it ends with, or None)
            self._assign("format", event.name, parse_format(event.arg[0]), event.arg[1])
        elif kind == "edef":                      # arg: (body, group, ordinals of the statements it is in)
            frozen = self.freeze(event.arg[0])
            self._assign("macro", event.name, frozen, event.arg[1])
            for ordinal in event.arg[2] if len(event.arg) > 2 else ():
                self.defined_within.setdefault(ordinal, []).append((event.name, frozen))
            if event.name.startswith("the"):
                self._assign("format", event.name[3:], parse_format(frozen), event.arg[1])
        elif kind == "endgroup":
            self._end_group(event.arg)
        return None

    def _section(self, event: DocEvent) -> None:
        name = event.name
        if name in ("frontmatter", "mainmatter", "backmatter"):
            self._numbering_chapters = name == "mainmatter"
            return
        level = SECTION_LEVELS.get(name)
        if level is None:
            return
        starred = bool(event.arg.get("starred")) if isinstance(event.arg, dict) else bool(event.arg)
        if starred or level > self._secnumdepth:
            return
        if name == "chapter" and not self._numbering_chapters:
            return
        self.step(name)
        self._current = ("section", self.format(name), name.capitalize() if level <= 0 else "Section")

    def _label(self, name: str, context: dict) -> None:
        """Record what `\\label{name}` names, with the number `\\ref{name}` prints."""
        kind = context.get("kind", "current")
        if kind == "statement" and context.get("ordinal") in self._statements:
            number, display = self._statements[context["ordinal"]]
            target = LabelTarget(name, "statement", number, display, context["ordinal"], context.get("title"))
        elif kind == "equation" and context.get("row"):
            register = self._register_of("equation")
            now = self._values.get(register, 0)
            self._values[register] = self._equation_base + context["row"]
            target = LabelTarget(name, "equation", self.format("equation"), "Equation")
            self._values[register] = now
        elif kind == "item" and context.get("item"):
            if context.get("style"):
                before, style, after = context["style"]
                number = before + render_value(style, context["item"]) + after
            else:
                now = self._values.get("enumi", 0)
                self._values["enumi"] = context["item"]
                number = self.format("enumi")
                self._values["enumi"] = now
            target = LabelTarget(name, "item", number, "Item")
        elif kind in ("figure", "table"):
            target = LabelTarget(name, kind, self.format(kind), kind.capitalize())
        else:
            current_kind, number, display = self._current
            target = LabelTarget(name, current_kind if current_kind == "section" else "other", number, display,
                                 title=context.get("title") if current_kind == "section" else None)
        self.labels.setdefault(name, target)

    def _appendix(self) -> None:
        if self.book:
            self._values[self._register_of("chapter")] = 0
            self._values[self._register_of("section")] = 0
            self._formats["chapter"] = [("Alph", "chapter")]
        else:
            self._values[self._register_of("section")] = 0
            self._values[self._register_of("subsection")] = 0
            self._formats["section"] = [("Alph", "section")]
