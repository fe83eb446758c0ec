"""TeX conditionals of local packages, decided where their value is known.

A `.sty` often declares its theorem environments inside `\\if...\\else...\\fi` branches chosen by a
package option: `\\newif\\ifnumberedthm`, `\\DeclareOption{numbered}{\\numberedthmtrue}`,
`\\ProcessOptions`, then `\\ifnumberedthm \\newtheorem{...}[section] \\else ... \\fi`. Reading both
branches declares every environment twice. Here the switches are run as LaTeX runs them (options
given to `\\usepackage[...]`, `\\footrue`/`\\foofalse`, `\\ifdefined` of a macro defined earlier) and
the branch not taken is blanked (its newlines kept, so lines still count). A conditional whose value
is not known here (`\\ifpdf`, `\\ifx` of two macros) keeps both branches, as before.
"""
from __future__ import annotations

import dataclasses
import re

from transforms.latex.definitions import definition_spans
from transforms.latex.scan import CONTROL_SEQUENCE_RE, mandatory, skip_spaces

_TOKEN_RE = re.compile(
    r"\\(?P<newif>newif)\s*\\if(?P<newname>[A-Za-z@]+)"
    r"|\\(?P<declare>DeclareOption)(?P<declare_star>\*?)"
    r"|\\(?P<execute>ExecuteOptions)(?![A-Za-z@])"
    r"|\\(?P<process>ProcessOptions)(?P<process_star>\*?)"
    r"|\\(?P<if>if[A-Za-z@]*)(?![A-Za-z@])"
    r"|\\(?P<else>else|fi)(?![A-Za-z@])"
    r"|\\(?P<switch>[A-Za-z@]+)(?P<value>true|false)(?![A-Za-z@])")
# Commands named \if... that take arguments instead of opening a conditional (ifthen, etoolbox, \iff).
_NOT_CONDITIONALS = frozenset({
    "iff", "ifthenelse", "ifdef", "ifundef", "ifcsdef", "ifcsundef", "ifdefempty", "ifcsempty", "ifbool",
    "ifboolexpr", "iftoggle", "ifstrequal", "ifstrempty", "ifblank", "ifnumcomp", "ifdefstring", "ifdefmacro",
    "ifcsmacro", "ifpackageloaded", "ifclassloaded", "ifdefequal", "ifnumequal", "ifdimcomp", "ifnumodd",
})
_DEFINED_NAME_RE = re.compile(r"\\[A-Za-z]+\*?\s*\{?\s*\\([A-Za-z@]+)")


@dataclasses.dataclass
class Switches:
    """What the files read so far have set: `\\newif` booleans and the macros they defined."""

    booleans: dict[str, bool] = dataclasses.field(default_factory=dict)
    defined: set[str] = dataclasses.field(default_factory=set)


@dataclasses.dataclass
class _Frame:
    value: bool | None          # None: not known here, both branches kept
    in_else: bool = False

    def live(self) -> bool:
        return self.value is None or self.value != self.in_else


class _Resolver:
    def __init__(self, text: str, options: list[str], switches: Switches):
        self.text, self.options, self.switches = text, options, switches
        self.declared: dict[str, str] = {}       # package option -> its code
        self.stack: list[_Frame] = []
        self.out: list[str] = []

    def live(self) -> bool:
        return all(frame.live() for frame in self.stack)

    def emit(self, piece: str) -> None:
        self.out.append(piece if self.live() else "\n" * piece.count("\n"))

    def run(self) -> str:
        text = self.text
        spans = definition_spans(text)
        span = 0
        pos = 0
        while True:
            m = _TOKEN_RE.search(text, pos)
            if not m:
                break
            while span < len(spans) and spans[span][1] <= m.start():
                span += 1
            if span < len(spans) and spans[span][0] <= m.start():        # inside a definition: not run
                start, end = spans[span]
                self.emit(text[pos:start])
                self._definition(text[start:end])
                pos = end
                continue
            self.emit(text[pos:m.start()])
            pos = self._token(m)
        self.emit(text[pos:])
        return "".join(self.out)

    def _definition(self, piece: str) -> None:
        if self.live():
            named = _DEFINED_NAME_RE.match(piece)
            if named:
                self.switches.defined.add(named.group(1))
        self.emit(piece)

    def _token(self, m: re.Match) -> int:
        text, live = self.text, self.live()
        if m.group("newif"):
            if live:
                self.switches.booleans.setdefault(m.group("newname"), False)
        elif m.group("declare"):
            got = mandatory(text, m.end()) if not m.group("declare_star") else None
            code = mandatory(text, got[1]) if got else None
            if code and live:
                self.declared[got[0].strip()] = code[0]
            end = code[1] if code else m.end()
            self.emit(text[m.start():end])
            return end
        elif m.group("execute"):
            got = mandatory(text, m.end())
            if got and live:
                for option in got[0].split(","):
                    self._run_option(option.strip())
            end = got[1] if got else m.end()
            self.emit(text[m.start():end])
            return end
        elif m.group("process"):
            if live:
                order = self.options if m.group("process_star") else [o for o in self.declared if o in self.options]
                for option in order:
                    self._run_option(option)
        elif m.group("if"):
            return self._open(m)
        elif m.group("else"):
            return self._else_or_fi(m)
        elif m.group("switch") in self.switches.booleans and live:
            self.switches.booleans[m.group("switch")] = m.group("value") == "true"
        self.emit(m.group())
        return m.end()

    def _run_option(self, option: str) -> None:
        code = self.declared.get(option)
        if code:
            for m in _TOKEN_RE.finditer(code):
                if m.group("switch") in self.switches.booleans:
                    self.switches.booleans[m.group("switch")] = m.group("value") == "true"

    def _open(self, m: re.Match) -> int:
        name = m.group("if")[2:]
        if "if" + name in _NOT_CONDITIONALS:
            self.emit(m.group())
            return m.end()
        value, end = self._value(name, m.end())
        if value is None:
            self.emit(self.text[m.start():m.end()])
            end = m.end()
        else:
            self.emit("\n" * self.text.count("\n", m.start(), end))
        self.stack.append(_Frame(value if self.live() else None))
        return end

    def _value(self, name: str, pos: int) -> tuple[bool | None, int]:
        """The value of `\\if<name>` and where its test ends; None when not known here."""
        if name in self.switches.booleans:
            return self.switches.booleans[name], pos
        if name in ("true", "false"):
            return name == "true", pos
        if name == "defined":
            cs = CONTROL_SEQUENCE_RE.match(self.text, skip_spaces(self.text, pos))
            if cs and cs.group(1) in self.switches.defined:
                return True, cs.end()
        return None, pos

    def _else_or_fi(self, m: re.Match) -> int:
        frame = self.stack[-1] if self.stack else None
        known = frame is not None and frame.value is not None
        if m.group("else") == "else":
            if frame is not None:
                frame.in_else = True
        elif frame is not None:
            self.stack.pop()
        if known:
            self.emit("")
        else:
            self.emit(m.group())
        return m.end()


def resolve_conditionals(text: str, options: list[str], switches: Switches) -> str:
    """`text` (a package or class) with the branches of known conditionals not taken blanked.

    `options` are the options it was loaded with; `switches` carries booleans and definitions from
    file to file and is updated.
    """
    if "\\if" not in text:
        return text
    return _Resolver(text, options, switches).run()
