"""A LaTeX book or lecture notes: one root .tex file and everything it includes, as one submission.

The input is the root file (it decides, for example, between a print and a web preamble) or a
folder, whose main file is then found by the same scoring as for arXiv papers. Every TeX source
file under the folder is read into memory (never extracted or copied to disk); images and other
binaries are not needed for statements and are left out. The project gets a source name
(`latex-project:<name>`, by default the folder name) and optional links: a project URL and a
per-statement template with `{label}`, `{number}` and `{name}` placeholders.
"""
from __future__ import annotations

import os
import re
from typing import Iterator, Optional

from transforms.latex.scan import group_end
from transforms.latex.mainfile import rank_main_candidates
from transforms.sources.folder import read_tree
from transforms.latex.model import Event, ExtractionResult, Limits, Statement, Submission

SOURCE = "latex-project"
FORMAT_ROOT = "thmforge-root.tex"
SOURCE_EXTENSIONS = (".tex", ".ltx", ".latex", ".sty", ".cls", ".def", ".cfg", ".clo", ".bbl")
_TITLE_RE = re.compile(r"\\title\s*(?:\[[^\]\n]{0,500}\])?\s*(?=\{)")
_CS_OR_BRACE_RE = re.compile(r"\\[A-Za-z@]+\*?|\\\\|[{}~]")


def document_title(tex: str) -> Optional[str]:
    """The `\\title{...}` of a main file as plain words (commands and braces dropped)."""
    m = _TITLE_RE.search(tex)
    if not m:
        return None
    end = group_end(tex, m.end())
    if end < 0:
        return None
    words = _CS_OR_BRACE_RE.sub(" ", tex[m.end() + 1:end - 1]).split()
    return " ".join(words) or None


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


def project_submission(path: str, limits: Limits = Limits(), *, name: Optional[str] = None,
                       url: Optional[str] = None, statement_url: Optional[str] = None,
                       year: Optional[int] = None, format_files: tuple[str, ...] = ()) -> Submission:
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
    project = name or os.path.basename(root.rstrip(os.sep)) or "project"
    sub = Submission(paper_id=f"{SOURCE}:{project}", source=SOURCE, source_id=project, files={},
                     bundle=path, member=main or "", year=year, url=url)
    if not os.path.isdir(root):
        sub.events.append(Event("read", "FileNotFoundError", f"no such file or folder: {path}", path, fatal=True))
        return sub
    tree = read_tree(root, limits, SOURCE_EXTENSIONS)
    sub.files, sub.events = tree.files, tree.events
    if main is None:
        main = project_main_file(sub.files)
    if main is None or main not in sub.files:
        sub.events.append(Event("read", "no-main-file", "no root .tex file with \\documentclass found", path,
                                fatal=True))
        return sub
    missing = [f for f in format_files if f not in sub.files]
    if missing:
        sub.events.append(Event("read", "FileNotFoundError", f"format files not found: {missing}", path,
                                fatal=True))
        return sub
    sub.member = main
    title_source = b"\n".join([sub.files[f] for f in format_files] + [sub.files[main]])
    if format_files:
        sub.files[FORMAT_ROOT] = "".join(f"\\input{{{f}}}\n" for f in (*format_files, main)).encode()
        main = FORMAT_ROOT
    sub.metadata = {"id": project, "title": document_title(title_source.decode("utf-8", "replace")),
                    "main_file": main, "statement_url": statement_url}
    return sub


def read(inputs: list[str], limits: Limits = Limits(), **options) -> Iterator[Submission]:
    """One submission per input (a root .tex file or a folder); `options` as for `project_submission`."""
    for path in inputs:
        yield project_submission(path, limits, **options)


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
