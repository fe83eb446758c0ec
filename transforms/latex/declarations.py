"""Theorem declarations: the commands that declare theorem-like environments, in one place.

`\\newtheorem` in its three forms and starred, llncs `\\spnewtheorem`, mdframed `\\newmdtheoremenv`,
thmtools `\\declaretheorem`, tcolorbox `\\newtcbtheorem`, and the counter and style commands that go
with them. Authors often wrap these in macros of their own (`\\defthm{lem}{Lemma}{Lemmas}`); the
wrapper calls are expanded here once, into the prepared preamble that discovery and numbering read.
"""
from __future__ import annotations

import dataclasses
import re
from typing import Callable, Optional

from transforms.latex.definitions import MacroDef, MacroTable, definition_spans
from transforms.latex.kinds import kind_for
from transforms.latex.macros import expand_call, expansion_state
from transforms.latex.model import EnvSpec, Limits
from transforms.latex.scan import CONTROL_SEQUENCE_RE as _CS_RE, mandatory, optional, split_top_level, strip_braces

_TITLE_JUNK_RE = re.compile(r"\\(?:protect|bfseries|itshape|scshape|upshape|normalfont|textbf|textsc|"
                            r"textit|emph|bf|it|sc|rm|sf|relax)(?![A-Za-z@])|[{}~]")
_SPACE_RE = re.compile(r"\s+")


@dataclasses.dataclass
class Declared:
    """What one declaration command declared, and where it ends."""

    specs: list[EnvSpec]
    end: int
    label_prefix: Optional[str] = None      # tcolorbox: labels are written as `prefix:label`


def display_title(raw: str, expand: Callable[[str], str] = lambda s: s) -> str:
    """A declaration's title as shown: `{\\bfseries Main Theorem}` -> "Main Theorem"."""
    title = expand(raw) if "\\" in raw else raw
    title = _TITLE_JUNK_RE.sub(" ", title)
    return _SPACE_RE.sub(" ", title).strip()


def _spec(name: str, title_raw: str, *, numbered: bool, counter: Optional[str], within: Optional[str],
          declared_by: str, expand: Callable[[str], str]) -> EnvSpec:
    display = display_title(title_raw, expand) or name[:1].upper() + name[1:]
    return EnvSpec(name=name, display_name=display, kind=kind_for(display, name), numbered=numbered,
                   counter=(counter or None), within=(within or None), declared_by=declared_by)


def _parse_newtheorem(text: str, pos: int, command: str, star: str, expand) -> Declared:
    """\\newtheorem{env}[shared]{Title}, {env}{Title}[within], \\newtheorem*{env}{Title}; llncs and
    mdframed variants share the shape (llncs adds two font arguments, mdframed a leading option)."""
    if command == "newmdtheoremenv":
        _, pos = optional(text, pos)
    name = mandatory(text, pos)
    if not name:
        return Declared([], pos)
    shared, pos = optional(text, name[1])
    title = mandatory(text, pos)
    if not title:
        return Declared([], name[1])
    pos = title[1]
    within = None
    if shared is None:
        within, pos = optional(text, pos)
    if command == "spnewtheorem":
        for _ in range(2):
            font = mandatory(text, pos)
            if font:
                pos = font[1]
    env = name[0].strip()
    if not env or "#" in env or "\\" in env:
        return Declared([], pos)
    spec = _spec(env, title[0], numbered=not star, counter=(shared or "").strip(),
                 within=(within or "").strip(), declared_by="\\" + command + star, expand=expand)
    return Declared([spec], pos)


_KEYS_NAME = ("name", "title", "heading")
_KEYS_COUNTER = ("sibling", "sharenumber", "sharecounter", "numberlike", "counter")
_KEYS_WITHIN = ("numberwithin", "parent", "within")


def _parse_declaretheorem(text: str, pos: int, command: str, star: str, expand) -> Declared:
    """thmtools: \\declaretheorem[key=value,...]{env,...} (or the options after the name)."""
    before, pos = optional(text, pos)
    names = mandatory(text, pos)
    if not names:
        return Declared([], pos)
    after, pos = optional(text, names[1])
    options: dict[str, str] = {}
    for part in split_top_level(",".join(o for o in (before, after) if o)):
        key, _, value = part.partition("=")
        options[key.strip().lower()] = strip_braces(value)
    numbered = options.get("numbered", "yes").strip().lower() not in ("no", "false") and not star
    title = next((options[k] for k in _KEYS_NAME if k in options), "")
    counter = next((options[k] for k in _KEYS_COUNTER if k in options), None)
    within = next((options[k] for k in _KEYS_WITHIN if k in options), None)
    specs = []
    for env in split_top_level(names[0]):
        if env and "#" not in env and "\\" not in env:
            specs.append(_spec(env, title or env[:1].upper() + env[1:], numbered=numbered, counter=counter,
                               within=within, declared_by="\\declaretheorem", expand=expand))
    return Declared(specs, pos)


def _parse_tcbtheorem(text: str, pos: int, command: str, star: str, expand) -> Declared:
    """\\newtcbtheorem[init]{env}{Title}{options}{prefix}: used as \\begin{env}{title}{label}."""
    init, pos = optional(text, pos)
    args = []
    for _ in range(4):
        got = mandatory(text, pos)
        if not got:
            return Declared([], pos)
        args.append(got[0])
        pos = got[1]
    env, title, _, prefix = (a.strip() for a in args)
    within = None
    for part in split_top_level(init or ""):
        key, _, value = part.partition("=")
        if key.strip() == "number within":
            within = value.strip()
    numbered = _spec(env, title, numbered=True, counter=None, within=within,
                     declared_by="\\newtcbtheorem", expand=expand)
    starred = dataclasses.replace(numbered, name=env + "*", numbered=False)
    return Declared([numbered, starred], pos, prefix)


# The one list of theorem commands. Those with a parser declare environments; the others set up the
# counters (read by numbering) or the style of theorems declared next. Any of them in a macro body
# makes that macro a declaration wrapper.
THEOREM_COMMANDS: dict[str, Optional[Callable[..., Declared]]] = {
    "newtheorem": _parse_newtheorem, "renewtheorem": _parse_newtheorem, "spnewtheorem": _parse_newtheorem,
    "newmdtheoremenv": _parse_newtheorem, "declaretheorem": _parse_declaretheorem,
    "newtcbtheorem": _parse_tcbtheorem,
    "newaliascnt": None, "aliascntresetthe": None, "theoremstyle": None, "newthm": None,
}
DECLARING_COMMANDS = tuple(c for c, parse in THEOREM_COMMANDS.items() if parse is not None)
_COMMAND_RE = re.compile(r"\\(?:" + "|".join(THEOREM_COMMANDS) + r")(?![A-Za-z@])")


def parse_declaration(text: str, pos: int, command: str, star: str,
                      expand: Callable[[str], str] = lambda s: s) -> Declared:
    """The environments `\\<command><star>` declares with its arguments at text[pos]."""
    return THEOREM_COMMANDS[command](text, pos, command, star, expand)


def _wrapper_names(defs: dict[str, MacroDef]) -> set[str]:
    """Macros whose body declares theorem environments, directly or through other wrappers."""
    wrappers = {name for name, d in defs.items() if _COMMAND_RE.search(d.body)}
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


def prepare_declarations(preamble: str, table: MacroTable, limits: Limits) -> str:
    """The prepared preamble: `preamble` with calls of author wrappers that declare theorems expanded.

    `\\defthm{lem}{Lemma}{Lemmas}` whose body runs `\\newtheorem{#1}[#1]{#2}` becomes that
    `\\newtheorem` line. Discovery and numbering both read the result, so they see the same plain
    declarations, expanded once within the run's limits. Definitions themselves (including the
    wrapper's own `\\def`) are copied unchanged.
    """
    every = {**table.left_out, **table.defs}     # a wrapper may well be TeX programming itself
    wrappers = _wrapper_names(every)
    if not wrappers:
        return preamble
    wrapper_table = MacroTable({n: d for n, d in every.items() if n in wrappers})
    pattern = wrapper_table.pattern()
    state = expansion_state(MacroTable({**table.defs, **wrapper_table.defs}), limits)
    out: list[str] = []
    pos = 0
    spans = definition_spans(preamble)
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
        piece, end = expand_call(wrapper_table.defs[m.group()[1:]], preamble, m.end(), state)
        if piece is None:
            out.append(preamble[pos:end])
            pos = end
            continue
        out.append(preamble[pos:m.start()])
        out.append(piece)
        pos = end
    out.append(preamble[pos:])
    return "".join(out)
