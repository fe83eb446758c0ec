"""Which environments are theorem-like, and which hide their content (verbatim, comments).

Declarations are read from the prepared preamble (local .sty/.cls inlined, declaration wrappers
expanded) and the body: the theorem commands of `declarations.py`, and `\\newenvironment` wrappers
around any of those. Standard names (theorem, lemma, ...) used without
a declaration count, because document classes provide them. A proof declared as a theorem is still
a proof.
"""
from __future__ import annotations

import dataclasses
import functools
import re
from typing import Callable, Optional

from transforms.latex.declarations import DECLARING_COMMANDS, parse_declaration
from transforms.latex.definitions import MacroTable, collect_macros
from transforms.latex.kinds import PROOF, kind_for
from transforms.latex.model import EnvSpec, Limits
from transforms.latex.numbering import NUMBERED_EQUATION_ENVS
from transforms.latex.scan import each_command, mandatory, optional

STANDARD_THEOREM_NAMES = (
    "theorem", "lemma", "proposition", "corollary", "definition", "conjecture", "claim", "remark",
    "example", "exercise", "fact", "observation", "assumption", "axiom", "notation", "problem",
    "question", "hypothesis", "note",
)
DEFAULT_VERBATIM_ENVS = frozenset({
    "verbatim", "verbatim*", "Verbatim", "Verbatim*", "BVerbatim", "LVerbatim", "lstlisting",
    "minted", "filecontents", "filecontents*", "comment", "lstinline", "spverbatim", "alltt*",
})
# Comment-like environments that authors put inside statements (the Stacks Project's slogans...).
DEFAULT_STATEMENT_COMMENT_ENVS = frozenset({"slogan", "reference", "history"})
DEFAULT_PROOF_ENVS = frozenset({"proof", "proof*"})
# Solutions written inside exercises (the answers package moves them to the end of the book): cut from
# the statement body and kept as its proof.
DEFAULT_SOLUTION_ENVS = frozenset({"solution", "sol", "soln", "answer"})

# Environment declarations that are not theorems: wrappers (maybe around a theorem), comments, verbatims.
_ENVIRONMENT_COMMANDS = ("newtcolorbox", "newenvironment", "renewenvironment", "NewEnviron", "RenewEnviron",
                         "NewDocumentEnvironment", "excludecomment", "lstnewenvironment",
                         "DefineVerbatimEnvironment", "newminted", "newmintedfile")
_DECL_RE = re.compile(r"\\(" + "|".join(DECLARING_COMMANDS + _ENVIRONMENT_COMMANDS) + r")(?![A-Za-z@])(\*?)")
_BEGIN_NAME_RE = re.compile(r"\\begin\s*\{([^{}\s]{1,64})\}|\\csname\s*([^\\\s{}]{1,64})\s*\\endcsname")
_HIDING_BODY_RE = re.compile(r"\\(comment|verbatim|Verbatim|lstlisting|minted)(?![A-Za-z@])")
_CONDITIONAL_RE = re.compile(r"\\if|\\let\s*\\comment")
_LLNCS_RE = re.compile(r"\\documentclass\s*(?:\[([^\]]{0,2000})\])?\s*\{\s*llncs\s*\}")
# The environments llncs.cls declares through \spn@wtheorem, whose counters the class options choose.
LLNCS_ENVS = frozenset({"case", "conjecture", "corollary", "definition", "example", "exercise", "lemma", "note",
                        "problem", "property", "proposition", "question", "remark"})
_ENV_NAME_RE = re.compile(r"[A-Za-z@]{1,64}\*?")
_LET_RE = re.compile(r"\\let\s*\\([A-Za-z@]+)\s*=?\s*\\([A-Za-z@]+)")
_USED_ENV_RE = re.compile(r"\\begin\s*\{(" + "|".join(STANDARD_THEOREM_NAMES) + r")\*?\}")


@dataclasses.dataclass
class Discovery:
    """What the segmenter needs to know about the document's environments."""

    envs: dict[str, EnvSpec] = dataclasses.field(default_factory=dict)        # theorem-like
    proof_envs: set[str] = dataclasses.field(default_factory=lambda: set(DEFAULT_PROOF_ENVS))
    verbatim_envs: set[str] = dataclasses.field(default_factory=lambda: set(DEFAULT_VERBATIM_ENVS))
    comment_envs: set[str] = dataclasses.field(default_factory=lambda: set(DEFAULT_STATEMENT_COMMENT_ENVS))
    solution_envs: set[str] = dataclasses.field(default_factory=lambda: set(DEFAULT_SOLUTION_ENVS))
    label_macros: set[str] = dataclasses.field(default_factory=lambda: {"label"})
    tcb_label_prefix: dict[str, str] = dataclasses.field(default_factory=dict)  # tcolorbox: env -> prefix
    equation_aliases: dict[str, str] = dataclasses.field(default_factory=dict)  # wrapper -> equation env
    name_macros: dict[str, str] = dataclasses.field(default_factory=dict)  # \envname -> "theorem": \begin{\envname}


def _parse_newenvironment(text: str, pos: int, command: str) -> tuple[Optional[str], str, int]:
    """(env name, begin code, index after) of \\newenvironment{env}[n][default]{begin}{end}."""
    name = mandatory(text, pos)
    if not name:
        return None, "", pos
    pos = name[1]
    if command == "NewDocumentEnvironment":
        spec = mandatory(text, pos)
        pos = spec[1] if spec else pos
    else:
        for _ in range(2):
            _, pos = optional(text, pos)
    begin = mandatory(text, pos)
    if not begin:
        return name[0].strip(), "", pos
    end = mandatory(text, begin[1])
    return name[0].strip(), begin[0], (end[1] if end else begin[1])


def discover(preamble: str, body: str = "", expand: Callable[[str], str] = lambda s: s,
             macros: Optional[MacroTable] = None) -> Discovery:
    """Theorem-like, proof, verbatim and comment environments declared in `preamble` (and `body`).

    `expand` expands author macros in display titles (`\\newtheorem{lem}{\\lemmaname}`); `macros` is
    the document's macro table (collected from `preamble` when not given), read for label commands.
    """
    found = Discovery()
    wrappers: list[tuple[str, str]] = []
    for text in (preamble, body):
        each_command(text, _DECL_RE, functools.partial(_read_declaration, found, wrappers, text, expand=expand))
    _resolve_wrappers(found, wrappers)
    for text in (preamble, body):
        _let_aliases(found, text)
    for m in _USED_ENV_RE.finditer(body):
        name = m.group(1)
        if name not in found.envs and name not in found.verbatim_envs and name not in found.comment_envs:
            display = name[:1].upper() + name[1:]
            found.envs[name] = EnvSpec(name, display, kind_for(display, name), numbered=True,
                                       declared_by="builtin")
    _llncs_counters(found, preamble)
    table = macros if macros is not None else collect_macros(preamble, Limits())
    found.label_macros |= _label_macros(table)
    found.name_macros = {name: d.body.strip() for name, d in table.defs.items()
                         if not d.args and d.template is None and _ENV_NAME_RE.fullmatch(d.body.strip())}
    return found


def _let_aliases(found: Discovery, text: str) -> None:
    """`\\let\\mainlemma\\lemma` (with `\\let\\endmainlemma\\endlemma`) makes `mainlemma` the same
    environment as `lemma`, stepping the same counter."""
    for m in _LET_RE.finditer(text):
        alias, original = m.group(1), m.group(2)
        if alias.startswith("end") or alias in found.envs:
            continue
        if original in found.envs:
            spec = found.envs[original]
            found.envs[alias] = dataclasses.replace(spec, name=alias, counter=spec.counter or original,
                                                    within=None, declared_by="\\let")
        elif original in found.proof_envs:
            found.proof_envs.add(alias)


def _llncs_counters(found: Discovery, preamble: str) -> None:
    """llncs numbers its own environments as its options say: `envcountsame` makes them all share
    the theorem counter, `envcountsect` numbers them within sections, `envcountreset` restarts them at
    each section without printing the section number; `claim` is unnumbered."""
    m = _LLNCS_RE.search(preamble)
    if not m:
        return
    options = {o.strip() for o in (m.group(1) or "").split(",")}
    same, sect = "envcountsame" in options, "envcountsect" in options
    reset = "section" if "envcountreset" in options and not sect else None
    found.envs.setdefault("theorem", EnvSpec("theorem", "Theorem", kind_for("Theorem", "theorem"),
                                             declared_by="builtin"))
    for name, spec in list(found.envs.items()):
        if spec.declared_by != "builtin":
            continue
        if name == "claim":
            found.envs[name] = dataclasses.replace(spec, numbered=False)
        elif name == "theorem" or (name in LLNCS_ENVS and not same):
            found.envs[name] = dataclasses.replace(spec, within="section" if sect else None, reset_by=reset)
        elif name in LLNCS_ENVS:
            found.envs[name] = dataclasses.replace(spec, counter="theorem", within=None)


def _read_declaration(found: Discovery, wrappers: list[tuple[str, str]], text: str, m: re.Match,
                      expand: Callable[[str], str]) -> int:
    """Record what the declaration command at `m` declares; returns where its arguments end."""
    command, star = m.group(1), m.group(2)
    pos = m.end()
    if command in DECLARING_COMMANDS:
        declared = parse_declaration(text, pos, command, star, expand)
        for spec in declared.specs:
            if declared.label_prefix is not None:
                found.tcb_label_prefix[spec.name] = declared.label_prefix
            if spec.kind == PROOF:
                found.proof_envs.add(spec.name)
            else:
                found.envs[spec.name] = spec
                found.comment_envs.discard(spec.name)
                found.solution_envs.discard(spec.name)
        return declared.end
    if command in ("excludecomment", "lstnewenvironment", "DefineVerbatimEnvironment"):
        got = mandatory(text, pos)
        if not got:
            return pos
        if command == "excludecomment":
            found.comment_envs.update(n.strip() for n in got[0].split(",") if n.strip())
        else:
            found.verbatim_envs.add(got[0].strip())
        return got[1]
    if command in ("newminted", "newmintedfile"):
        _, p = optional(text, pos)
        got = mandatory(text, p)
        if not got:
            return pos
        found.verbatim_envs.add(got[0].strip() + "code")
        return got[1]
    name, begin_code, pos = _parse_newenvironment(text, pos, command)   # maybe a wrapper, comment or verbatim
    if name:
        wrappers.append((name, begin_code))
    return pos


def _resolve_wrappers(found: Discovery, wrappers: list[tuple[str, str]]) -> None:
    """`\\newenvironment{env}{...\\begin{thm}...}{...}` makes env a theorem (or proof) like thm."""
    for _ in range(3):      # wrappers of wrappers
        for name, begin_code in wrappers:
            if name in found.envs or name in found.proof_envs:
                continue
            inner = [m.group(1) or m.group(2) for m in _BEGIN_NAME_RE.finditer(begin_code)]
            wrapped = next((i for i in inner if i in found.envs), None)
            if wrapped:
                found.envs[name] = dataclasses.replace(found.envs[wrapped], name=name,
                                                       declared_by="\\newenvironment")
            elif any(i in found.proof_envs for i in inner):
                found.proof_envs.add(name)
            elif any(i in NUMBERED_EQUATION_ENVS or i.rstrip("*") in NUMBERED_EQUATION_ENVS for i in inner):
                found.equation_aliases[name] = next(i for i in inner if i.rstrip("*") in NUMBERED_EQUATION_ENVS)
            elif _HIDING_BODY_RE.search(begin_code) and not _CONDITIONAL_RE.search(begin_code):
                # a conditional one (Open Logic's tagblock) shows its content in complete builds
                kind = _HIDING_BODY_RE.search(begin_code).group(1)
                (found.comment_envs if kind == "comment" else found.verbatim_envs).add(name)


def _label_macros(macros: MacroTable) -> set[str]:
    """One-argument author macros whose body calls \\label (Open Logic's \\ollabel)."""
    every = {**macros.left_out, **macros.defs}
    return {name for name, d in every.items() if d.args == ("m",) and "\\label" in d.body}
