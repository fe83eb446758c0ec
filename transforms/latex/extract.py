"""The extraction orchestrator: one submission's files in, its theorem-like statements out.

decode -> strip comments -> main file -> flatten -> macros and declarations -> discover ->
segment -> number -> expand and render each statement once. Nothing here raises: every problem
becomes an `Event`; a paper that cannot be extracted as a whole gets a fatal one ("no-main-file",
"timeout", or the class of an unexpected exception) and no statements.
"""
from __future__ import annotations

import dataclasses
import functools
import posixpath
import re
import time
import traceback
from typing import Callable, Mapping, Optional

from transforms.latex.comments import strip_comments
from transforms.latex.conditionals import Switches, resolve_body_conditionals, resolve_conditionals
from transforms.latex.decode import decode_tex, looks_binary, unix_line_ends
from transforms.latex.discover import Discovery, discover
from transforms.latex.flatten import Flattened, document_body_span, flatten
from transforms.latex.declarations import prepare_declarations
from transforms.latex.definitions import MacroTable, collect_macros, definition_spans
from transforms.latex.macros import expand_after, expand_macros
from transforms.latex.mainfile import document_class, find_main_file, is_source_name, is_tex_name
from transforms.latex.model import Event, ExtractionResult, LabelTarget, Limits, Statement
from transforms.latex.numbering import Numberer, substitute_frozen
from transforms.latex.references import (RESOLVED_COMMANDS, References, bibliography_labels, cited_works,
                                         cref_names)
from transforms.latex.render import normalize_space, render_text
from transforms.latex.segment import RawStatement, Segmentation, segment, unread_statements

BOOK_CLASSES = frozenset({"book", "report", "memoir", "scrbook", "scrreprt", "amsbook", "krantz",
                          "svmono", "svmult", "octavo", "tufte-book", "thesis", "ucthesis", "mimosis"})
# Classes without chapters: a local class built on one of them (`\\LoadClass{article}`) has none either.
ARTICLE_CLASSES = frozenset({"article", "amsart", "llncs", "revtex4", "revtex4-1", "revtex4-2", "elsarticle",
                             "scrartcl", "IEEEtran", "acmart", "lipics-v2021", "lipics-v2019"})
_LOADCLASS_RE = re.compile(r"\\LoadClass\s*(?:\[[^\]]*\])?\s*\{\s*(\w+)\s*\}")
_INTRO_RE = re.compile(r"intro|overview|preliminar", re.I)
_EXPANDAFTER_PASSES = 3


class _Timeout(Exception):
    pass


class _GuardedMacros:
    """The macro module's calls, each isolated: an exception there costs the expansion, not the paper."""

    def __init__(self, run: "_Run"):
        self.run = run
        self.table = MacroTable()

    def _record(self, exc: Exception, what: str, location: str) -> None:
        self.run.events.append(Event("macros", type(exc).__name__, f"{what}: {exc}"[:500], location))

    def collect(self, tex: str, location: str = "") -> MacroTable:
        try:
            return collect_macros(tex, self.run.limits)
        except Exception as exc:
            self._record(exc, "collecting macro definitions failed; no macros expanded", location)
            return MacroTable()

    def program(self, preamble: str, switches: Switches) -> tuple[str, Optional[MacroTable]]:
        """The preamble (packages inlined) with its `\\expandafter`s run (a few passes: `\\expandafter\\def\\csname`
        defines a macro a later `\\expandafter` expands) and its conditionals decided
        where the document says how (`macros.expand_after`, `conditionals.resolve_conditionals`), and
        its macro table when that was collected on the way and still holds. `switches` (what the
        packages set) is updated with what the preamble sets and defines, for the body."""
        table = functools.cache(lambda: collect_macros(preamble, self.run.limits))
        try:
            spans = definition_spans(preamble)
            for _ in range(_EXPANDAFTER_PASSES):     # a name one pass defines may be expanded by the next
                ran = expand_after(preamble, table, spans) if "\\expandafter" in preamble else preamble
                if ran is preamble:
                    break
                preamble, spans = ran, definition_spans(ran)
                table.cache_clear()
            decided = resolve_conditionals(preamble, None, switches, spans)
        except Exception as exc:
            self._record(exc, "running the preamble's \\expandafter and conditionals failed", "")
            return preamble, None
        return decided, (table() if decided == preamble and table.cache_info().currsize else None)

    def body(self, text: str, start: int, end: int, switches: Switches) -> str:
        """`text` with the conditionals of its body text[start:end] decided where the preamble says how,
        the branches not taken blanked in place (`conditionals.resolve_body_conditionals`)."""
        piece = text[start:end]
        try:
            body = resolve_body_conditionals(piece, switches)
        except Exception as exc:
            self._record(exc, "deciding the body's conditionals failed; both branches read", "")
            return text
        return text if body is piece else text[:start] + body + text[end:]

    def wrappers(self, preamble: str) -> str:
        """The preamble with declaration wrappers expanded; an `\\expandafter` they leave (a wrapper that
        builds a name, `\\expandafter\\newtheorem\\csname #1\\endcsname`) is run once too."""
        try:
            prepared = prepare_declarations(preamble, self.table, self.run.limits)
            if prepared is not preamble and "\\expandafter" in prepared:
                prepared = expand_after(prepared, lambda: self.table, definition_spans(prepared))
            return prepared
        except Exception as exc:
            self._record(exc, "expanding declaration wrappers failed", "")
            return preamble

    def expand(self, text: str, location: str = "", table: Optional[MacroTable] = None) -> tuple[str, list[str]]:
        try:
            return expand_macros(text, self.table if table is None else table, self.run.limits)
        except Exception as exc:
            self._record(exc, "macro expansion failed; text kept as written", location)
            return text, []

    def local_definitions(self, text: str, location: str) -> tuple[str, Optional[MacroTable]]:
        """A statement that defines macros before using them (`\\newcommand{\\ff}{F}` in its body):
        the text without the definitions, and the document's table with them added."""
        try:
            spans = definition_spans(text)
            if not spans:
                return text, None
            local = collect_macros(text, self.run.limits)
        except Exception as exc:
            self._record(exc, "reading definitions inside a statement failed", location)
            return text, None
        kept, pos = [], 0
        for start, end in spans:
            kept.append(text[pos:start])
            pos = end
        kept.append(text[pos:])
        return "".join(kept).strip(), MacroTable({**self.table.defs, **local.defs})

    def expand_local(self, text: str, location: str = "") -> tuple[str, list[str]]:
        """`text` expanded with the document's macros and those it defines itself."""
        text, table = self.local_definitions(text, location)
        return self.expand(text, location, table)

    def forget(self, names: list[str]) -> None:
        """Stop trying macros that were given up on: a recursive one costs its whole depth budget
        at every use, and would otherwise do so again in every later statement."""
        self.table = MacroTable({n: d for n, d in self.table.defs.items() if "\\" + n not in names})


class _Run:
    """State of one extraction: the files, the clock, the events so far."""

    def __init__(self, files: Mapping[str, bytes], limits: Limits):
        self.files = files
        self.limits = limits
        self.deadline = time.thread_time() + limits.timeout_s     # CPU time: a loaded machine never times a paper out
        self.events: list[Event] = []
        self.stage = "read"
        self.main: Optional[str] = None
        self._texts: dict[str, Optional[str]] = {}
        self.encodings: dict[str, str] = {}
        self.names = self._readable_names()

    def check_time(self) -> None:
        if time.thread_time() > self.deadline:
            raise _Timeout(self.stage)

    def _readable_names(self) -> list[str]:
        """Paths as LaTeX resolves them ("./a.tex" is "a.tex"), within the file-count and size limits."""
        self.files = {_normalized(name): data for name, data in sorted(self.files.items(), reverse=True)}
        names = sorted(self.files)
        if len(names) > self.limits.max_files:       # TeX sources first: figures are never read as text
            self.events.append(Event("read", "too-many-files",
                                     f"{len(names)} files; {self.limits.max_files} are read, TeX sources first"))
            names = sorted(sorted(names, key=lambda n: not is_source_name(n))[:self.limits.max_files])
        kept = []
        for name in names:
            if len(self.files[name]) > self.limits.max_file_bytes:
                self.events.append(Event("read", "file-too-large",
                                         f"{len(self.files[name])} bytes > {self.limits.max_file_bytes}", name))
            else:
                kept.append(name)
        return kept

    def text(self, name: str) -> Optional[str]:
        """A file's decoded, comment-stripped text (cached); None for binary or unknown files."""
        if name in self._texts:
            return self._texts[name]
        text = None
        data = self.files.get(name)
        if data is not None and name in self.names:
            if looks_binary(data):
                if is_tex_name(name):
                    self.events.append(Event("decode", "binary-file", "a .tex file holds binary data", name))
            else:
                decoded, encoding = decode_tex(data)
                self.encodings[name] = encoding
                text = strip_comments(unix_line_ends(decoded))
        self._texts[name] = text
        return text

    def candidates(self) -> dict[str, str]:
        """Texts that could be the main file: .tex names, or extensionless files (single-file papers)."""
        out = {}
        for name in self.names:
            base = posixpath.basename(name)
            if base.startswith("._"):           # macOS resource forks that tar copies along
                continue
            if is_tex_name(name) or ("." not in base and len(self.names) <= 3):
                text = self.text(name)
                if text is not None:
                    out[name] = text
        return out

    def encoding(self, used: list[str]) -> Optional[str]:
        found = [self.encodings[n] for n in used if n in self.encodings]
        return next((e for e in found if e != "utf-8"), found[0] if found else None)


def _normalized(name: str) -> str:
    path = posixpath.normpath(name.replace("\\", "/"))
    return path[2:] if path.startswith("./") else path


def _failure(run: _Run, stage: str, error_class: str, message: str) -> ExtractionResult:
    run.events.append(Event(stage, error_class, message, run.main or "", fatal=True))
    return ExtractionResult(statements=[], main_file=run.main, events=run.events)


def _is_book(flat_text: str, preamble_end: int) -> bool:
    cls = document_class(flat_text)
    if cls in BOOK_CLASSES:
        return True
    loaded = _LOADCLASS_RE.search(flat_text, 0, preamble_end)
    if loaded and (loaded.group(1) in BOOK_CLASSES or loaded.group(1) in ARTICLE_CLASSES):
        return loaded.group(1) in BOOK_CLASSES
    return cls not in ARTICLE_CLASSES and "\\chapter" in flat_text


class _Document:
    """The main file flattened, split into preamble and body, with its environments discovered."""

    def __init__(self, run: _Run, main: str, *, use_macros: bool, numbered: bool = True):
        limits = run.limits
        run.stage = "flatten"
        main_text = run.text(main) or ""
        self.macros = _GuardedMacros(run)
        path_macros = self.macros.collect(document_preamble(main_text), main)
        expand_path: Callable[[str], str] = lambda s: self.macros.expand(s, main, path_macros)[0]
        # re-inputting the same files cannot make the document much larger than its sources (include bombs)
        cap = min(limits.max_submission_bytes, 8 * sum(len(run.files[n]) for n in run.names) + (1 << 20))
        self.flat: Flattened = flatten(run.text, run.names, main, dataclasses.replace(limits, max_submission_bytes=cap),
                                       expand_path)
        run.events.extend(self.flat.events)
        run.check_time()
        text = self.flat.text
        self.body_start, self.body_end = document_body_span(text)
        self.preamble = ""               # a fragment without \begin{document}: all of it is body
        run.stage = "macros"             # declaration wrappers are expanded even without macro expansion
        table = None
        switches = Switches(booleans=dict(self.flat.switches.booleans))
        if self.body_start:
            self.preamble, table = self.macros.program(text[:self.body_start - len("\\begin{document}")],
                                                       switches)
        text = self.macros.body(text, self.body_start, self.body_end, switches)
        if text is not self.flat.text:
            self.flat = dataclasses.replace(self.flat, text=text)
        self.macros.table = table if table is not None else self.macros.collect(self.preamble)
        resolved = [name for name in RESOLVED_COMMANDS if name in self.macros.table.defs]
        if resolved:                     # kept as written: rendering prints them, edges read them
            table = self.macros.table
            self.macros.table = dataclasses.replace(
                table, defs={n: d for n, d in table.defs.items() if n not in resolved}, _pattern=None)
        declarations = self.macros.wrappers(self.preamble)
        run.check_time()
        run.stage = "discover"
        expand_title = (lambda s: self.macros.expand_local(s)[0]) if use_macros else (lambda s: s)
        self.found: Discovery = discover(declarations, text[self.body_start:self.body_end], expand_title,
                                         self.macros.table)
        self.declarations = declarations
        run.check_time()
        run.stage = "segment"
        self.seg: Segmentation = segment(text, self.found, self.body_start, self.body_end, run.check_time,
                                         definitions=numbered)
        for _, tail, reason in self.flat.ignored:
            self.seg.skipped.extend(unread_statements(tail, self.found, reason))
        run.check_time()
        self.locations = self.flat.source_map.locate_all(
            text, [s.begin for s in self.seg.statements] + [offset for offset, _, _ in self.seg.problems])
        for offset, error_class, message in self.seg.problems:
            file, line = self.locations[offset]
            run.events.append(Event("segment", error_class, message, f"{file}:{line}"))



def document_preamble(text: str) -> str:
    i = text.find("\\begin{document}")
    return text if i < 0 else text[:i]


def _main_file(run: _Run, main_file: Optional[str]) -> Optional[str]:
    run.stage = "mainfile"
    if main_file is not None:
        main_file = _normalized(main_file)
        if main_file in run.files and run.text(main_file) is not None:
            return main_file
        run.events.append(Event("mainfile", "main-file-unreadable",
                                f"requested main file {main_file!r} is missing or not text; detecting instead"))
    return find_main_file(run.candidates())


def _numbers(doc: _Document, run: _Run, style: References) -> tuple[dict[int, str], Optional[Numberer]]:
    """Each numbered statement's number, and the numberer: what every `\\label` names (numbered the same way),
    the macros an `\\edef` of the body froze that each statement sees and those it defines itself. `style`:
    how references in formats print (`_reference_style`)."""
    run.stage = "number"
    numbers: dict[int, str] = {}
    numberer = None
    try:
        numberer = Numberer(doc.declarations, doc.found.envs, book=_is_book(doc.flat.text, doc.body_start),
                            macros=doc.macros.table.defs)
        for event in doc.seg.doc_events:
            number = numberer.feed(event)
            if event.type == "begin_statement" and number is not None and event.arg is not None:
                numbers[event.arg] = number
        numberer.resolve_forward_references(numbers, style)
    except Exception as exc:          # numbering is a refinement: without it statements are still good
        run.events.append(Event("number", type(exc).__name__, f"numbering stopped: {exc}"[:500]))
    return numbers, numberer


_CLEVEREF_CAPITALISE_RE = re.compile(r"\\usepackage\s*\[[^\]]*capitali[sz]e[^\]]*\]\s*\{[^}]*cleveref")


def _references(run: _Run, doc: _Document, main: str, labels: dict[str, LabelTarget],
                style: References) -> tuple[References, dict]:
    """The document's labels and bibliography (the `.bbl` next to the main file, or the only one, and any
    `thebibliography` written in the document), and the works its `.bbl`/`.bib` entries identify."""
    bbls = [n for n in run.names if n.endswith(".bbl")]
    stem = posixpath.splitext(main)[0] + ".bbl"
    chosen = [stem] if stem in bbls else bbls[:1] if len(bbls) == 1 else []
    bbl = "\n".join(run.text(name) or "" for name in chosen)
    inline = doc.flat.text.find("\\begin{thebibliography}", doc.body_start)
    if inline >= 0:
        bbl += "\n" + doc.flat.text[inline:doc.body_end]
    bib = "\n".join(run.text(n) or "" for n in run.names if n.endswith(".bib"))
    references = dataclasses.replace(style, labels=labels, bibliography=bibliography_labels(bbl))
    return references, cited_works(bbl, bib)


def _reference_style(doc: _Document) -> References:
    """How the document's cleveref names things (`\\crefname`s, the `capitalise` option), without labels."""
    names = cref_names(doc.declarations, {name: spec.display_name for name, spec in doc.found.envs.items()})
    return References(capitalise=bool(_CLEVEREF_CAPITALISE_RE.search(doc.preamble)), cref_names=names)


def _introduction(doc: _Document, chars: int, references: References) -> Optional[str]:
    """Plain text of the section titled like an introduction (its first `chars` characters)."""
    sections = doc.seg.sections
    for i, (_, level, title, start) in enumerate(sections):
        if level <= 1 and _INTRO_RE.search(title):
            end = next((o for o, lvl, _, _ in sections[i + 1:] if lvl <= level), doc.body_end)
            raw = doc.flat.text[start:min(end, start + 3 * chars)]
            text, _ = render_text(doc.macros.expand(raw)[0], label_macros=frozenset(doc.found.label_macros),
                                  references=references)
            return text[:chars] or None
    return None


def _result(run: _Run, doc: _Document, main: str, statements: list[Statement], unexpanded: set[str]) -> ExtractionResult:
    return ExtractionResult(
        statements=statements, main_file=main, encoding=run.encoding(doc.flat.files_used), events=run.events,
        unexpanded_macros=sorted(unexpanded), skipped_environments=doc.seg.skipped,
        n_bytes=sum(len(run.files[n]) for n in dict.fromkeys(doc.flat.files_used) if n in run.files))


def _build(run: _Run, doc: _Document, raw: RawStatement, number: Optional[str], render: bool,
           rendered: dict[str, str], unexpanded: set[str], references: References,
           frozen: dict[str, str], defined: list[tuple[str, str]]) -> Statement:
    """The statement as output; `frozen`: the macros an `\\edef` of the body froze before it (their values),
    `defined`: those it freezes itself, in order."""
    spec = doc.found.envs[raw.env]
    file, line = doc.locations.get(raw.begin, ("", 0))
    location = f"{file}:{line}"
    latex = raw.body
    if render:
        latex, failed = doc.macros.expand_local(substitute_frozen(raw.body, frozen, defined), location)
        if failed:
            unexpanded.update(failed)
            doc.macros.forget(failed)
            run.events.append(Event("macros", "macro-not-expanded", ", ".join(sorted(set(failed)))[:500], location))

    def plain(piece: str) -> str:
        if piece not in rendered:
            text, events = render_text(doc.macros.expand(piece, location)[0], references=references)
            rendered[piece] = text
            run.events.extend(events)
        return rendered[piece]

    text, title, path, proof_text = "", raw.title, list(raw.section_path), None
    if render:
        text, events = render_text(latex, location, frozenset(doc.found.label_macros), references)
        run.events.extend(events)
        if raw.proof:
            proof_text, events = render_text(doc.macros.expand(raw.proof, location)[0], location,
                                             frozenset(doc.found.label_macros), references)
            run.events.extend(events)
        title = plain(substitute_frozen(raw.title, frozen)) if raw.title else None
        path = [plain(p) for p in raw.section_path]
    return Statement(
        ordinal=raw.ordinal, kind=spec.kind, env_name=raw.env, display_name=spec.display_name,
        number=number if spec.numbered else None, title=title, label=raw.label, section_path=path,
        file=file, line=line, statement_latex_raw=raw.body, statement_latex=latex, statement_text=text,
        proof_latex=raw.proof, proof_text=proof_text, slogan=normalize_space(raw.slogan) if raw.slogan else None)


def _extract(run: _Run, main_file: Optional[str], *, render: bool, number: bool) -> ExtractionResult:
    main = run.main = _main_file(run, main_file)
    if main is None:
        return _failure(run, "mainfile", "no-main-file", "no .tex file with \\documentclass or \\begin{document}")
    doc = _Document(run, main, use_macros=render, numbered=number)
    style = _reference_style(doc)
    numbers, numberer = _numbers(doc, run, style) if number else ({}, None)
    labels = numberer.labels if numberer is not None else {}
    frozen_at = numberer.frozen_at if numberer is not None else {}
    defined_within = numberer.defined_within if numberer is not None else {}
    references, works = _references(run, doc, main, labels, style)
    run.stage = "render"
    statements: list[Statement] = []
    rendered: dict[str, str] = {}
    unexpanded: set[str] = set()
    for raw in doc.seg.statements:
        run.check_time()
        statements.append(_build(run, doc, raw, numbers.get(raw.ordinal), render, rendered, unexpanded,
                                 references, frozen_at.get(raw.ordinal, {}), defined_within.get(raw.ordinal, [])))
    result = _result(run, doc, main, statements, unexpanded)
    result.labels, result.bibliography, result.cited_works = labels, dict(references.bibliography), works
    if render and run.limits.introduction_chars > 0:       # only a describer with intro context reads it
        result.introduction = _introduction(doc, run.limits.introduction_chars, references)
    return result


def _guarded(files: Mapping[str, bytes], limits: Limits, body: Callable[[_Run], ExtractionResult]) -> ExtractionResult:
    run = None
    try:
        run = _Run(files, limits)
        return body(run)
    except _Timeout as timeout:
        return _failure(run, str(timeout), "timeout", f"extraction exceeded {limits.timeout_s} CPU s (in {timeout})")
    except RecursionError as exc:
        return _failure(run, run.stage, "RecursionError", str(exc)[:500])
    except Exception as exc:             # the contract: never raise, record instead
        where = traceback.extract_tb(exc.__traceback__)[-1]
        message = f"{exc!s}"[:400] + f" ({posixpath.basename(where.filename)}:{where.lineno})"
        if run is None:
            return ExtractionResult(statements=[], events=[Event("read", type(exc).__name__, message, fatal=True)])
        return _failure(run, run.stage, type(exc).__name__, message)


def extract_submission(files: Mapping[str, bytes], *, main_file: str | None = None,
                       limits: Limits = Limits(), render: bool = True) -> ExtractionResult:
    """All theorem-like statements of one submission, numbered, macro-expanded and rendered.

    `render=False` skips macro expansion and plain-text rendering (statement_text stays "").
    """
    return _guarded(files, limits, lambda run: _extract(run, main_file, render=render, number=True))


def segment_only(files: Mapping[str, bytes], *, limits: Limits = Limits()) -> ExtractionResult:
    """Raw statements only: no macro expansion in statements, no numbering, no rendering (benchmark (a)).

    Author wrappers that declare theorem environments are still expanded in the preamble, since
    without them discovery would miss whole environments.
    """
    return _guarded(files, limits, lambda run: _extract(run, None, render=False, number=False))
