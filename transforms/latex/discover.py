"""Which environments are theorem-like, and which hide their content (verbatim, comments).

Declarations are read from the flattened preamble (local .sty/.cls already inlined) and the body:
`\\newtheorem` in its three forms and starred, thmtools `\\declaretheorem`, llncs `\\spnewtheorem`,
mdframed `\\newmdtheoremenv`, tcolorbox `\\newtcbtheorem`, ntheorem's variants, and
`\\newenvironment` wrappers around any of those. Standard names (theorem, lemma, ...) used without
a declaration count, because document classes provide them. A proof declared as a theorem is still
a proof.
"""
from __future__ import annotations

import dataclasses
import re
from typing import Callable, Optional

from transforms.latex.kinds import PROOF, kind_for
from transforms.latex.model import EnvSpec
from transforms.latex.numbering import NUMBERED_EQUATION_ENVS
from transforms.latex.scan import mandatory, optional, split_top_level, strip_braces

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

_DECL_RE = re.compile(
    r"\\(newtheorem|renewtheorem|spnewtheorem|declaretheorem|newmdtheoremenv|newtcbtheorem|"
    r"newtcolorbox|newenvironment|renewenvironment|NewEnviron|RenewEnviron|NewDocumentEnvironment|"
    r"excludecomment|lstnewenvironment|DefineVerbatimEnvironment|newminted|newmintedfile)"
    r"(?![A-Za-z@])(\*?)")
_BEGIN_NAME_RE = re.compile(r"\\begin\s*\{([^{}\s]{1,64})\}|\\csname\s*([^\\\s{}]{1,64})\s*\\endcsname")
_HIDING_BODY_RE = re.compile(r"\\(comment|verbatim|Verbatim|lstlisting|minted)(?![A-Za-z@])")
_CONDITIONAL_RE = re.compile(r"\\if|\\let\s*\\comment")
_LABEL_MACRO_RE = re.compile(
    r"\\(?:newcommand|renewcommand|providecommand|DeclareRobustCommand)\*?\s*\{?\s*\\([A-Za-z@]+)\s*\}?"
    r"\s*\[1\]|\\def\s*\\([A-Za-z@]+)#1\s*(?=\{)")
_TITLE_JUNK_RE = re.compile(r"\\(?:protect|bfseries|itshape|scshape|upshape|normalfont|textbf|textsc|"
                            r"textit|emph|bf|it|sc|rm|sf|relax)(?![A-Za-z@])|[{}~]")
_SPACE_RE = re.compile(r"\s+")
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


def _parse_newtheorem(text: str, pos: int, star: str, command: str, expand) -> tuple[list[EnvSpec], int]:
    """\\newtheorem{env}[shared]{Title}, {env}{Title}[within], \\newtheorem*{env}{Title}; llncs and
    mdframed variants share the shape (llncs adds two font arguments, mdframed a leading option)."""
    if command == "newmdtheoremenv":
        _, pos = optional(text, pos)
    name = mandatory(text, pos)
    if not name:
        return [], pos
    shared, pos = optional(text, name[1])
    title = mandatory(text, pos)
    if not title:
        return [], name[1]
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
        return [], pos
    spec = _spec(env, title[0], numbered=not star, counter=(shared or "").strip(),
                 within=(within or "").strip(), declared_by="\\" + command + star, expand=expand)
    return [spec], pos


_KEYS_NAME = ("name", "title", "heading")
_KEYS_COUNTER = ("sibling", "sharenumber", "sharecounter", "numberlike", "counter")
_KEYS_WITHIN = ("numberwithin", "parent", "within")


def _parse_declaretheorem(text: str, pos: int, star: str, expand) -> tuple[list[EnvSpec], int]:
    """thmtools: \\declaretheorem[key=value,...]{env,...} (or the options after the name)."""
    before, pos = optional(text, pos)
    names = mandatory(text, pos)
    if not names:
        return [], pos
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
    return specs, pos


def _parse_tcbtheorem(text: str, pos: int, expand) -> tuple[list[EnvSpec], Optional[str], int]:
    """\\newtcbtheorem[init]{env}{Title}{options}{prefix}: used as \\begin{env}{title}{label}."""
    init, pos = optional(text, pos)
    args = []
    for _ in range(4):
        got = mandatory(text, pos)
        if not got:
            return [], None, pos
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
    return [numbered, starred], prefix, pos


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


def discover(preamble: str, body: str = "", expand: Callable[[str], str] = lambda s: s) -> Discovery:
    """Theorem-like, proof, verbatim and comment environments declared in `preamble` (and `body`).

    `expand` expands author macros in display titles (`\\newtheorem{lem}{\\lemmaname}`).
    """
    found = Discovery()
    wrappers: list[tuple[str, str]] = []
    for text in (preamble, body):
        pos = 0
        while True:
            m = _DECL_RE.search(text, pos)
            if not m:
                break
            command, star = m.group(1), m.group(2)
            pos = m.end()
            if command in ("newtheorem", "renewtheorem", "spnewtheorem", "newmdtheoremenv"):
                specs, pos = _parse_newtheorem(text, pos, star, command, expand)
            elif command == "declaretheorem":
                specs, pos = _parse_declaretheorem(text, pos, star, expand)
            elif command == "newtcbtheorem":
                specs, prefix, pos = _parse_tcbtheorem(text, pos, expand)
                for spec in specs:
                    found.tcb_label_prefix[spec.name] = prefix or ""
            elif command in ("excludecomment",):
                got = mandatory(text, pos)
                if got:
                    found.comment_envs.update(n.strip() for n in got[0].split(",") if n.strip())
                    pos = got[1]
                continue
            elif command in ("lstnewenvironment", "DefineVerbatimEnvironment"):
                got = mandatory(text, pos)
                if got:
                    found.verbatim_envs.add(got[0].strip())
                    pos = got[1]
                continue
            elif command in ("newminted", "newmintedfile"):
                _, p = optional(text, pos)
                got = mandatory(text, p)
                if got:
                    found.verbatim_envs.add(got[0].strip() + "code")
                    pos = got[1]
                continue
            else:   # \newenvironment and friends: maybe a wrapper, a comment or a verbatim
                name, begin_code, pos = _parse_newenvironment(text, pos, command)
                if name:
                    wrappers.append((name, begin_code))
                continue
            for spec in specs:
                if spec.kind == PROOF:
                    found.proof_envs.add(spec.name)
                else:
                    found.envs[spec.name] = spec
                    found.comment_envs.discard(spec.name)
                    found.solution_envs.discard(spec.name)
    _resolve_wrappers(found, wrappers)
    for m in _USED_ENV_RE.finditer(body):
        name = m.group(1)
        if name not in found.envs and name not in found.verbatim_envs and name not in found.comment_envs:
            display = name[:1].upper() + name[1:]
            found.envs[name] = EnvSpec(name, display, kind_for(display, name), numbered=True,
                                       declared_by="builtin")
    found.label_macros |= _label_macros(preamble)
    return found


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


def _label_macros(preamble: str) -> set[str]:
    """One-argument author macros whose body calls \\label (Open Logic's \\ollabel)."""
    names = set()
    for m in _LABEL_MACRO_RE.finditer(preamble):
        name = m.group(1) or m.group(2)
        body = mandatory(preamble, m.end())
        if body and "\\label" in body[0]:
            names.add(name)
    return names
