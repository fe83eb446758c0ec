"""User macros: collect their definitions from a preamble, expand them in statements.

Authors write `\\R`, `\\abs{x}` or `\\Hom` instead of what they mean; the normalized statement should
carry the meaning. Expansion is one left-to-right pass per text that stops only at names the table
defines (one compiled alternation of those names, factored as a trie), with a depth bound on nested
expansion and a size bound on the output. A macro that recurses or blows up is given up on: its
invocation is left as written, its name is recorded, and expansion goes on with the rest.

Only linear regexes are used here (literals, character classes and bounded lookaheads); brace
matching is a counting scan, so no input can make this module backtrack.
"""
from __future__ import annotations

import dataclasses
import re
from typing import Iterator, Optional, Union

from transforms.latex import scan
from transforms.latex.model import Limits

# Commands whose appearance in a macro body makes that macro a declaration wrapper.
DECLARATION_COMMANDS = (
    "newtheorem", "renewtheorem", "declaretheorem", "spnewtheorem", "newmdtheoremenv",
    "newaliascnt", "aliascntresetthe", "theoremstyle", "newtcbtheorem", "newthm",
)

_DEFINERS = (
    "newcommand", "renewcommand", "providecommand", "DeclareRobustCommand",
    "def", "gdef", "edef", "xdef", "let", "DeclareMathOperator", "DeclarePairedDelimiter",
    "NewDocumentCommand", "RenewDocumentCommand", "ProvideDocumentCommand", "DeclareDocumentCommand",
)
_DEFINER_RE = re.compile(r"\\(" + "|".join(sorted(_DEFINERS, key=len, reverse=True)) + r")(?![A-Za-z@])(\*?)")
_CS_RE = re.compile(r"\\([A-Za-z@]+|.)", re.S)
_PARAM_RE = re.compile(r"#(#|[1-9])")
# Bodies that only TeX itself can run: conditionals, expansion control, internal (@) commands.
_PROGRAMMING_RE = re.compile(
    r"\\(?:if[A-Za-z]*|else|fi|or|expandafter|noexpand|csname|endcsname|futurelet|afterassignment"
    r"|aftergroup|edef|xdef|gdef|def|let|global|ifthenelse|ifstrempty|IfNoValueTF|IfValueTF|IfBooleanTF"
    r"|NewDocumentCommand|newcommand|renewcommand|providecommand)(?![A-Za-z@])"
    r"|\\(?:[A-Za-z]+@[A-Za-z@]*|@[A-Za-z@]+)")        # internals, but not the spacing command \\@
PRIMITIVE_NAMES = frozenset({"expandafter", "noexpand", "csname", "endcsname", "global", "relax", "let",
                             "def", "edef", "gdef", "xdef", "begingroup", "endgroup", "the", "par"})
_DEF_PARAM_SPLIT_RE = re.compile(r"(#[1-9])")
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
    _pattern: Optional[re.Pattern] = dataclasses.field(default=None, repr=False, compare=False)

    def __len__(self) -> int:
        return len(self.defs)

    def __contains__(self, name: str) -> bool:
        return name in self.defs

    def pattern(self) -> Optional[re.Pattern]:
        """One alternation of every defined name, as a trie, each name ending at a word boundary."""
        names = [*self.defs, *self.recursive()]
        if self._pattern is None and names:
            self._pattern = re.compile(r"\\" + _trie_regex(_trie(names), ""))
        return self._pattern

    def recursive(self) -> list[str]:
        """Left-out macros whose body calls themselves: a use of one is recorded as not expanded."""
        return [name for name, reason in self.unexpandable.items() if reason == SELF_REFERENCE]


def _trie(names) -> dict:
    root: dict = {}
    for name in names:
        node = root
        for c in name:
            node = node.setdefault(c, {})
        node[""] = {}
    return root


def _trie_regex(node: dict, last: str) -> str:
    """The names below `node` as nested alternations of their common prefixes.

    Factoring prefixes lets the regex engine reject a control sequence after a character or two
    instead of trying every name in turn: many times faster than a flat `\\(?:name1|name2|...)`
    with hundreds of names. Longer names come first, so `\\Rightarrow` is not read as `\\R`.
    """
    branches = [re.escape(c) + _trie_regex(child, c) for c, child in sorted(node.items()) if c]
    if "" in node:
        branches.append("(?![A-Za-z@])" if _is_letter(last) else "")
    return branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"


# ---------------------------------------------------------------------------------------------
# Scanning helpers (all linear)

def group_end(text: str, start: int) -> int:
    """Index just after the `{...}` (or `[...]`) group opening at `start`; -1 if unbalanced."""
    found = scan.group(text, start, max_len=len(text))
    return found[1] if found else -1


def _read_token_or_group(text: str, pos: int) -> Optional[tuple[str, int]]:
    """An undelimited TeX argument at `pos` (spaces skipped): a group's content or one token."""
    pos = scan.skip_spaces(text, pos)
    if pos >= len(text):
        return None
    c = text[pos]
    if c == "{":
        end = group_end(text, pos)
        return None if end < 0 else (text[pos + 1:end - 1], end)
    if c == "}":
        return None
    if c == "\\":
        m = _CS_RE.match(text, pos)
        return (m.group(), m.end()) if m else None
    return c, pos + 1


def _read_delimited(text: str, pos: int, delimiter: str) -> Optional[tuple[str, int]]:
    """A `\\def` argument delimited by `delimiter` at brace depth 0; one outer brace pair removed."""
    depth = 0
    i = pos
    n = len(text)
    first = delimiter[0]
    while i < n:
        c = text[i]
        if c == "\\":
            i += 2
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth < 0:
                return None
        elif depth == 0 and c == first and text.startswith(delimiter, i):
            arg = text[pos:i]
            if arg.startswith("{") and group_end(arg, 0) == len(arg):
                arg = arg[1:-1]
            return arg, i + len(delimiter)
        i += 1
    return None


def _read_name(text: str, pos: int) -> Optional[tuple[str, int]]:
    """The command being defined: `\\foo` or `{\\foo}`; returns (name without backslash, end)."""
    pos = scan.skip_spaces(text, pos)
    if text.startswith("{", pos):
        end = group_end(text, pos)
        if end < 0:
            return None
        m = _CS_RE.fullmatch(text[pos + 1:end - 1].strip())
        return (m.group(1), end) if m else None
    m = _CS_RE.match(text, pos)
    return (m.group(1), m.end()) if m else None


# ---------------------------------------------------------------------------------------------
# Collecting definitions

@dataclasses.dataclass
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
    p = scan.skip_spaces(text, pos)
    if text.startswith("[", p):
        end = group_end(text, p)
        if end < 0 or not text[p + 1:end - 1].strip().isdigit():
            return None
        n_args = int(text[p + 1:end - 1].strip())
        pos = end
        p = scan.skip_spaces(text, pos)
        if text.startswith("[", p):
            end = group_end(text, p)
            if end < 0:
                return None
            default = text[p + 1:end - 1]
            pos = end
    body = _read_token_or_group(text, pos)
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
    spec = _read_token_or_group(text, pos)
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
    body = _read_token_or_group(text, spec[1])
    if body is None:
        return None
    return MacroDef(name, body[0], tuple(args), declared_by="\\" + command), body[1]


def _parse_def(text: str, pos: int, command: str) -> Optional[tuple[MacroDef, int]]:
    m = _CS_RE.match(text, scan.skip_spaces(text, pos))
    if not m:
        return None
    name = m.group(1)
    open_brace = text.find("{", m.end())
    if open_brace < 0:
        return None
    params = text[m.end():open_brace]
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
    m = _CS_RE.match(text, scan.skip_spaces(text, pos))
    if not m:
        return None
    p = scan.skip_spaces(text, m.end())
    if text.startswith("=", p):
        p = scan.skip_spaces(text, p + 1)
    target = _CS_RE.match(text, p)
    if not target:
        return None
    return m.group(1), target.group(1), target.end()


def _parse_operator(text: str, pos: int, star: str) -> Optional[tuple[MacroDef, int]]:
    named = _read_name(text, pos)
    if not named:
        return None
    body = _read_token_or_group(text, named[1])
    if body is None:
        return None
    return (MacroDef(named[0], f"\\operatorname{star}{{{body[0]}}}", declared_by="\\DeclareMathOperator" + star),
            body[1])


def _parse_paired_delimiter(text: str, pos: int) -> Optional[tuple[MacroDef, int]]:
    named = _read_name(text, pos)
    if not named:
        return None
    left = _read_token_or_group(text, named[1])
    right = _read_token_or_group(text, left[1]) if left else None
    if right is None:
        return None
    return (MacroDef(named[0], "", ("m",), delimiters=(left[0], right[0]), declared_by="\\DeclarePairedDelimiter"),
            right[1])


def _iter_definitions(tex: str) -> Iterator[_Definition]:
    """Every macro definition in `tex`, in order; a definition's body is skipped, not scanned."""
    pos = 0
    while True:
        m = _DEFINER_RE.search(tex, pos)
        if not m:
            return
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
                parsed = (MacroDef(let[0], "\\" + let[1], literal=True, declared_by="\\let"), let[2])
                yield _Definition(m.start(), let[2], "let", parsed[0], alias_of=let[1])
                pos = let[2]
                continue
        if parsed:
            yield _Definition(m.start(), parsed[1], command, parsed[0])
            pos = parsed[1]
        else:
            pos = m.end()


def collect_macros(tex: str, limits: Limits) -> MacroTable:
    """The user macros `tex` defines (a preamble plus the text of its local .sty/.cls files).

    `\\newcommand` keeps the first definition, `\\renewcommand` and `\\def` the latest,
    `\\providecommand` only fills a gap; `\\let` copies the meaning the right-hand side has at that
    point. Definitions whose syntax this module does not model are skipped, not guessed.
    """
    defs: dict[str, MacroDef] = {}
    for d in _iter_definitions(tex):
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
        defs[macro.name] = macro
    return _without_unexpandable(defs)


def _why_unexpandable(macro: MacroDef) -> Optional[str]:
    if macro.name in PRIMITIVE_NAMES:
        return "primitive"
    if "@" in macro.name:
        return "internal name"
    if macro.literal:
        return None
    if _PROGRAMMING_RE.search(macro.body):
        return "TeX programming in body"
    if re.search(r"\\" + re.escape(macro.name) + r"(?![A-Za-z@])", macro.body):
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


# ---------------------------------------------------------------------------------------------
# Expansion

class _GiveUp(Exception):
    """Raised inside a nested expansion when the depth or size limit is hit."""

    def __init__(self, name: str):
        super().__init__(name)
        self.name = name


@dataclasses.dataclass
class _State:
    table: MacroTable
    pattern: re.Pattern
    max_depth: int
    max_bytes: int
    disabled: set = dataclasses.field(default_factory=set)
    failed: list = dataclasses.field(default_factory=list)
    dangling: Optional[str] = None     # an incomplete call at the very end of a nested expansion

    def fail(self, name: str, disable: bool = True) -> None:
        """Record `name` as not expanded; a disabled name is left as written from now on."""
        if "\\" + name not in self.failed:
            self.failed.append("\\" + name)
        if disable:
            self.disabled.add(name)


def _read_args(macro: MacroDef, text: str, pos: int) -> Optional[tuple[list[str], int]]:
    """The arguments of one invocation starting at `pos`, or None when they are not there."""
    args: list[str] = []
    if macro.delimiters is not None:
        return _read_paired_args(text, pos)
    if macro.template is not None:
        items = macro.template
        for i, item in enumerate(items):
            if isinstance(item, str):
                if i == 0 or not isinstance(items[i - 1], int):
                    if not text.startswith(item, pos):
                        return None
                    pos += len(item)
                continue
            following = items[i + 1] if i + 1 < len(items) else None
            got = (_read_delimited(text, pos, following) if isinstance(following, str)
                   else _read_token_or_group(text, pos))
            if got is None:
                return None
            args.append(got[0])
            pos = got[1]
        return args, pos
    for spec in macro.args:
        if spec == "m":
            got = _read_token_or_group(text, pos)
            if got is None:
                return None
            args.append(got[0])
            pos = got[1]
        else:
            p = scan.skip_spaces(text, pos)
            if text.startswith("[", p):
                end = group_end(text, p)
                if end < 0:
                    return None
                args.append(text[p + 1:end - 1])
                pos = end
            else:
                args.append(spec[1])
    return args, pos


def _read_paired_args(text: str, pos: int) -> Optional[tuple[list[str], int]]:
    """[size or "*" or "", argument] of a paired-delimiter call."""
    p = scan.skip_spaces(text, pos)
    size = ""
    if text.startswith("*", p):
        size, p = "*", p + 1
    elif text.startswith("[", p):
        end = group_end(text, p)
        if end < 0:
            return None
        size, p = text[p + 1:end - 1].strip(), end
    got = _read_token_or_group(text, p)
    return None if got is None else ([size, got[0]], got[1])


def _paired(macro: MacroDef, size: str, arg: str) -> str:
    """What mathtools typesets for `\\abs{x}`, `\\abs*{x}` and `\\abs[\\big]{x}`, as plain LaTeX."""
    left, right = macro.delimiters
    if size == "*":
        left, right = "\\left" + left, "\\right" + right
    elif size:
        left, right = size + "l" + left, size + "r" + right
    out: list[str] = []
    for piece in (left, arg, right):
        _join(out, piece)
    return "".join(out)


def _substitute(body: str, args: list[str]) -> str:
    if not args and "#" not in body:
        return body

    def replace(m: re.Match) -> str:
        g = m.group(1)
        if g == "#":
            return "#"
        i = int(g) - 1
        return args[i] if i < len(args) else m.group()

    return _PARAM_RE.sub(replace, body)


def _is_letter(c: str) -> bool:
    return ("a" <= c <= "z") or ("A" <= c <= "Z") or c == "@"


def _ends_with_control_word(s: str) -> bool:
    """Whether `s` ends in `\\name` (so a letter appended to it would change the name)."""
    i = len(s) - 1
    while i >= 0 and _is_letter(s[i]):
        i -= 1
    if i == len(s) - 1 or i < 0 or s[i] != "\\":
        return False
    backslashes = 0
    while i >= 0 and s[i] == "\\":
        backslashes += 1
        i -= 1
    return backslashes % 2 == 1


def _join(out: list[str], piece: str) -> None:
    """Append `piece`, keeping a control word before it from swallowing its leading letter."""
    if out and piece and _is_letter(piece[0]) and _ends_with_control_word(out[-1]):
        out.append(" ")
    out.append(piece)


MAX_DANGLING_TAIL = 500        # characters of an incomplete call that may wait for outside arguments
MAX_SPLICES = 200              # per text: each splice copies the rest of the text once


def _expand(text: str, state: _State, depth: int) -> str:
    """`text` with macros expanded; nested results are expanded again up to the depth limit.

    A body may end in a call whose arguments follow the invocation (`\\def\\pizero{\\trunc0}` used as
    `\\pizero{X}`): the nested level returns that incomplete call as `state.dangling`, and the level
    that has the following text splices the call back in front of it and rescans, as TeX would.
    """
    out: list[str] = []
    size = 0
    pos = 0
    n = len(text)
    splices = 0
    while pos < n:
        m = state.pattern.search(text, pos)
        if not m:
            break
        name = m.group()[1:]
        out.append(text[pos:m.start()])
        pos = m.end()
        macro = state.table.defs.get(name)
        if macro is None or name in state.disabled:
            if macro is None:                       # a self-referencing macro: recursion, on record
                state.fail(name)
            out.append(m.group())
            continue
        read = _read_args(macro, text, pos)
        if read is None:
            tail = text[m.start():].rstrip()
            if depth > 0 and len(tail) <= MAX_DANGLING_TAIL and "}" not in tail:
                state.dangling = tail
                out.append(tail)
                return "".join(out)
            state.fail(name, disable=False)
            out.append(m.group())
            continue
        args, end = read
        piece = _paired(macro, *args) if macro.delimiters else _substitute(macro.body, args)
        if not macro.literal and "\\" in piece:
            if depth >= state.max_depth:
                raise _GiveUp(name)
            try:
                piece = _expand(piece, state, depth + 1)
            except _GiveUp as give_up:
                if depth > 0:
                    raise
                state.fail(give_up.name)
                state.fail(name)
                out.append(text[m.start():end])
                pos = end
                continue
            if state.dangling is not None:
                tail, rest = state.dangling, text[end:]
                if depth > 0 and not rest.strip():
                    out.append(piece)              # still at the end: the caller has the arguments
                    return "".join(out)
                state.dangling = None
                if rest.strip() and splices < MAX_SPLICES:
                    splices += 1
                    _join(out, piece[:len(piece) - len(tail)])
                    text, pos, n = tail + rest, 0, len(tail) + len(rest)
                    continue
                state.fail(_CS_RE.match(tail).group(1), disable=False)
        size += len(piece)
        if size > state.max_bytes or len(piece) > state.max_bytes:
            if depth > 0:
                raise _GiveUp(name)
            state.fail(name)
            out.append(text[m.start():end])
            pos = end
            continue
        _join(out, piece)
        if end < n and _is_letter(text[end]) and _ends_with_control_word(piece):
            out.append(" ")
        pos = end
    out.append(text[pos:])
    return "".join(out)


def expand_macros(text: str, table: MacroTable, limits: Limits) -> tuple[str, list[str]]:
    """`text` with the table's macros expanded, and the names (with backslash) given up on.

    A macro is given up on when its arguments are missing, when nested expansion goes deeper than
    `limits.macro_depth`, or when the output would exceed `limits.macro_output_bytes`; its
    invocations are then left as written and the rest of the text is still expanded.
    """
    pattern = table.pattern()
    if pattern is None or "\\" not in text:
        return text, []
    state = _State(table, pattern, limits.macro_depth, limits.macro_output_bytes)
    try:
        expanded = _expand(text, state, 0)
    except _GiveUp as give_up:       # only raised past depth 0 when the top level rethrows
        state.fail(give_up.name)
        expanded = text
    return expanded, state.failed


def _wrapper_names(defs: dict[str, MacroDef]) -> set[str]:
    """Macros whose body declares theorem environments, directly or through other wrappers."""
    decl_re = re.compile(r"\\(?:" + "|".join(DECLARATION_COMMANDS) + r")(?![A-Za-z@])")
    wrappers = {name for name, d in defs.items() if decl_re.search(d.body)}
    changed = bool(wrappers)
    while changed:
        changed = False
        for name, d in defs.items():
            if name in wrappers:
                continue
            used = {m.group(1) for m in _CS_RE.finditer(d.body)}
            if used & wrappers:
                wrappers.add(name)
                changed = True
    return wrappers


def expand_declaration_wrappers(preamble: str, table: MacroTable, limits: Limits) -> str:
    """`preamble` with calls of author wrappers that declare theorem environments expanded.

    `\\defthm{lem}{Lemma}{Lemmas}` whose body runs `\\newtheorem{#1}[#1]{#2}` becomes that
    `\\newtheorem` line, so discovery and numbering see plain declarations. Definitions themselves
    (including the wrapper's own `\\def`) are copied unchanged.
    """
    every = {**table.left_out, **table.defs}     # a wrapper may well be TeX programming itself
    wrappers = _wrapper_names(every)
    if not wrappers:
        return preamble
    wrapper_table = MacroTable({n: d for n, d in every.items() if n in wrappers})
    pattern = wrapper_table.pattern()
    combined = MacroTable({**table.defs, **wrapper_table.defs})
    state = _State(combined, combined.pattern(), limits.macro_depth, limits.macro_output_bytes)
    out: list[str] = []
    pos = 0
    spans = [(d.start, d.end) for d in _iter_definitions(preamble)]
    span_index = 0
    while True:
        m = pattern.search(preamble, pos)
        if not m:
            break
        while span_index < len(spans) and spans[span_index][1] <= m.start():
            span_index += 1
        if span_index < len(spans) and spans[span_index][0] <= m.start():
            end = spans[span_index][1]
            out.append(preamble[pos:end])
            pos = end
            continue
        macro = wrapper_table.defs[m.group()[1:]]
        read = _read_args(macro, preamble, m.end())
        if read is None:
            out.append(preamble[pos:m.end()])
            pos = m.end()
            continue
        args, end = read
        piece = _substitute(macro.body, args)
        try:
            piece = _expand(piece, state, 1)
        except _GiveUp:
            out.append(preamble[pos:end])
            pos = end
            continue
        out.append(preamble[pos:m.start()])
        out.append(piece)
        pos = end
    out.append(preamble[pos:])
    return "".join(out)
