"""The macro database: user macro definitions collected from a preamble, before any expansion.

Authors write `\\R`, `\\abs{x}` or `\\Hom` instead of what they mean. This module reads their
definitions (`\\newcommand`, `\\def`, `\\let`, `\\DeclareMathOperator`, xparse, mathtools paired
delimiters) into a `MacroTable`, the way pylatexenc keeps a macro database separate from its parser;
`macros.py` expands with such a table. Definitions whose syntax is not modelled are skipped, not
guessed, and macros only TeX can run are listed with the reason they are left out.
"""
from __future__ import annotations

import dataclasses
import functools
import re
from typing import Optional, Union

from transforms.latex.model import Limits
from transforms.latex.scan import (CONTROL_SEQUENCE_RE as _CS_RE, each_command, group_end, is_letter, skip_spaces,
                                   undelimited_argument)

_DEFINERS = (
    "newcommand", "renewcommand", "providecommand", "DeclareRobustCommand",
    "def", "gdef", "edef", "xdef", "let", "DeclareMathOperator", "DeclarePairedDelimiter",
    "NewDocumentCommand", "RenewDocumentCommand", "ProvideDocumentCommand", "DeclareDocumentCommand",
)
_DEFINER_RE = re.compile(r"\\(" + "|".join(sorted(_DEFINERS, key=len, reverse=True)) + r")(?![A-Za-z@])(\*?)")
# Bodies that only TeX itself can run: conditionals, expansion control, internal (@) commands.
_PROGRAMMING_RE = re.compile(
    r"\\(?:if[A-Za-z]*|else|fi|or|expandafter|noexpand|csname|endcsname|futurelet|afterassignment"
    r"|aftergroup|edef|xdef|gdef|def|let|global|ifthenelse|ifstrempty|IfNoValueTF|IfValueTF|IfBooleanTF"
    r"|NewDocumentCommand|newcommand|renewcommand|providecommand)(?![A-Za-z@])"
    r"|\\(?:[A-Za-z]+@[A-Za-z@]*|@[A-Za-z@]+)")        # internals, but not the spacing command \\@
PRIMITIVE_NAMES = frozenset({"expandafter", "noexpand", "csname", "endcsname", "global", "relax", "let",
                             "def", "edef", "gdef", "xdef", "begingroup", "endgroup", "the", "par"})
_DEF_PARAM_SPLIT_RE = re.compile(r"(#[1-9])")
_MAX_EDEF_DEPTH = 8
_ENDS_WITH_CONTROL_WORD_RE = re.compile(r"\\[A-Za-z@]+\Z")
SELF_REFERENCE = "refers to itself"

# An argument spec: "m" (mandatory) or ("o", default) (optional, with its default).
ArgSpec = Union[str, tuple[str, str]]


@dataclasses.dataclass(frozen=True)
class MacroDef:
    """One user macro.

    `args` lists LaTeX-style arguments; `template` (for `\\def` with delimited parameters) lists
    parameter numbers and the literal delimiters between them instead. A `literal` macro is a
    `\\let` alias of a command the table does not define: its body is emitted as is, never rescanned
    (so `\\let\\oldsqrt\\sqrt` followed by a `\\sqrt` that calls `\\oldsqrt` does not recurse).
    A paired delimiter takes an optional `*` (growing `\\left...\\right`) or `[\\big]` size.
    """

    name: str
    body: str
    args: tuple[ArgSpec, ...] = ()
    template: Optional[tuple[Union[int, str], ...]] = None
    literal: bool = False
    declared_by: str = "\\newcommand"
    delimiters: Optional[tuple[str, str]] = None     # mathtools \DeclarePairedDelimiter: (left, right)


@dataclasses.dataclass
class MacroTable:
    """The user macros of one document, by name (without the backslash)."""

    defs: dict[str, MacroDef] = dataclasses.field(default_factory=dict)
    unexpandable: dict[str, str] = dataclasses.field(default_factory=dict)   # name -> why it is left out
    left_out: dict[str, MacroDef] = dataclasses.field(default_factory=dict)  # their definitions
    _pattern: Optional[NameFinder] = dataclasses.field(default=None, repr=False, compare=False)

    def __len__(self) -> int:
        return len(self.defs)

    def __contains__(self, name: str) -> bool:
        return name in self.defs

    def pattern(self) -> Optional[NameFinder]:
        """What finds the uses of every defined name (and of the recursive ones left out)."""
        if self._pattern is None and (self.defs or self.recursive()):
            self._pattern = NameFinder([*self.defs, *self.recursive()])
        return self._pattern

    def recursive(self) -> list[str]:
        """Left-out macros whose body calls themselves: a use of one is recorded as not expanded."""
        return [name for name, reason in self.unexpandable.items() if reason == SELF_REFERENCE]


class NameFinder:
    """Finds the next use of any of `names` (`search(text, pos)` like a compiled regex would).

    Control sequences are read as TeX reads them (`\\\\R` is `\\\\` then `R`) and looked up in a
    set: no regex of the names is compiled (one alternation of a long macro file took 0.1 s to
    build, more than all the searches in the paper).
    """

    def __init__(self, names):
        self.names = frozenset(names)

    def search(self, text: str, pos: int = 0) -> Optional[re.Match]:
        names = self.names
        for m in _CS_RE.finditer(text, pos):
            if m.group(1) in names:
                return m
        return None


def _read_name(text: str, pos: int) -> Optional[tuple[str, int]]:
    """The command being defined: `\\foo` or `{\\foo}`; returns (name without backslash, end)."""
    pos = skip_spaces(text, pos)
    if text.startswith("{", pos):
        end = group_end(text, pos)
        if end < 0:
            return None
        m = _CS_RE.fullmatch(text[pos + 1:end - 1].strip())
        return (m.group(1), end) if m else None
    m = _CS_RE.match(text, pos)
    return (m.group(1), m.end()) if m else None


@dataclasses.dataclass(frozen=True)
class _Definition:
    start: int
    end: int
    command: str          # "newcommand", "def", "let", ...
    macro: Optional[MacroDef]
    alias_of: Optional[str] = None   # for \let: the name on the right-hand side


def _parse_newcommand(text: str, pos: int, command: str, star: str) -> Optional[tuple[MacroDef, int]]:
    named = _read_name(text, pos)
    if not named:
        return None
    name, pos = named
    n_args = 0
    default = None
    p = skip_spaces(text, pos)
    if text.startswith("[", p):
        end = group_end(text, p)
        if end < 0 or not text[p + 1:end - 1].strip().isdigit():
            return None
        n_args = int(text[p + 1:end - 1].strip())
        pos = end
        p = skip_spaces(text, pos)
        if text.startswith("[", p):
            end = group_end(text, p)
            if end < 0:
                return None
            default = text[p + 1:end - 1]
            pos = end
    body = undelimited_argument(text, pos)
    if body is None or not 0 <= n_args <= 9:
        return None
    args: list[ArgSpec] = ["m"] * n_args
    if default is not None and n_args:
        args[0] = ("o", default)
    return MacroDef(name, body[0], tuple(args), declared_by="\\" + command + star), body[1]


def _parse_document_command(text: str, pos: int, command: str) -> Optional[tuple[MacroDef, int]]:
    """xparse `\\NewDocumentCommand{\\foo}{m O{x} m}{body}` with m, o and O{...} arguments."""
    named = _read_name(text, pos)
    if not named:
        return None
    name, pos = named
    spec = undelimited_argument(text, pos)
    if spec is None:
        return None
    args: list[ArgSpec] = []
    s, i = spec[0], 0
    while i < len(s):
        c = s[i]
        if c.isspace():
            i += 1
        elif c == "m":
            args.append("m")
            i += 1
        elif c == "o":
            args.append(("o", ""))
            i += 1
        elif c == "O" and s.startswith("{", i + 1):
            end = group_end(s, i + 1)
            if end < 0:
                return None
            args.append(("o", s[i + 2:end - 1]))
            i = end
        else:
            return None           # argument types we do not model (s, t, r, d, e, ...)
    body = undelimited_argument(text, spec[1])
    if body is None:
        return None
    return MacroDef(name, body[0], tuple(args), declared_by="\\" + command), body[1]


def _parse_def(text: str, pos: int, command: str) -> Optional[tuple[MacroDef, int]]:
    m = _CS_RE.match(text, skip_spaces(text, pos))
    if not m:
        return None
    name = m.group(1)
    open_brace = text.find("{", m.end())
    if open_brace < 0:
        return None
    params = text[m.end():open_brace]
    if is_letter(name[0]):
        params = params.lstrip(" \t\n")        # TeX skips spaces after a control word: `\def\foo {x}`
    if "}" in params or len(params) > 200:
        return None
    end = group_end(text, open_brace)
    if end < 0:
        return None
    body = text[open_brace + 1:end - 1]
    pieces = [p for p in _DEF_PARAM_SPLIT_RE.split(params) if p]
    if any("#" in p and not _DEF_PARAM_SPLIT_RE.fullmatch(p) for p in pieces):
        return None               # `##1` and friends: a definition meant to run inside another macro
    if all(p.startswith("#") for p in pieces):
        numbers = [int(p[1]) for p in pieces]
        if numbers != list(range(1, len(numbers) + 1)):
            return None
        return MacroDef(name, body, ("m",) * len(numbers), declared_by="\\" + command), end
    template: list[Union[int, str]] = []
    expected = 1
    for p in pieces:
        if p.startswith("#"):
            if int(p[1]) != expected:
                return None
            expected += 1
            template.append(int(p[1]))
        else:
            template.append(p)
    return MacroDef(name, body, template=tuple(template), declared_by="\\" + command), end


def _parse_let(text: str, pos: int) -> Optional[tuple[str, str, int]]:
    m = _CS_RE.match(text, skip_spaces(text, pos))
    if not m:
        return None
    p = skip_spaces(text, m.end())
    if text.startswith("=", p):
        p = skip_spaces(text, p + 1)
    target = _CS_RE.match(text, p)
    if not target:
        return None
    return m.group(1), target.group(1), target.end()


def _parse_operator(text: str, pos: int, star: str) -> Optional[tuple[MacroDef, int]]:
    named = _read_name(text, pos)
    if not named:
        return None
    body = undelimited_argument(text, named[1])
    if body is None:
        return None
    return (MacroDef(named[0], f"\\operatorname{star}{{{body[0]}}}", declared_by="\\DeclareMathOperator" + star),
            body[1])


def _parse_paired_delimiter(text: str, pos: int) -> Optional[tuple[MacroDef, int]]:
    named = _read_name(text, pos)
    if not named:
        return None
    left = undelimited_argument(text, named[1])
    right = undelimited_argument(text, left[1]) if left else None
    if right is None:
        return None
    return (MacroDef(named[0], "", ("m",), delimiters=(left[0], right[0]), declared_by="\\DeclarePairedDelimiter"),
            right[1])


@functools.lru_cache(maxsize=8)
def _definitions(tex: str) -> tuple[_Definition, ...]:
    """Every macro definition in `tex`, in order; a definition's body is skipped, not scanned.

    Cached: a preamble is read for its definitions by several steps (conditionals, `\\expandafter`,
    the macro table, declaration wrappers), and a string's hash is computed once.
    """
    found: list[_Definition] = []

    def read(m: re.Match) -> int:
        command, star = m.group(1), m.group(2)
        parsed = None
        if command in ("newcommand", "renewcommand", "providecommand", "DeclareRobustCommand"):
            parsed = _parse_newcommand(tex, m.end(), command, star)
        elif command.endswith("DocumentCommand"):
            parsed = _parse_document_command(tex, m.end(), command)
        elif command in ("def", "gdef", "edef", "xdef"):
            parsed = _parse_def(tex, m.end() - len(star), command)
        elif command == "DeclareMathOperator":
            parsed = _parse_operator(tex, m.end(), star)
        elif command == "DeclarePairedDelimiter":
            parsed = _parse_paired_delimiter(tex, m.end())
        elif command == "let":
            let = _parse_let(tex, m.end() - len(star))
            if let:
                alias = MacroDef(let[0], "\\" + let[1], literal=True, declared_by="\\let")
                found.append(_Definition(m.start(), let[2], "let", alias, alias_of=let[1]))
                return let[2]
        if not parsed:
            return m.end()
        found.append(_Definition(m.start(), parsed[1], command, parsed[0]))
        return parsed[1]

    each_command(tex, _DEFINER_RE, read)
    return tuple(found)


def definition_spans(tex: str) -> list[tuple[int, int]]:
    """(start, end) of every macro definition in `tex`, in order: text that declares, not text that runs."""
    return [(d.start, d.end) for d in _definitions(tex)]


def collect_macros(tex: str, limits: Limits) -> MacroTable:
    """The user macros `tex` defines (a preamble plus the text of its local .sty/.cls files).

    `\\newcommand` keeps the first definition, `\\renewcommand` and `\\def` the latest,
    `\\providecommand` only fills a gap; `\\let` copies the meaning the right-hand side has at that
    point. Definitions whose syntax this module does not model are skipped, not guessed.
    """
    defs: dict[str, MacroDef] = {}
    for d in _definitions(tex):
        macro = d.macro
        if d.command == "let":
            source = defs.get(d.alias_of)
            if source is not None:
                defs[macro.name] = dataclasses.replace(source, name=macro.name, declared_by="\\let")
            elif macro.name != d.alias_of:
                defs[macro.name] = macro
            continue
        if d.command == "newcommand" and macro.name in defs:
            continue
        if d.command == "providecommand" and macro.name in defs:
            continue
        if d.command in ("edef", "xdef"):
            macro = dataclasses.replace(macro, body=_edef_body(macro.body, defs))
        defs[macro.name] = macro
    return _without_unexpandable(defs)


def _edef_body(body: str, defs: dict[str, MacroDef], depth: int = 0) -> str:
    """What `\\edef` stores: argument-free macros defined before expanded (at the definition, as TeX does),
    the token after a `\\noexpand` kept as written; macros with arguments and commands the table does not
    define stay (expanded when used, or left to TeX)."""
    out: list[str] = []
    pos = 0
    while True:
        m = _CS_RE.search(body, pos)
        if not m:
            break
        out.append(body[pos:m.start()])
        pos = m.end()
        name = m.group(1)
        if name == "noexpand":
            kept = _CS_RE.match(body, skip_spaces(body, pos))
            if kept:
                out.append(kept.group())
                pos = kept.end()
            continue
        macro = defs.get(name)
        if (macro is None or depth >= _MAX_EDEF_DEPTH or macro.args or macro.template is not None
                or macro.delimiters is not None or macro.literal):
            out.append(m.group())
            continue
        piece = _edef_body(macro.body, defs, depth + 1)
        out.append(piece)
        if is_letter(name[0]):
            pos = skip_spaces(body, pos)              # spaces after a control word are not text
        if pos < len(body) and is_letter(body[pos]) and _ENDS_WITH_CONTROL_WORD_RE.search(piece):
            out.append(" ")
    out.append(body[pos:])
    return "".join(out)


def _why_unexpandable(macro: MacroDef) -> Optional[str]:
    if macro.name in PRIMITIVE_NAMES:
        return "primitive"
    if "@" in macro.name:
        return "internal name"
    if macro.literal:
        return None
    if _PROGRAMMING_RE.search(macro.body):
        return "TeX programming in body"
    if any(m.group(1) == macro.name for m in _CS_RE.finditer(macro.body)):   # no regex compiled per macro
        return SELF_REFERENCE
    return None


def _without_unexpandable(defs: dict[str, MacroDef]) -> MacroTable:
    """A table of the macros that can be expanded as text; the others are named with a reason.

    A body full of `\\ifx`, `\\expandafter` or `\\@...` internals only means something to TeX, and a
    font switch redefined in terms of itself (`\\renewcommand\\scriptsize{...\\scriptsize...}`) would
    loop: such macros stay as written, which is what a reader of the statement needs anyway.
    """
    kept: dict[str, MacroDef] = {}
    reasons: dict[str, str] = {}
    for name, macro in defs.items():
        reason = _why_unexpandable(macro)
        if reason:
            reasons[name] = reason
        else:
            kept[name] = macro
    return MacroTable(kept, reasons, {name: defs[name] for name in reasons})
