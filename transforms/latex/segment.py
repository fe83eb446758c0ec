"""One linear pass over a document body: theorem-like statements, their proofs, and numbering events.

A single token regex walks the text with `search(text, pos)`; each hit is handled in constant work
plus the size of what it reads (a title, a label, a body slice taken once at `\\end`), so a 30 MB
book costs the same per MB as a 1 MB paper. Verbatim blocks and `\\verb` are jumped over, so a
`\\begin{theorem}` inside them is not real; comment-like environments inside a statement (slogans,
references, history) are cut out of its body, the slogan kept.
"""
from __future__ import annotations

import dataclasses
import functools
import itertools
import re
from typing import Callable, Optional

from transforms.latex.discover import DEFAULT_PROOF_ENVS, Discovery
from transforms.latex.model import DocEvent
from transforms.latex.numbering import NUMBERED_EQUATION_ENVS, count_equation_numbers
from transforms.latex.scan import escaped, group, group_end, mandatory, optional, skip_inline_spaces

SECTION_LEVELS = {"part": -1, "chapter": 0, "section": 1, "subsection": 2, "subsubsection": 3,
                  "paragraph": 4}
PATH_LEVELS = (0, 1, 2, 3)          # chapter .. subsubsection titles make the section path
COUNTER_COMMANDS = ("setcounter", "addtocounter", "stepcounter", "refstepcounter")
MAX_TITLE = 2000
_SPACES_RE = re.compile(r"\s*")
_TOKENS_PER_CLOCK_CHECK = 64
UNCLOSED = "unclosed-environment"
STRAY_END = "stray-end"
AFTER_END = "after-end-document"
_BEGIN_RE = re.compile(r"\\begin\s*\{([^{}\s]{1,80})\}")
# A proof naming its statement: `[Proof of Theorem~\ref{thm:y}]`, or `\begin{proofof}{lem:x}`.
_REF_RE = re.compile(r"\\(?:[cC]ref|[vV]ref|autoref|ref|eqref|thmref|nameref)\*?\s*\{\s*([^{},]+?)\s*[,}]")
_BARE_LABEL_RE = re.compile(r"[^\s\\{}$]{1,200}")
_ITEM_RE = re.compile(r"\\item(?![A-Za-z@])")
_DEFINED_RE = re.compile(r"\s*\{?\s*\\([A-Za-z@]+)\s*\}?")
MAX_DEFINITION = 2000
# What comes before the `{` of a definition body: `\newcommand{\foo}[1]{`, `\def\foo#1{`, `\NewDocumentCommand\foo{m}{`.
_DEFINITION_HEAD_RE = re.compile(
    r"\\(?:(?:re|provide)?newcommand|DeclareRobustCommand|[A-Za-z]*DocumentCommand|[gex]?def)\*?\s*"
    r"(?:\{\s*\\[A-Za-z@]+\s*\}|\\[A-Za-z@]+)\s*(?:\[[^\]]*\]\s*)*(?:\{[^{}]*\}\s*)?[^{}\\]{0,40}\Z")
_HEAD_LOOKBEHIND = 300


def _item_style(text: str, begin: int) -> Optional[tuple[str, str, str]]:
    """(before, counter style, after) of an enumerate's labels: `[(a)]` or `[label=(\\alph*)]` -> ("(", "alph", ")");
    None without an option (the document's `\\theenumi` applies)."""
    pos = text.find("}", begin) + 1
    if not text.startswith("[", pos):
        return None
    got = group(text, pos, 200)
    spec = got[0] if got else ""
    spec = spec.split("label=", 1)[1].split(",")[0] if "label=" in spec else spec
    m = re.search(r"\\(arabic|roman|Roman|alph|Alph)\*?|[aAiI1]", spec)
    if not m:
        return ("", "arabic", "")
    style = m.group(1) or {"a": "alph", "A": "Alph", "i": "roman", "I": "Roman", "1": "arabic"}[m.group()]
    return (spec[:m.start()].strip("{}"), style, spec[m.end():].strip("{}"))


@dataclasses.dataclass
class RawStatement:
    """A statement as found in the flattened text: offsets into it, raw LaTeX only."""

    ordinal: int
    env: str
    begin: int                      # offset of its \begin
    body: str                       # raw body, comment-like environments removed
    title: Optional[str]
    label: Optional[str]
    section_path: tuple[str, ...]
    proof: Optional[str] = None
    slogan: Optional[str] = None


@dataclasses.dataclass
class Segmentation:
    statements: list[RawStatement]
    doc_events: list[DocEvent]
    skipped: list[tuple[str, str]]                   # (env, reason)
    sections: list[tuple[int, int, str, int]]        # (offset, level, raw title, end of the command)
    problems: list[tuple[int, str, str]] = dataclasses.field(default_factory=list)  # (offset, class, message)


@dataclasses.dataclass
class _Frame:
    env: str
    kind: str                       # "statement" | "proof" | "equation" | "other"
    begin: int = 0
    body_start: int = 0
    ordinal: int = -1
    title: Optional[str] = None
    label: Optional[str] = None
    slogan: Optional[str] = None
    solution: Optional[str] = None
    cuts: list = dataclasses.field(default_factory=list)
    section_path: tuple = ()
    target: Optional[RawStatement] = None
    target_label: Optional[str] = None          # the label a proof names as its statement
    local_definitions: Optional[list[int]] = None     # groups of the definitions that end with it


@functools.lru_cache(maxsize=64)
def _token_re(label_macros: frozenset[str], definitions: bool) -> re.Pattern:
    """The tokens of the pass; `definitions`: also the definitions numbering reads (`_definition`), left out
    of the pattern for the many bodies that have none, since every alternative costs at every backslash."""
    labels = "|".join(sorted((re.escape(n) for n in label_macros), key=len, reverse=True))
    definer = r"|(?P<definer>renewcommand\*?|(?:global\s*\\)?[gex]?def)(?![A-Za-z@])" if definitions else ""
    return re.compile(       # one leading backslash: the engine looks for it, not for every alternative everywhere
        r"\\(?:expandafter\s*(?=\\(?:begin|end)\s*\\expandafter)\\)?"                   # \expandafter\begin\expandafter{\x}
        r"(?:(?P<be>begin|end)(?:\s*\\expandafter)?\s*\{(?P<env>[^{}\s]{1,80})\}"
        r"|csname\s*(?P<csend>end)?(?P<csenv>[A-Za-z@]{1,80}\*?)\s*\\endcsname"     # \csname lemma\endcsname
        r"|(?P<sec>part|chapter|section|subsection|subsubsection|paragraph)(?![A-Za-z@])(?P<star>\*?)"
        r"|(?P<app>appendix)(?![A-Za-z@])"
        r"|(?P<matter>frontmatter|mainmatter|backmatter)(?![A-Za-z@])"
        r"|(?P<within>numberwithin)(?![A-Za-z@])"
        r"|(?P<ctr>setcounter|addtocounter|stepcounter|refstepcounter)(?![A-Za-z@])"
        r"|(?P<verb>verb)\*?(?![A-Za-z@])"
        r"|(?P<label>" + labels + r")(?![A-Za-z@])"
        + definer + r")")


# Whether a body may hold a definition `_definition` reads: one quick search decides which token pattern to use.
_MAY_DEFINE_RE = re.compile(r"\\(?:[ex]def(?![A-Za-z@])|g?def\s*\\the|renewcommand\*?\s*\{?\s*\\the)")


def _open_braces(text: str, start: int, end: int) -> list[int]:
    """Where the `{` groups still open at `end` begin, innermost first, counting from `start`.

    Counting first (at C speed) answers the usual case, a definition outside any brace group, without a
    walk; otherwise the walk goes back only as far as the outermost of them.
    """
    depth = (text.count("{", start, end) - text.count("\\{", start, end)
             - text.count("}", start, end) + text.count("\\}", start, end))
    found: list[int] = []
    level = 0
    opening, closing = text.rfind("{", start, end), text.rfind("}", start, end)
    while len(found) < depth and max(opening, closing) >= 0:
        if opening > closing:
            pos, opening = opening, text.rfind("{", start, opening)
            if not escaped(text, pos):
                if level:
                    level -= 1
                else:
                    found.append(pos)
        else:
            pos, closing = closing, text.rfind("}", start, closing)
            level += not escaped(text, pos)
    return found


def _int_or_none(text: Optional[str]) -> Optional[int]:
    try:
        return int(text.strip()) if text is not None else None
    except ValueError:
        return None


class _Segmenter:
    def __init__(self, text: str, found: Discovery, start: int, end: int, check_time: Callable[[], None],
                 definitions: bool):
        self.text, self.found, self.start, self.end = text, found, start, end
        self.definitions = definitions and bool(_MAY_DEFINE_RE.search(text, start, end))
        self.check_time = check_time
        self.stack: list[_Frame] = []
        self.open_statements: list[_Frame] = []     # the statement frames of the stack, in order
        self.open_count: dict[str, int] = {}
        self.statements: list[RawStatement] = []
        self.events: list[DocEvent] = []
        self.skipped: list[tuple[str, str]] = []
        self.sections: list[tuple[int, int, str, int]] = []
        self.problems: list[tuple[int, str, str]] = []
        self.path: list[tuple[int, str]] = []
        self.ordinal = 0
        self.last_closed: Optional[tuple[RawStatement, int]] = None
        self.by_label: dict[str, RawStatement] = {}
        self.proofs_of: list[tuple[str, str]] = []     # (label, proof) of proofs naming a later statement

    # -- frames ------------------------------------------------------------------------------
    def _push(self, frame: _Frame) -> None:
        self.stack.append(frame)
        self.open_count[frame.env] = self.open_count.get(frame.env, 0) + 1
        if frame.kind == "statement":
            self.open_statements.append(frame)

    def _pop_to(self, env: str, at: int) -> Optional[_Frame]:
        """Pop up to and including the innermost open `env` (its `\\end` at `at`); frames above it were never
        closed. The local definitions made in a popped frame stop holding there."""
        if not self.open_count.get(env):
            return None
        while self.stack:
            frame = self.stack.pop()
            self.open_count[frame.env] -= 1
            for group in frame.local_definitions or ():
                self.events.append(DocEvent(at, "endgroup", "", group))
            if frame.kind == "statement":
                self.open_statements.pop()
            if frame.env == env:
                return frame
            if frame.kind == "statement":
                self._unclosed(frame)

    def _unclosed(self, frame: _Frame) -> None:
        self.skipped.append((frame.env, UNCLOSED))
        self.problems.append((frame.begin, UNCLOSED, f"\\begin{{{frame.env}}} is never closed; statement dropped"))

    def _innermost_statement(self) -> Optional[_Frame]:
        return self.open_statements[-1] if self.open_statements else None

    # -- the pass ----------------------------------------------------------------------------
    def run(self) -> Segmentation:
        text, found = self.text, self.found
        token = _token_re(frozenset(found.label_macros), self.definitions)
        pos = self.start
        for count in itertools.count():
            m = token.search(text, pos, self.end)
            if not m:
                break
            if count % _TOKENS_PER_CLOCK_CHECK == 0:   # a token may scan a bounded group: watch the clock
                self.check_time()
            pos = m.end()
            if m.group("be"):
                env = m.group("env")
                env = self.found.name_macros.get(env[1:], env) if env.startswith("\\") else env
                pos = self._begin_or_end(m, env, m.group("be") == "end")
            elif m.group("csenv"):
                pos = self._csname(m)
            elif m.group("sec"):
                pos = self._sectioning(m)
            elif m.group("app"):
                self.events.append(DocEvent(m.start(), "appendix"))
            elif m.group("matter"):
                self.events.append(DocEvent(m.start(), m.group("matter")))
            elif m.group("within"):
                pos = self._numberwithin(m)
            elif m.group("ctr"):
                pos = self._counter(m)
            elif m.group("verb"):
                pos = self._verb(m)
            elif m.group("label"):
                pos = self._label(m)
            elif self.definitions and m.group("definer"):
                pos = self._definition(m)
        for frame in self.open_statements:
            self._unclosed(frame)
        for label, proof in self.proofs_of:            # a proof given before its statement
            statement = self.by_label.get(label)
            if statement is not None and statement.proof is None:
                statement.proof = proof
        self._count_after_end()
        return Segmentation(self.statements, self.events, self.skipped, self.sections, self.problems)

    def _csname(self, m: re.Match) -> int:
        """`\\csname lemma\\endcsname ... \\csname endlemma\\endcsname` runs the environment's own commands:
        a statement (or proof) like `\\begin{lemma}`; any other command name is not an environment."""
        env = m.group("csenv")
        if env in self.found.envs or env in self.found.proof_envs:
            return self._begin_or_end(m, env, bool(m.group("csend")))
        return m.end()

    def _begin_or_end(self, m: re.Match, env: str, is_end: bool) -> int:
        found = self.found
        if is_end:
            frame = self._pop_to(env, m.start())
            if frame is not None:
                self._close(frame, m.start(), m.end())
            elif env in found.envs:
                self.problems.append((m.start(), STRAY_END, f"\\end{{{env}}} without a matching \\begin; ignored"))
            return m.end()
        if env in found.envs:
            return self._open_statement(m, env)
        if env in found.solution_envs and self._innermost_statement() is not None:
            return self._cut_solution(m, env)
        if env in found.verbatim_envs or env in found.comment_envs:
            end_tag = "\\end{" + env + "}"
            stop = self.text.find(end_tag, m.end(), self.end)
            stop = self.end if stop < 0 else stop
            after = min(stop + len(end_tag), self.end)
            if env in found.comment_envs:
                inner = self._innermost_statement()
                if inner is not None and env == "slogan" and inner.slogan is None:
                    inner.slogan = self.text[m.end():stop].strip()
                for frame in self.open_statements:
                    frame.cuts.append((m.start(), after))
            return after
        if env in found.proof_envs:
            return self._open_proof(m, env)
        if env in NUMBERED_EQUATION_ENVS or env in found.equation_aliases:   # numbered at its \end
            self._push(_Frame(env, "equation", m.start(), m.end()))
            return m.end()
        if env == "appendices":
            self.events.append(DocEvent(m.start(), "appendix"))
        self._push(_Frame(env, "other", m.start()))
        return m.end()

    def _open_proof(self, m: re.Match, env: str) -> int:
        """A proof belongs to the statement it names (`[Proof of Theorem~\\ref{thm:y}]`,
        `\\begin{proofof}{lem:x}`), else to the statement just before it; a named statement that comes
        later gets the proof at the end of the pass."""
        title, body_start = optional(self.text, m.end(), MAX_TITLE)
        named = _REF_RE.search(title) if title else None
        label = named.group(1) if named else None
        p = skip_inline_spaces(self.text, body_start)
        if env not in DEFAULT_PROOF_ENVS and p < self.end and self.text[p] == "{":   # \begin{proofof}{lem:x}
            arg = mandatory(self.text, p, MAX_TITLE)
            if arg:
                body_start = arg[1]
                ref = _REF_RE.search(arg[0])
                bare = _BARE_LABEL_RE.fullmatch(arg[0].strip())
                label = label or (ref.group(1) if ref else bare.group() if bare else None)
        target = self.by_label.get(label) if label else None
        if target is None and self.last_closed is not None:    # unnamed, or naming no statement seen yet
            statement, closed_at = self.last_closed
            if _SPACES_RE.match(self.text, closed_at, m.start()).end() == m.start():
                target = statement
        self._push(_Frame(env, "proof", m.start(), body_start, target=target, target_label=label))
        return body_start

    def _cut_solution(self, m: re.Match, env: str) -> int:
        """A solution inside an exercise: out of the body (and of enclosing ones), kept as the proof."""
        end_tag = "\\end{" + env + "}"
        stop = self.text.find(end_tag, m.end(), self.end)
        if stop < 0:
            self._push(_Frame(env, "other", m.start()))
            return m.end()
        after = stop + len(end_tag)
        inner = self._innermost_statement()
        if inner.solution is None:
            inner.solution = self.text[m.end():stop].strip()
        for frame in self.open_statements:
            frame.cuts.append((m.start(), after))
        return after

    def _open_statement(self, m: re.Match, env: str) -> int:
        text = self.text
        title = label = None
        body_start = m.end()
        if env in self.found.tcb_label_prefix:          # \begin{env}{title}{label}
            t = mandatory(text, body_start, MAX_TITLE)
            lab = mandatory(text, t[1], MAX_TITLE) if t else None
            if t and lab:
                title = t[0].strip() or None
                prefix = self.found.tcb_label_prefix[env]
                label = (f"{prefix}:{lab[0].strip()}" if prefix else lab[0].strip()) if lab[0].strip() else None
                body_start = lab[1]
        else:
            p = skip_inline_spaces(text, body_start)
            if p < self.end and text[p] == "[":
                got = group(text, p, MAX_TITLE)
                if got:
                    title, body_start = got[0].strip() or None, got[1]
        frame = _Frame(env, "statement", m.start(), body_start, ordinal=self.ordinal, title=title, label=label,
                       section_path=tuple(t for _, t in self.path))
        self.events.append(DocEvent(m.start(), "begin_statement", env, self.ordinal))
        self.ordinal += 1
        self._push(frame)
        return body_start

    def _close(self, frame: _Frame, end_start: int, end_after: int) -> None:
        if frame.kind == "statement":
            body = self._body(frame, end_start)
            statement = RawStatement(frame.ordinal, frame.env, frame.begin, body, frame.title, frame.label,
                                     frame.section_path, proof=frame.solution, slogan=frame.slogan)
            self.statements.append(statement)
            self.last_closed = (statement, end_after)
            if statement.label:
                self.by_label.setdefault(statement.label, statement)
        elif frame.kind == "equation":
            env = self.found.equation_aliases.get(frame.env, frame.env)
            count = count_equation_numbers(env, self.text[frame.body_start:end_start])
            self.events.append(DocEvent(frame.begin, "begin_env", env, count))
        elif frame.env.rstrip("*") in ("figure", "table"):      # each caption steps the float's counter
            for _ in range(self.text.count("\\caption", frame.begin, end_start)):
                self.events.append(DocEvent(frame.begin, "refstepcounter", frame.env.rstrip("*")))
        elif frame.kind == "proof":
            proof = self.text[frame.body_start:end_start].strip()
            if frame.target is not None and frame.target.proof is None:
                frame.target.proof = proof
            elif frame.target is None and frame.target_label:
                self.proofs_of.append((frame.target_label, proof))
            self.last_closed = None

    def _body(self, frame: _Frame, end: int) -> str:
        pieces, pos = [], frame.body_start
        for a, b in frame.cuts:
            if a >= pos:
                pieces.append(self.text[pos:a])
                pos = b
        pieces.append(self.text[pos:end])
        return "".join(pieces).strip()

    def _sectioning(self, m: re.Match) -> int:
        name, starred = m.group("sec"), bool(m.group("star"))
        p = skip_inline_spaces(self.text, m.end())
        if p >= self.end or self.text[p] not in "[{":   # \titleformat{\chapter}, \let\section...: not a use
            return m.end()
        short, pos = optional(self.text, m.end(), MAX_TITLE)
        got = mandatory(self.text, pos, MAX_TITLE)
        title = got[0].strip() if got else (short or "")
        level = SECTION_LEVELS[name]
        self.events.append(DocEvent(m.start(), "sectioning", name, {"starred": starred}))
        after = got[1] if got else pos
        self.sections.append((m.start(), level, title, after))
        if level in PATH_LEVELS:
            self.path = [(lvl, t) for lvl, t in self.path if lvl < level] + [(level, title)]
        return after

    def _counter(self, m: re.Match) -> int:
        name = m.group("ctr")
        got = mandatory(self.text, m.end(), 200)
        if not got:
            return m.end()
        pos, value = got[1], None
        if name in ("setcounter", "addtocounter"):
            arg = mandatory(self.text, pos, 200)
            if arg:          # not digits: `\\value{c}` or a macro, read by numbering with the values of this point
                value, pos = _int_or_none(arg[0]), arg[1]
                value = arg[0].strip() if value is None else value
        self.events.append(DocEvent(m.start(), name, got[0].strip(), value))
        return pos

    def _definition(self, m: re.Match) -> int:
        """A body definition numbering reads: `\\renewcommand{\\thetheorem}{...}` or `\\def\\thelemma{...}` (a new
        `\\the<counter>` format, "renewthe"), and any `\\edef`/`\\xdef` (its body read with the counters' values
        of this point, "edef"). `\\renewcommand`, `\\def` and `\\edef` hold to the end of the enclosing group or
        environment ("endgroup" there), `\\gdef`, `\\xdef` and `\\global` ones to the end of the document; one
        inside another definition's body runs only where that is used, so it is not read here. An "edef" names
        the statements it is written in: the rest of their text sees its value."""
        command = m.group("definer")
        is_edef = command.endswith(("edef", "xdef"))
        named = _DEFINED_RE.match(self.text, m.end())
        if not named or not (is_edef or named.group(1).startswith("the")):
            return m.end()
        body = mandatory(self.text, named.end(), MAX_DEFINITION)
        if not body:
            return m.end()
        frame = self.stack[-1] if self.stack else None
        region = frame.begin if frame is not None else self.start
        braces = _open_braces(self.text, region, m.start())
        if any(_DEFINITION_HEAD_RE.search(self.text, max(brace - _HEAD_LOOKBEHIND, region), brace) for brace in braces):
            return m.end()
        group = None
        if not command.startswith(("global", "g", "x")):
            group = m.start()
            if braces:
                closes = group_end(self.text, braces[0])
                if closes > 0:          # a group never closed holds to the end
                    self.events.append(DocEvent(closes - 1, "endgroup", "", group))
            elif frame is not None:
                frame.local_definitions = (frame.local_definitions or []) + [group]
        if is_edef:           # the statements it is written in: the rest of their text sees its value too
            self.events.append(DocEvent(m.start(), "edef", named.group(1),
                                        (body[0], group, tuple(f.ordinal for f in self.open_statements))))
        else:
            self.events.append(DocEvent(m.start(), "renewthe", named.group(1)[3:], (body[0], group)))
        return body[1]

    def _numberwithin(self, m: re.Match) -> int:
        counter = mandatory(self.text, m.end(), 200)
        within = mandatory(self.text, counter[1], 200) if counter else None
        if not within:
            return m.end()
        self.events.append(DocEvent(m.start(), "numberwithin", counter[0].strip(), within[0].strip()))
        return within[1]

    def _verb(self, m: re.Match) -> int:
        pos = m.end()
        if pos >= self.end or self.text[pos].isspace() or self.text[pos].isalpha():
            return pos
        stop = self.text.find(self.text[pos], pos + 1, min(self.end, pos + 1000))
        newline = self.text.find("\n", pos + 1, min(self.end, pos + 1000))
        if stop < 0 or 0 <= newline < stop:
            return pos + 1
        return stop + 1

    def _label(self, m: re.Match) -> int:
        got = mandatory(self.text, m.end(), 500)
        if not got:
            return m.end()
        name = got[0].strip()
        if self.stack and self.stack[-1].kind == "statement" and self.stack[-1].label is None:
            self.stack[-1].label = name or None
        if name:
            self.events.append(DocEvent(m.start(), "label", name, self._label_context(m.start())))
        return got[1]

    def _label_context(self, pos: int) -> dict:
        """What a `\\label` at pos names: the innermost numbered thing around it (numbering decides the rest)."""
        for frame in reversed(self.stack):
            if frame.kind == "statement":
                return {"kind": "statement", "ordinal": frame.ordinal, "title": frame.title}
            if frame.kind == "equation":
                env = self.found.equation_aliases.get(frame.env, frame.env)
                row = count_equation_numbers(env, self.text[frame.body_start:pos] + " x")
                return {"kind": "equation", "row": row}
            if frame.env in ("enumerate", "enumerate*"):
                return {"kind": "item", "item": len(_ITEM_RE.findall(self.text, frame.begin, pos)),
                        "style": _item_style(self.text, frame.begin)}
            if frame.env.rstrip("*") in ("figure", "table"):
                return {"kind": frame.env.rstrip("*")}
        return {"kind": "current", "title": self.sections[-1][2] if self.sections else None}

    def _count_after_end(self) -> None:
        """Statements written after \\end{document} are never typeset: listed, not extracted."""
        if self.end < len(self.text):
            self.skipped.extend(unread_statements(self.text[self.end:], self.found, AFTER_END))


def unread_statements(text: str, found: Discovery, reason: str) -> list[tuple[str, str]]:
    """(env, reason) for each theorem-like \\begin in text that LaTeX never reads."""
    return [(m.group(1), reason) for m in _BEGIN_RE.finditer(text) if m.group(1) in found.envs]


def segment(text: str, found: Discovery, start: int = 0, end: Optional[int] = None,
            check_time: Callable[[], None] = lambda: None, definitions: bool = True) -> Segmentation:
    """Statements of text[start:end] (the document body) in document order, with numbering events.

    `check_time` is called every few tokens and may raise to stop a paper over its time budget;
    `definitions=False` leaves out the body definitions only numbering reads (`_Segmenter._definition`).
    """
    end = len(text) if end is None else end
    result = _Segmenter(text, found, start, end, check_time, definitions).run()
    result.statements.sort(key=lambda s: s.ordinal)
    result.doc_events.sort(key=lambda e: e.pos)
    renumbered = {s.ordinal: i for i, s in enumerate(result.statements)}
    for statement in result.statements:
        statement.ordinal = renumbered[statement.ordinal]
    for event in result.doc_events:                 # an unclosed statement keeps its counter step
        if event.type == "begin_statement":
            event.arg = renumbered.get(event.arg)
        elif event.type == "label" and event.arg.get("kind") == "statement":
            event.arg["ordinal"] = renumbered.get(event.arg["ordinal"])
        elif event.type == "edef" and event.arg[2]:
            event.arg = (*event.arg[:2], tuple(renumbered[o] for o in event.arg[2] if o in renumbered))
    return result
