"""A LaTeX book or lecture notes: one root .tex file and everything it includes, as one submission.

The input is the root file (it decides, for example, between a print and a web preamble) or a
folder, whose main file is then found by the same scoring as for arXiv papers. Every TeX source
file under the folder is read into memory (never extracted or copied to disk); images and other
binaries are not needed for statements and are left out. The project gets a source name
(`latex-project:<name>`, by default the folder name) and optional links: a project URL and a
per-statement template with `{label}`, `{number}` and `{name}` placeholders.

Title, authors and year come from the root's `\\title`, `\\author` (split at `\\and`) and `\\date`
(its first four-digit year); `--project-title`, `--project-author` and `--project-year` override
them. Without a title the project's name is its title; without a year the project gets
`UNKNOWN_YEAR` (0) and a recorded `no-year` event, so its statements never fall into a null
partition and the fix (`--project-year`) is on record.
"""
from __future__ import annotations

import dataclasses
import os
import re
from typing import Iterator, Optional

from transforms.latex import scan
from transforms.latex.comments import strip_line_comments
from transforms.latex.mainfile import SOURCE_EXTENSIONS, rank_main_candidates
from transforms.latex.model import Event, ExtractionResult, Limits, Statement, Submission
from transforms.sources.archive import read_tree
from transforms.sources.base import InvalidIdentifier, WholeInputSource, checked_id, input_name

SOURCE = "latex-project"
FORMAT_ROOT = "thmforge-root.tex"
UNKNOWN_YEAR = 0
_FRONT_RE = re.compile(r"\\(title|author|date)\s*(?=[\[{])")
_NOTE_RE = re.compile(r"\\(?:thanks|footnote)\s*(?=\{)")
_CS_OR_BRACE_RE = re.compile(r"\\[A-Za-z@]+\*?|\\\\|[{}~]")
_AND_RE = re.compile(r"\\and(?![A-Za-z@])|\\AND(?![A-Za-z@])")
_YEAR_RE = re.compile(r"(?<![0-9])(1[5-9][0-9]{2}|20[0-9]{2})(?![0-9])")


def _drop_notes(tex: str) -> str:
    r"""`tex` without its `\thanks{...}` and `\footnote{...}` (affiliations, grants)."""
    while m := _NOTE_RE.search(tex):
        found = scan.group(tex, m.end(), max_len=len(tex))
        tex = tex[:m.start()] + (tex[found[1]:] if found else tex[m.end():])
    return tex


def plain_words(tex: str) -> Optional[str]:
    r"""LaTeX as plain words (commands and braces dropped); None when nothing is left."""
    return " ".join(_CS_OR_BRACE_RE.sub(" ", _drop_notes(tex)).split()) or None


def front_matter(tex: str) -> dict[str, str]:
    r"""The first `\title`, `\author` and `\date` arguments of a root file (comments ignored)."""
    tex = strip_line_comments(tex)
    found: dict[str, str] = {}
    for m in _FRONT_RE.finditer(tex):
        if m.group(1) in found:
            continue
        _, pos = scan.optional(tex, m.end(), max_len=2000)
        group = scan.group(tex, scan.skip_spaces(tex, pos), max_len=20000)
        if group:
            found[m.group(1)] = group[0]
    return found


def document_title(tex: str) -> Optional[str]:
    r"""The `\title{...}` of a main file as plain words."""
    return plain_words(front_matter(tex).get("title", ""))


def document_authors(author: str) -> list[str]:
    r"""`\author{A \and B \\ Affiliation}` -> ["A", "B"]: the first line of each `\and` part."""
    names = (plain_words(re.split(r"\\\\|\n\s*\n", part, maxsplit=1)[0]) for part in _AND_RE.split(author))
    return [name for name in names if name]


def document_year(date: str) -> Optional[int]:
    r"""The first four-digit year of a `\date{...}`; None for `\today` or no date."""
    m = _YEAR_RE.search(date)
    return int(m.group(1)) if m else None


def project_main_file(files: dict[str, bytes]) -> Optional[str]:
    """The root file of a project folder: the best-scored document among the shallowest ones.

    A book keeps its root at the top of its folder; documents deeper down are chapters compiled
    alone, course variants or drafts, which may score higher on their own.
    """
    texts = {p: d.decode("utf-8", "replace") for p, d in files.items() if p.endswith(".tex")}
    ranked = rank_main_candidates(texts)
    if not ranked:
        return None
    top = min(path.count("/") for path, _ in ranked)
    return next(path for path, _ in ranked if path.count("/") == top)


def document_text(files: dict[str, bytes], main: str, limits: Limits) -> str:
    """The root with its includes inlined (the front matter often sits in an included file)."""
    from transforms.latex.comments import strip_comments
    from transforms.latex.decode import decode_tex, looks_binary
    from transforms.latex.flatten import flatten

    def load(name: str) -> Optional[str]:
        data = files.get(name)
        return None if data is None or looks_binary(data) else strip_comments(decode_tex(data)[0])

    return flatten(load, sorted(files), main, limits).text


def _describe(sub: Submission, tex: str, project: str, title: Optional[str], authors: tuple[str, ...],
              year: Optional[int]) -> None:
    """Title, authors and year from the front matter, the options overriding it."""
    front = front_matter(tex)
    sub.year = year or document_year(front.get("date", ""))
    if sub.year is None:
        sub.year = UNKNOWN_YEAR
        sub.events.append(Event("read", "no-year", f"no year in \\date and no --project-year; year "
                                f"{UNKNOWN_YEAR} stands for unknown", sub.member))
    sub.metadata = {"id": project, "title": title or plain_words(front.get("title", "")) or project,
                    "authors": list(authors) or document_authors(front.get("author", ""))}


def project_submission(path: str, limits: Limits = Limits(), *, name: Optional[str] = None,
                       url: Optional[str] = None, statement_url: Optional[str] = None,
                       year: Optional[int] = None, title: Optional[str] = None,
                       authors: tuple[str, ...] = (), format_files: tuple[str, ...] = ()) -> Submission:
    """The submission of one project given by its root .tex file or its folder.

    `format_files` are read before the root file, as when the root is compiled with a TeX format
    dumped from them (SymmetryBook compiles `book.tex` with the format made of `macros.tex`); the
    extractor then gets a small virtual root that inputs them and the real root in order.
    """
    path = os.path.abspath(path)
    if os.path.isfile(path):
        root, main = os.path.dirname(path), os.path.basename(path)
    else:
        root, main = path, None
    project = name or input_name(root) or "project"
    try:
        project, refused = checked_id(project, "project name"), None
    except InvalidIdentifier as exc:   # the failed paper is named in printable ASCII
        project, refused = ascii(project)[1:-1], exc
    sub = Submission(paper_id=f"{SOURCE}:{project}", source=SOURCE, source_id=project, files={},
                     bundle=ascii(input_name(path))[1:-1], member=main or "", year=year, url=url)
    if refused:
        sub.events.append(Event("read", "bad-project-name", str(refused), sub.bundle, fatal=True))
        return sub
    if not os.path.isdir(root):
        sub.events.append(Event("read", "FileNotFoundError", f"no such file or folder: {sub.bundle}", sub.bundle,
                                fatal=True))
        return sub
    tree = read_tree(root, limits, SOURCE_EXTENSIONS)
    sub.files, sub.events = tree.files, tree.events
    if main is None:
        main = project_main_file(sub.files)
    if main is None or main not in sub.files:
        sub.events.append(Event("read", "no-main-file", "no root .tex file with \\documentclass found", sub.bundle,
                                fatal=True))
        return sub
    missing = [f for f in format_files if f not in sub.files]
    if missing:
        sub.events.append(Event("read", "FileNotFoundError", f"format files not found: {missing}", sub.bundle,
                                fatal=True))
        return sub
    sub.member = main
    if format_files:
        sub.files[FORMAT_ROOT] = "".join(f"\\input{{{f}}}\n" for f in (*format_files, main)).encode()
        main = FORMAT_ROOT
    _describe(sub, document_text(sub.files, main, limits), project, title, authors, year)
    sub.metadata.update(main_file=main, statement_url=statement_url)
    return sub


def statement_link(template: Optional[str], statement: Statement, project: str) -> Optional[str]:
    """The template filled with the statement's label or number; None when what it needs is missing."""
    if not template:
        return None
    values = {"label": statement.label, "number": statement.number, "name": project}
    needed = [key for key in values if "{" + key + "}" in template]
    if any(values[key] is None for key in needed):
        return None
    return template.format(**{key: values[key] for key in needed})


def extract(submission: Submission, limits: Limits = Limits()) -> ExtractionResult:
    """Statements of the project, through the shared LaTeX extractor, with per-statement links."""
    from transforms.latex.extract import extract_submission

    metadata = submission.metadata or {}
    main = metadata.get("main_file")
    if main is None:
        return ExtractionResult([], events=list(submission.events))
    result = extract_submission(submission.files, main_file=main, limits=limits)
    result.events = list(submission.events) + list(result.events)
    template = metadata.get("statement_url")
    for statement in result.statements:
        statement.url = statement_link(template, statement, submission.source_id) or statement.url
    return result


@dataclasses.dataclass(frozen=True)
class LatexProject(WholeInputSource):
    """One book or set of notes per input; the options are those of `project_submission`."""

    name = SOURCE
    project_name: Optional[str] = None
    url: Optional[str] = None
    statement_url: Optional[str] = None
    year: Optional[int] = None
    title: Optional[str] = None
    authors: tuple[str, ...] = ()
    format_files: tuple[str, ...] = ()

    def read_input(self, path: str, limits: Limits) -> Iterator[Submission]:
        yield project_submission(path, limits, name=self.project_name, url=self.url,
                                 statement_url=self.statement_url, year=self.year, title=self.title,
                                 authors=self.authors, format_files=self.format_files)

    def extract(self, submission: Submission, limits: Limits) -> ExtractionResult:
        return extract(submission, limits)


def read(inputs: list[str], limits: Limits = Limits(), **options) -> Iterator[Submission]:
    """One submission per input (a root .tex file or a folder); `options` as for `project_submission`."""
    for path in inputs:
        yield project_submission(path, limits, **options)
