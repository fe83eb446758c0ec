"""TeX conditionals of local packages and of the preamble, decided where their value is known.

A `.sty` often declares its theorem environments inside `\\if...\\else...\\fi` branches chosen by a
package option: `\\newif\\ifnumberedthm`, `\\DeclareOption{numbered}{\\numberedthmtrue}`,
`\\ProcessOptions`, then `\\ifnumberedthm \\newtheorem{...}[section] \\else ... \\fi`. Reading both
branches declares every environment twice. Here the switches are run as LaTeX runs them (options
given to `\\usepackage[...]`, `\\footrue`/`\\foofalse`, `\\let\\iffoo\\iftrue` (or `\\iffalse`, or another
switch), `\\ifdefined`, `\\ifcsname` and `\\@ifundefined` of a macro defined earlier, `\\ifx` of two tokens
whose meanings the document gives or that one `\\let` made equal) and the branch not
taken is blanked (its newlines kept, so lines still count). A conditional whose value is not known
here (`\\ifpdf`, `\\ifx\\foo\\undefined` of a command some package not in the submission may define)
keeps both branches (a command that only the code of an option not given defines is undefined, as after
`\\ProcessOptions`); a definition read from such a conditional counts from the branch that makes it
first (`first_definitions`), as `\\newcommand` keeps a first definition.

The document body is run the same way (`resolve_body_conditionals`), with what the preamble left known,
but the branch not taken is blanked character for character, so offsets into the body (statement
locations) still hold; a body whose decided conditionals do not all close is left as written.
"""
from __future__ import annotations

import dataclasses
import re
from typing import Callable, Optional

from transforms.latex.definitions import definition_spans
from transforms.latex.scan import CONTROL_SEQUENCE_RE, is_letter, mandatory, skip_spaces


def _token_re(switch: str) -> re.Pattern:
    """The tokens the resolver runs; `switch` matches the names of `\\footrue`/`\\foofalse` switches.
    The backslash is factored out so that the regex engine jumps from backslash to backslash."""
    return re.compile(
        r"\\(?:(?P<newif>newif)\s*\\if(?P<newname>[A-Za-z@]+)"
        r"|(?P<declare>DeclareOption)(?P<declare_star>\*?)"
        r"|(?P<execute>ExecuteOptions)(?![A-Za-z@])"
        r"|(?P<process>ProcessOptions)(?P<process_star>\*?)"
        r"|(?:expandafter\s*\\)?(?P<if>if[A-Za-z@]*)(?![A-Za-z@])"
        r"|(?P<else>else|fi)(?![A-Za-z@])"
        r"|(?P<ifundefined>@ifundefined)(?![A-Za-z@])"
        r"|(?P<switch>" + switch + r")(?P<value>true|false)(?![A-Za-z@]))")


_TOKEN_RE = _token_re(r"[A-Za-z@]+")
# Commands named \if... that take arguments instead of opening a conditional (ifthen, etoolbox, \iff).
_NOT_CONDITIONALS = frozenset({
    "iff", "ifthenelse", "ifdef", "ifundef", "ifcsdef", "ifcsundef", "ifdefempty", "ifcsempty", "ifbool",
    "ifboolexpr", "iftoggle", "ifstrequal", "ifstrempty", "ifblank", "ifnumcomp", "ifdefstring", "ifdefmacro",
    "ifcsmacro", "ifpackageloaded", "ifclassloaded", "ifdefequal", "ifnumequal", "ifdimcomp", "ifnumodd",
})
_DEFINED_NAME_RE = re.compile(r"\\([A-Za-z]+)(\*?)\s*\{?\s*\\([A-Za-z@]+)\s*\}?")
_LET_RE = re.compile(r"\\let\s*\\[A-Za-z@]+\s*=?\s*\\([A-Za-z@]+|.)")
_CSNAME_END_RE = re.compile(r"\s*([^\\{}]*?)\s*\\endcsname")       # what \csname (or \ifcsname) reads
_CSNAME_RE = re.compile(r"\\csname" + _CSNAME_END_RE.pattern)
_BRANCH_RE = re.compile(r"\\(if[A-Za-z@]*|else|or|fi)(?![A-Za-z@])")
# Meanings that are known without a definition in the document; `\\undefined` is never defined.
_UNDEFINED, _RELAX = "undefined", "relax"
_KNOWN_MEANINGS = {"undefined": _UNDEFINED, "@undefined": _UNDEFINED, "relax": _RELAX}
_OPAQUE = "="


def _opaque(name: str) -> str:
    """The meaning of a command the document does not define, not known here but the same for `\\name`
    and for every `\\let` copy of it: `\\let\\a\\b` makes `\\ifx\\a\\b` true whatever `\\b` is."""
    return _OPAQUE + name


def _is_opaque(meaning: Optional[str]) -> bool:
    return meaning is not None and meaning.startswith(_OPAQUE)


@dataclasses.dataclass
class Switches:
    """What the files read so far have set: `\\newif` booleans and the macros they defined, each with
    its meaning (how it was defined, for `\\ifx`; None when that is not known here)."""

    booleans: dict[str, Optional[bool]] = dataclasses.field(default_factory=dict)   # None: not known here
    defined: dict[str, Optional[str]] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass
class _Frame:
    value: bool | None          # None: not known here, both branches kept
    in_else: bool = False

    def live(self) -> bool:
        return self.value is None or self.value != self.in_else


_NOT_NEWLINE_RE = re.compile(r"[^\n]")


def _blank_lines(piece: str) -> str:
    return "\n" * piece.count("\n")


def _blank_in_place(piece: str) -> str:
    return _NOT_NEWLINE_RE.sub(" ", piece)


class _Resolver:
    def __init__(self, text: str, options: Optional[list[str]], switches: Switches,
                 spans: Optional[list[tuple[int, int]]] = None, keep_offsets: bool = False,
                 tokens: re.Pattern = _TOKEN_RE):
        self.text, self.options, self.switches, self.tokens = text, options, switches, tokens
        self.spans = definition_spans(text) if spans is None else spans
        self.declared: dict[str, str] = {}       # package option -> its code
        self.unset: set[str] = set()             # commands only the code of options not given defines
        self.stack: list[_Frame] = []
        self.dead = 0            # frames on the stack whose branch is not taken
        self.undecided = 0       # frames on the stack whose value is not known here
        self.out: list[str] = []
        self.blank = _blank_in_place if keep_offsets else _blank_lines

    def live(self) -> bool:
        return not self.dead

    def push(self, frame: _Frame) -> None:
        self.stack.append(frame)
        self.dead += not frame.live()
        self.undecided += frame.value is None

    def pop(self) -> None:
        frame = self.stack.pop()
        self.dead -= not frame.live()
        self.undecided -= frame.value is None

    def switch_branch(self, frame: _Frame) -> None:
        """`\\else` of the innermost conditional."""
        self.dead -= not frame.live()
        frame.in_else = True
        self.dead += not frame.live()

    def emit(self, piece: str) -> None:
        self.out.append(piece if self.live() else self.blank(piece))

    def run(self) -> str:
        text, spans = self.text, self.spans
        span = 0
        pos = 0
        while True:
            m = self.tokens.search(text, pos)
            if not m:
                break
            while span < len(spans) and spans[span][1] <= m.start():
                if spans[span][0] >= pos:                  # a definition passed over: recorded
                    self._define(text[spans[span][0]:spans[span][1]])
                span += 1
            if span < len(spans) and spans[span][0] <= m.start():        # inside a definition: not run
                start, end = spans[span]
                self.emit(text[pos:start])
                self._define(text[start:end])
                self.emit(text[start:end])
                pos = end
                span += 1
                continue
            self.emit(text[pos:m.start()])
            pos = self._token(m)
        for start, end in spans[span:]:                   # definitions after the last token
            if start >= pos:
                self._define(text[start:end])
        self.emit(text[pos:])
        return "".join(self.out)

    def _define(self, piece: str) -> None:
        """Record what the definition `piece` defines, when it is in a branch that runs."""
        if self.live():
            named = _DEFINED_NAME_RE.match(piece)
            if named:
                if named.group(1) == "let" and named.group(3).startswith("if"):
                    self._let_conditional(named.group(3)[2:], piece)
                meaning = self._meaning_of_definition(named, piece)
                if meaning == _UNDEFINED:                 # \let\foo\undefined
                    self.switches.defined.pop(named.group(3), None)
                elif self.decided():
                    self.switches.defined[named.group(3)] = meaning
                elif self.switches.defined.get(named.group(3)) != meaning:
                    self.switches.defined[named.group(3)] = None       # defined, as what is not known

    def _meaning_of_definition(self, named: re.Match, piece: str) -> Optional[str]:
        """What `\\ifx` compares: the definition without the defined name (`\\let` copies a meaning)."""
        command = named.group(1)
        if command == "let":
            let = _LET_RE.match(piece)
            return self._current_meaning(let.group(1)) if let else None
        kind = "def" if command in ("def", "gdef", "edef", "xdef") else "long" if not named.group(2) else "short"
        return kind + ":" + piece[named.end():].strip()

    def _current_meaning(self, name: str) -> Optional[str]:
        """What `\\let\\a\\<name>` copies: the meaning the document gave `name`, or, for a command it does
        not define, that command's meaning whatever it is (`_opaque`: `\\ifx\\a\\<name>` is then true)."""
        if name in _KNOWN_MEANINGS:
            return _KNOWN_MEANINGS[name]
        if name in self.switches.defined:
            return self.switches.defined[name]
        return _opaque(name)

    def _let_conditional(self, name: str, piece: str) -> None:
        """`\\let\\ifdraft\\iftrue` (or `\\iffalse`, or another switch `\\ifother`) sets the conditional
        `\\ifdraft` as `\\drafttrue` would; let to anything else, a switch is no longer known here."""
        let = _LET_RE.match(piece)
        target = let.group(1) if let else ""
        if target in ("iftrue", "iffalse"):
            self._set(name, target == "iftrue")
        elif target.startswith("if") and self.switches.booleans.get(target[2:]) is not None:
            self._set(name, self.switches.booleans[target[2:]])
        elif name in self.switches.booleans:
            self.switches.booleans[name] = None

    def _token(self, m: re.Match) -> int:
        text, live = self.text, self.live()
        if m.group("newif"):
            if live:
                name = m.group("newname")
                self.switches.booleans.setdefault(name, False)
                for command in ("if" + name, name + "true", name + "false"):
                    self.switches.defined.setdefault(command, None)
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
            if got and live and self.options is not None:
                for option in got[0].split(","):
                    self._run_option(option.strip())
            end = got[1] if got else m.end()
            self.emit(text[m.start():end])
            return end
        elif m.group("process"):
            if live and self.options is not None:
                order = self.options if m.group("process_star") else [o for o in self.declared if o in self.options]
                for option in order:
                    self._run_option(option)
                self._unset_options(set(order))
        elif m.group("if"):
            return self._open(m)
        elif m.group("ifundefined"):
            return self._ifundefined(m)
        elif m.group("else"):
            return self._else_or_fi(m)
        elif m.group("switch") in self.switches.booleans and live:
            self._set(m.group("switch"), m.group("value") == "true")
        self.emit(m.group())
        return m.end()

    def decided(self) -> bool:
        """Whether every enclosing conditional was decided (what runs here surely runs)."""
        return not self.undecided

    def _set(self, boolean: str, value: bool) -> None:
        """`\\footrue`: in a branch that may not run, the boolean is known only if it already had `value`."""
        known = self.switches.booleans.get(boolean)
        self.switches.booleans[boolean] = value if self.decided() or known == value else None

    def _run_option(self, option: str) -> None:
        """An option given: its switches set, its definitions made (`\\let\\numberwithinsect\\relax`)."""
        code = self.declared.get(option)
        if code:
            for m in _TOKEN_RE.finditer(code):
                if m.group("switch") in self.switches.booleans:
                    self._set(m.group("switch"), m.group("value") == "true")
            for start, end in definition_spans(code):
                self._define(code[start:end])

    def _unset_options(self, given: set[str]) -> None:
        """A command that only the code of this file's options not given defines (a flag such as lipics'
        `\\numberwithinsect`) is undefined after `\\ProcessOptions`: `\\ifx\\numberwithinsect\\relax` is false."""
        for option, code in self.declared.items():
            if option not in given:
                for start, _ in definition_spans(code):
                    named = _DEFINED_NAME_RE.match(code, start)
                    if named and named.group(3) not in self.switches.defined:
                        self.unset.add(named.group(3))

    def _open(self, m: re.Match) -> int:
        name = m.group("if")[2:]
        if "if" + name in _NOT_CONDITIONALS or self._is_macro("if" + name):
            self.emit(m.group())
            return m.end()
        value, end = self._value(name, m.end())
        if value is None:
            self.emit(self.text[m.start():m.end()])
            end = m.end()
        else:
            self.out.append(self.blank(self.text[m.start():end]))
        self.push(_Frame(value if self.live() else None))
        return end

    def _is_macro(self, name: str) -> bool:
        """Whether the document defines `\\<name>` as a macro (`\\newcommand\\iffeq` of a symbol, Open Logic's
        three-argument `\\iftag`): not a conditional, and TeX matches no `\\fi` to it."""
        meaning = self.switches.defined.get(name)
        return meaning is not None and meaning.startswith(("def:", "long:", "short:"))

    def _value(self, name: str, pos: int) -> tuple[bool | None, int]:
        """The value of `\\if<name>` and where its test ends; None when not known here."""
        if name in self.switches.booleans:
            return self.switches.booleans[name], pos        # None (set in a branch that may not run): not known
        if name in ("true", "false"):
            return name == "true", pos
        if name == "defined":
            cs = CONTROL_SEQUENCE_RE.match(self.text, skip_spaces(self.text, pos))
            if cs and (cs.group(1) in self.switches.defined or cs.group(1) in self.unset):
                return cs.group(1) not in self.unset, cs.end()
        elif name == "csname":
            name_end = _CSNAME_END_RE.match(self.text, pos)
            if name_end and (name_end.group(1) in self.switches.defined or name_end.group(1) in self.unset):
                return name_end.group(1) not in self.unset, name_end.end()
        elif name == "x":
            return self._ifx(pos)
        return None, pos

    def _token_meaning(self, pos: int) -> tuple[Optional[str], bool, int]:
        """The meaning of the token at `pos` as `\\ifx` sees it (None: not known here), whether the
        document defines it, and where it ends.

        A `\\csname name\\endcsname` (after `\\expandafter\\ifx`) is the command it names, `\\relax` when
        that is undefined, as TeX makes it.
        """
        pos = skip_spaces(self.text, pos)
        csname = _CSNAME_RE.match(self.text, pos)
        cs = csname or CONTROL_SEQUENCE_RE.match(self.text, pos)
        if not cs:
            return (self.text[pos], False, pos + 1) if pos < len(self.text) else (None, False, pos)
        name = cs.group(1)
        if name in self.switches.defined:
            meaning = self.switches.defined[name]
            return meaning, not _is_opaque(meaning), cs.end()
        if name in self.unset:
            return _UNDEFINED, False, cs.end()
        return (None if csname else _KNOWN_MEANINGS.get(name, _opaque(name))), False, cs.end()

    def _ifx(self, pos: int) -> tuple[Optional[bool], int]:
        """`\\ifx A B`: decided when the document gives both meanings (`\\ifx\\mode\\full` of two `\\def`s),
        or defines one and the other is `\\undefined` (`\\ifx\\foo\\undefined` after `\\newif\\iffoo`);
        a command it does not define is not known: a package not in the submission may define it."""
        first, first_defined, after_first = self._token_meaning(pos)
        second, second_defined, end = self._token_meaning(after_first)
        if first is not None and first == second:
            return True, end
        if first is not None and second is not None and not _is_opaque(first) and not _is_opaque(second):
            return False, end
        if (first == _UNDEFINED and second_defined) or (second == _UNDEFINED and first_defined):
            return False, end
        return None, pos

    def _ifundefined(self, m: re.Match) -> int:
        """`\\@ifundefined{name}{yes}{no}`: when the document defines `name`, only the no-branch is run."""
        name = mandatory(self.text, m.end())
        yes = mandatory(self.text, name[1]) if name else None
        no = mandatory(self.text, yes[1]) if yes else None
        if not no or not self.live() or name[0].strip() not in self.switches.defined:
            self.emit(m.group())
            return m.end()
        self.out.append(self.blank(self.text[m.start():no[1] - len(no[0]) - 1]))
        self.emit(no[0])
        self.out.append(self.blank(self.text[no[1] - 1:no[1]]))
        return no[1]

    def _else_or_fi(self, m: re.Match) -> int:
        frame = self.stack[-1] if self.stack else None
        known = frame is not None and frame.value is not None
        if m.group("else") == "else":
            if frame is not None:
                self.switch_branch(frame)
        elif frame is not None:
            self.pop()
        if known:
            self.out.append(self.blank(m.group()))
        else:
            self.emit(m.group())
        return m.end()


def resolve_conditionals(text: str, options: Optional[list[str]], switches: Switches,
                         spans: Optional[list[tuple[int, int]]] = None) -> str:
    """`text` (a package, a class or a document's preamble) with the branches of known conditionals
    not taken blanked.

    `options` are the options a package was loaded with (None: its options were already run, as for
    a preamble with its packages inlined); `switches` carries booleans and definitions from file to
    file and is updated; `spans` are `text`'s definitions when the caller has them. Text without
    conditionals is not run, and its definitions are recorded in `switches` only when `spans` are given
    (a preamble, whose definitions the body's conditionals may test).
    """
    if "\\if" not in text and "\\@ifundefined" not in text:
        if spans:
            _Resolver(text, options, switches, spans).run()
        return text
    return _Resolver(text, options, switches, spans).run()


_BODY_CONDITIONAL_RE = re.compile(r"\\(?:if([A-Za-z@]*)|newif|@ifundefined)(?![A-Za-z@])")
_NEWIF_NAME_RE = re.compile(r"\\newif\s*\\if([A-Za-z@]+)")
_TESTS = frozenset({"x", "defined", "csname"})
_DEFINER_BEFORE_RE = re.compile(r"\\(?:(?:re|provide)?newcommand|DeclareRobustCommand|[gex]?def|let)\*?\s*\{?\s*\Z")


def _defines_a_tested_name(body: str, test: str, pos: int) -> bool:
    """Whether `body` defines a command that `\\if<test>` at body[pos] tests (`\\ifx` compares two)."""
    names = []
    csname = _CSNAME_END_RE.match(body, pos) if test == "csname" else None
    if csname:
        names.append(csname.group(1))
    for _ in range(0 if test == "csname" else 2 if test == "x" else 1):
        pos = skip_spaces(body, pos)
        cs = _CSNAME_RE.match(body, pos) or CONTROL_SEQUENCE_RE.match(body, pos)
        if not cs:
            break
        names.append(cs.group(1))
        pos = cs.end()
    for name in names:
        cs = "\\" + name
        at = body.find(cs)
        while at >= 0:         # the uses of the name are few: look just before each for a definer
            whole_name = not is_letter(body[at + len(cs):at + len(cs) + 1] or " ")
            if whole_name and _DEFINER_BEFORE_RE.search(body, max(at - 40, 0), at):
                return True
            at = body.find(cs, at + 1)
    return False


def resolve_body_conditionals(body: str, switches: Switches) -> str:
    """The document body with the branches of known conditionals not taken blanked in place (same
    length, same offsets): `\\ifdraft ... \\else ... \\fi` after `\\draftfalse`, `\\ifdefined` of a macro
    the preamble defines. `switches` holds what the preamble left known and is updated.

    Text with no conditional that could be decided is returned as is without a full run (most bodies:
    `\\iff` and undecidable tests only): a test counts when what the preamble left decides it, or when the
    body itself defines a command it tests (`\\newcommand\\foo` before `\\ifdefined\\foo`). When a decided
    conditional is still open at the end (its `\\fi` hidden in a macro, or taken by a command read as a
    conditional that is none), the body is left as written: both branches read, as before.
    """
    if "\\if" not in body and "\\@ifundefined" not in body:
        return body
    probe = _Resolver(body, None, switches, spans=[])
    if not any(m.group(1) is None or m.group(1) in switches.booleans or m.group(1) in ("true", "false")
               or (m.group(1) in _TESTS and (probe._value(m.group(1), m.end())[0] is not None
                                             or _defines_a_tested_name(body, m.group(1), m.end())))
               for m in _BODY_CONDITIONAL_RE.finditer(body)):
        return body
    names = sorted({*switches.booleans, *_NEWIF_NAME_RE.findall(body)}, key=len, reverse=True)
    tokens = _token_re("|".join(map(re.escape, names)) or "(?!)")       # only switches that exist are set
    resolver = _Resolver(body, None, switches, keep_offsets=True, tokens=tokens)
    resolved = resolver.run()
    if resolved == body or len(resolver.stack) > resolver.undecided or len(resolved) != len(body):
        return body
    return resolved


def first_definitions(text: str, pattern: re.Pattern, key: Callable[[re.Match], str]) -> list[re.Match]:
    """The matches of `pattern` (a definition command) that count, in order, where `text` still holds
    conditionals not decided here: within one, a definition of `key(match)` made in an earlier branch
    is not overridden by a later branch's (`\\ifpdf\\crefname{lemma}{Lemma}..\\else\\crefname{lemma}{lemma}..\\fi`
    counts as `Lemma`), as if the first branch that makes it were the one run. Outside conditionals a
    later definition overrides, as in TeX.
    """
    definitions = list(pattern.finditer(text))
    if not definitions or "\\if" not in text:
        return definitions
    branches = [m for m in _BRANCH_RE.finditer(text) if m.group(1) not in _NOT_CONDITIONALS]
    stack: list[tuple[set, bool]] = []     # per open conditional: (keys defined in it, in a later branch?)
    kept: list[re.Match] = []
    b = 0
    for d in definitions:
        while b < len(branches) and branches[b].start() < d.start():
            token = branches[b].group(1)
            if token == "fi":
                if stack:
                    stack.pop()
            elif token in ("else", "or"):
                if stack:
                    stack[-1] = (stack[-1][0], True)
            else:
                stack.append((set(), False))
            b += 1
        k = key(d)
        if any(later and k in keys for keys, later in stack):
            continue
        for keys, _ in stack:
            keys.add(k)
        kept.append(d)
    return kept
