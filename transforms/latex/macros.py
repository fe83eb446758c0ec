"""User macros expanded in statements, with a table from `definitions.py`.

Expansion is one left-to-right pass per text that stops only at names the table defines (one
compiled alternation of those names, factored as a trie), with a depth bound on nested expansion
and a size bound on the output. A macro that recurses or blows up is given up on: its invocation
is left as written, its name is recorded, and expansion goes on with the rest.

Only linear regexes are used here (literals, character classes and bounded lookaheads); arguments
are read by `scan.py`, so no input can make this module backtrack.
"""
from __future__ import annotations

import bisect
import dataclasses
import re
from typing import Callable, Optional

from transforms.latex.definitions import MacroDef, MacroTable, collect_macros
from transforms.latex.model import Limits
from transforms.latex.numbering import render_value
from transforms.latex.scan import (CONTROL_SEQUENCE_RE as _CS_RE, delimited_argument, group_end, is_letter,
                                   skip_spaces, undelimited_argument)

# collect_macros is part of this module's interface: callers collect a table and expand with it.
__all__ = ["MacroTable", "collect_macros", "expand_macros"]

_PARAM_RE = re.compile(r"#(#|[1-9])")


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
            got = (delimited_argument(text, pos, following) if isinstance(following, str)
                   else undelimited_argument(text, pos))
            if got is None:
                return None
            args.append(got[0])
            pos = got[1]
        return args, pos
    for spec in macro.args:
        if spec == "m":
            got = undelimited_argument(text, pos)
            if got is None:
                return None
            args.append(got[0])
            pos = got[1]
        else:
            p = skip_spaces(text, pos)
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
    p = skip_spaces(text, pos)
    size = ""
    if text.startswith("*", p):
        size, p = "*", p + 1
    elif text.startswith("[", p):
        end = group_end(text, p)
        if end < 0:
            return None
        size, p = text[p + 1:end - 1].strip(), end
    got = undelimited_argument(text, p)
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


def _ends_with_control_word(s: str) -> bool:
    """Whether `s` ends in `\\name` (so a letter appended to it would change the name)."""
    i = len(s) - 1
    while i >= 0 and is_letter(s[i]):
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
    if out and piece and is_letter(piece[0]) and _ends_with_control_word(out[-1]):
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
        if end < n and is_letter(text[end]) and _ends_with_control_word(piece):
            out.append(" ")
        pos = end
    out.append(text[pos:])
    return "".join(out)


def expansion_state(table: MacroTable, limits: Limits) -> _State:
    """What expansions with `table` share: the compiled names and the limits."""
    return _State(table, table.pattern(), limits.macro_depth, limits.macro_output_bytes)


def expand_call(macro: MacroDef, text: str, pos: int, state: _State) -> tuple[Optional[str], int]:
    """One call of `macro` whose arguments start at text[pos], expanded as if nested once.

    Returns (expansion, index after the arguments), or (None, index to resume at) when the arguments
    are missing or the expansion hits a limit, so the caller leaves the call as written.
    """
    read = _read_args(macro, text, pos)
    if read is None:
        return None, pos
    args, end = read
    try:
        return _expand(_substitute(macro.body, args), state, 1), end
    except _GiveUp:
        return None, end


def expand_macros(text: str, table: MacroTable, limits: Limits) -> tuple[str, list[str]]:
    """`text` with the table's macros expanded, and the names (with backslash) given up on.

    A macro is given up on when its arguments are missing, when nested expansion goes deeper than
    `limits.macro_depth`, or when the output would exceed `limits.macro_output_bytes`; its
    invocations are then left as written and the rest of the text is still expanded.
    """
    pattern = table.pattern()
    if pattern is None or "\\" not in text:
        return text, []
    state = expansion_state(table, limits)
    try:
        expanded = _expand(text, state, 0)
    except _GiveUp as give_up:       # only raised past depth 0 when the top level rethrows
        state.fail(give_up.name)
        expanded = text
    return expanded, state.failed


_EXPANDAFTER_RE = re.compile(r"\\expandafter(?![A-Za-z@])")
_CSNAME_RE = re.compile(r"\\csname\s*([A-Za-z@]+)\s*\\endcsname")
_CSNAME_START_RE = re.compile(r"\\csname(?![A-Za-z@])\s*")
_NAME_RE = re.compile(r"[A-Za-z@]+")
# TeX's own commands that print a counter's value: \the\value{c}, \number\c@c, \romannumeral\value{c}
_COUNTER_VALUE_RE = re.compile(r"\\(the|number|romannumeral)\s*(?:\\value\s*\{\s*([A-Za-z@]+)\s*\}|\\c@([A-Za-z@]+))")
_COUNTER_COMMAND_RE = re.compile(r"\\(newcounter|setcounter|addtocounter|stepcounter|refstepcounter)\s*"
                                 r"\{\s*([A-Za-z@]+)\s*\}(?:\s*\{\s*(-?\d+)\s*\})?")
_MAX_EXPANDAFTER_CHAIN = 16
_MAX_CSNAME = 200


@dataclasses.dataclass
class _Preamble:
    """What `\\expandafter` may expand with: the macro table (collected only when first asked for) and
    the counters' values at the point reached (`\\newcounter`, `\\setcounter`, ... run in order)."""

    table: Callable[[], MacroTable]
    counters: dict[str, int] = dataclasses.field(default_factory=dict)

    def count(self, m: re.Match) -> None:
        command, name, value = m.group(1), m.group(2), m.group(3)
        if command == "newcounter":
            self.counters.setdefault(name, 0)
        elif command in ("stepcounter", "refstepcounter"):
            if name in self.counters:
                self.counters[name] += 1
        elif value is not None and (command == "setcounter" or name in self.counters):
            self.counters[name] = int(value) + (self.counters[name] if command == "addtocounter" else 0)

    def value(self, text: str, pos: int) -> Optional[tuple[str, int]]:
        """`\\the\\value{c}` (or `\\number`, `\\romannumeral`, of `\\c@c`) at text[pos] as TeX prints it, when
        the counter's value is known here."""
        m = _COUNTER_VALUE_RE.match(text, pos)
        counter = m and (m.group(2) or m.group(3))
        if not m or counter not in self.counters:
            return None
        n = self.counters[counter]
        return render_value("roman" if m.group(1) == "romannumeral" else "arabic", n), m.end()


def _csname(text: str, pos: int, known: _Preamble) -> Optional[tuple[str, int]]:
    """`\\csname ... \\endcsname` at text[pos] as the control sequence it builds: its characters, counter
    values (`\\the\\value{c}`, `\\number`, `\\romannumeral`) and argument-free macros of the table expanded.
    A name that is not all letters is kept in `\\csname` form; None when something in it is not known."""
    m = _CSNAME_START_RE.match(text, pos)
    if not m:
        return None
    name: list[str] = []
    pos = m.end()
    while pos < len(text) and sum(map(len, name)) <= _MAX_CSNAME:
        if text.startswith("\\endcsname", pos):
            built = "".join(name).strip()
            end = pos + len("\\endcsname")
            return ("\\" + built if _NAME_RE.fullmatch(built) else f"\\csname {built}\\endcsname"), end
        if text[pos] in "{}":
            return None
        if text[pos] != "\\":
            name.append(text[pos])
            pos += 1
            continue
        value = known.value(text, pos)
        if value is not None:
            name.append(value[0])
            pos = value[1]
            continue
        cs = _CS_RE.match(text, pos)
        macro = known.table().defs.get(cs.group(1)) if cs else None
        if macro is None or macro.args or macro.template is not None or macro.delimiters or "\\" in macro.body:
            return None
        name.append(macro.body)
        pos = skip_spaces(text, cs.end()) if is_letter(cs.group(1)[0]) else cs.end()
    return None


def _one_step(text: str, pos: int, known: _Preamble, chain: int) -> Optional[tuple[str, int]]:
    """The token (with its arguments) at text[pos] expanded once, as TeX's `\\expandafter` expands the
    token after the next: (its expansion, index after it); None when that is not known here."""
    pos = skip_spaces(text, pos)
    if pos >= len(text):
        return None
    if text[pos] != "\\":
        return text[pos], pos + 1                       # a character expands to itself
    csname = _CSNAME_RE.match(text, pos)
    if csname:
        return "\\" + csname.group(1), csname.end()
    m = _CS_RE.match(text, pos)
    name = m.group(1)
    if name == "expandafter":
        return _expand_after_at(text, m.end(), known, chain + 1)
    if name == "csname":
        return _csname(text, pos, known)
    if name in ("the", "number", "romannumeral"):
        return known.value(text, pos)
    if name == "noexpand":                              # the next token, not expanded
        after = _CS_RE.match(text, skip_spaces(text, m.end()))
        return (after.group(), after.end()) if after else None
    macro = known.table().defs.get(name) if is_letter(name[0]) else None
    if macro is None or macro.delimiters is not None or macro.literal:
        return (m.group(), m.end()) if not is_letter(name[0]) else None   # \{ and kin: unexpandable
    read = _read_args(macro, text, m.end())
    return None if read is None else (_substitute(macro.body, read[0]), read[1])


def _expand_after_at(text: str, pos: int, known: _Preamble, chain: int) -> Optional[tuple[str, int]]:
    """`\\expandafter X Y` with text[pos] at X: X followed by Y expanded once, and where Y ended."""
    if chain > _MAX_EXPANDAFTER_CHAIN:
        return None
    pos = skip_spaces(text, pos)
    if pos >= len(text):
        return None
    first = _CS_RE.match(text, pos) if text[pos] == "\\" else None
    kept, after = (first.group(), first.end()) if first else (text[pos], pos + 1)
    expanded = _one_step(text, after, known, chain)
    if expanded is None:
        return None
    piece = expanded[0]
    if first and is_letter(first.group(1)[0]) and piece[:1].isalpha():
        kept += " "                                     # `\newtheorem` then `lemma`: keep them apart
    return kept + piece, expanded[1]


def expand_after(text: str, table: Callable[[], MacroTable], skip: list[tuple[int, int]] = ()) -> str:
    """`text` with each `\\expandafter` run once: `\\expandafter\\def\\csname name\\endcsname{...}` becomes
    `\\def\\name {...}` and `\\expandafter\\newtheorem\\expandafter{\\lemmaname}` becomes
    `\\newtheorem{lemma}`, so the definitions and declarations they build are read like written ones.

    The token after the next is expanded one step: a `\\csname` (of letters, counter values and
    argument-free macros), a macro of `table()` (its body with the arguments put in; the table is asked
    for only then), `\\the`/`\\number`/`\\romannumeral` of a counter whose value the text set before
    (`\\newcounter`, `\\setcounter`, `\\addtocounter`, `\\stepcounter`), `\\noexpand` (the token after it),
    another `\\expandafter` (chains), a character (itself). When it is anything else (a command of a
    package this run cannot see) the `\\expandafter` stays as written. Text in the `skip` spans
    (definition bodies, which run only when called) is copied unchanged and sets no counter.
    """
    out: list[str] = []
    pos = 0
    spans = iter(skip)
    span = next(spans, None)
    known = _Preamble(table)
    counting = _COUNTER_COMMAND_RE.finditer(text) if "counter" in text else iter(())
    count = next(counting, None)
    for m in _EXPANDAFTER_RE.finditer(text):
        if m.start() < pos:
            continue
        while span is not None and span[1] <= m.start():
            span = next(spans, None)
        while count is not None and count.start() < m.start():
            if not _inside(count.start(), skip):
                known.count(count)
            count = next(counting, None)
        if span is not None and span[0] <= m.start():
            continue
        done = _expand_after_at(text, m.end(), known, 0)
        if done is None:
            continue
        out.append(text[pos:m.start()])
        out.append(done[0])
        pos = done[1]
        if pos < len(text) and is_letter(text[pos]) and _ends_with_control_word(done[0]):
            out.append(" ")
    if not out:
        return text
    out.append(text[pos:])
    return "".join(out)


def _inside(pos: int, spans: list[tuple[int, int]]) -> bool:
    i = bisect.bisect_right(spans, (pos, float("inf"))) - 1
    return i >= 0 and spans[i][0] < pos < spans[i][1]
