"""The Stacks Project: each chapter `<name>.tex` of a checkout, compiled with `preamble.tex`.

Every statement gets its tag from `tags/tags` (lines `TAG,chapter-label`, `#` comments) and the
link `https://stacks.math.columbia.edu/tag/TAG`. All theorem environments share the subsection
counter (the preamble says `\\newtheorem{lemma}[subsection]{Lemma}`), so a chapter alone numbers
its statements `section.subsection`; when `chapters.tex` gives the chapter's place in the book,
the chapter number is put in front, as the website and the book print it ("Lemma 10.5.3").
"""
from __future__ import annotations

import dataclasses
import os
import re
from typing import Iterator, Optional

from transforms.latex.model import Event, ExtractionResult, Limits, Submission
from transforms.sources.base import WholeInputSource, input_name
from transforms.sources.latex_project import document_title

SOURCE = "stacks"
TAG_URL = "https://stacks.math.columbia.edu/tag/"
PREAMBLE = "preamble.tex"
TAGS_FILE = os.path.join("tags", "tags")
_TAG_RE = re.compile(r"^[0-9A-Z]{4}$")
_CHAPTER_REF_RE = re.compile(r"\\hyperref\s*\[([A-Za-z0-9\-]+)-section-phantom\]")
_INCLUDE_RE = re.compile(r"\\(?:include|input)\s*\{\s*([A-Za-z0-9\-]+?)(?:\.tex)?\s*\}")
_INPUTS_PREAMBLE_RE = re.compile(r"\\input\s*\{?\s*preamble(?:\.tex)?\s*\}?")


def parse_tags(text: str) -> tuple[dict[str, str], list[str]]:
    """`tags/tags` to {full label: tag}, and the lines that are neither comments nor `TAG,label`."""
    tags: dict[str, str] = {}
    bad: list[str] = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        tag, sep, label = line.partition(",")
        tag, label = tag.strip(), label.strip()
        if not sep or not _TAG_RE.match(tag) or not label:
            bad.append(line)
            continue
        tags[label] = tag
    return tags, bad


def chapter_order(chapters_tex: str) -> dict[str, int]:
    """Chapter name to its number in the book, from the `\\hyperref[<name>-section-phantom]` list."""
    order: dict[str, int] = {}
    for m in _CHAPTER_REF_RE.finditer(chapters_tex):
        order.setdefault(m.group(1), len(order) + 1)
    return order


def tag_url(tag: str) -> str:
    return TAG_URL + tag


def _read_text(path: str) -> Optional[str]:
    try:
        with open(path, "rb") as handle:
            return handle.read().decode("utf-8", "replace")
    except OSError:
        return None


def _chapter_names(checkout: str) -> list[str]:
    """Top-level .tex files that input the preamble and have a document body: the chapters.

    A file that includes other chapters (the whole-book `book.tex`) is not a chapter itself.
    """
    texts = {}
    for entry in sorted(os.listdir(checkout)):
        if not entry.endswith(".tex") or entry == PREAMBLE:
            continue
        text = _read_text(os.path.join(checkout, entry)) or ""
        if _INPUTS_PREAMBLE_RE.search(text) and "\\begin{document}" in text:
            texts[entry[:-4]] = text
    return [name for name, text in texts.items()
            if not any(m.group(1) in texts and m.group(1) != name for m in _INCLUDE_RE.finditer(text))]


def _broken(checkout: str, error_class: str, message: str) -> Submission:
    name = input_name(checkout)
    sub = Submission(paper_id=f"{SOURCE}:{name}", source=SOURCE, source_id=name, files={}, bundle=name)
    sub.events.append(Event("read", error_class, message, name, fatal=True))
    return sub


def read_checkout(checkout: str, limits: Limits = Limits()) -> Iterator[Submission]:
    """One submission per chapter, in book order (chapters the book does not list come last)."""
    preamble = os.path.join(checkout, PREAMBLE)
    if not os.path.isfile(preamble):
        yield _broken(checkout, "FileNotFoundError", f"no {PREAMBLE} in {input_name(checkout)}: not a Stacks checkout")
        return
    tags_text = _read_text(os.path.join(checkout, TAGS_FILE))
    tags, bad_lines = parse_tags(tags_text or "")
    order = chapter_order(_read_text(os.path.join(checkout, "chapters.tex")) or "")
    with open(preamble, "rb") as handle:
        preamble_bytes = handle.read()
    names = _chapter_names(checkout)
    names.sort(key=lambda n: (order.get(n, len(order) + 1), n))
    for name in names:
        path = os.path.join(checkout, name + ".tex")
        main = name + ".tex"
        sub = Submission(paper_id=f"{SOURCE}:{name}", source=SOURCE, source_id=name, files={},
                         bundle=input_name(checkout), member=main)
        if tags_text is None:
            sub.events.append(Event("read", "missing-tags", f"{TAGS_FILE} not found; statements get no tags",
                                    sub.bundle))
        for line in bad_lines[:20]:
            sub.events.append(Event("read", "bad-tag-line", f"not TAG,label: {line[:200]}", TAGS_FILE))
        size = os.path.getsize(path)
        if size > limits.max_file_bytes:
            sub.events.append(Event("read", "file-too-large", f"{size} bytes > {limits.max_file_bytes}", main,
                                    fatal=True))
            yield sub
            continue
        with open(path, "rb") as handle:
            sub.files = {PREAMBLE: preamble_bytes, main: handle.read()}
        prefix = name + "-"
        chapter_tags = {label[len(prefix):]: tag for label, tag in tags.items() if label.startswith(prefix)}
        phantom = chapter_tags.get("section-phantom")
        sub.url = tag_url(phantom) if phantom else None
        sub.metadata = {"id": name, "title": document_title(sub.files[main].decode("utf-8", "replace")),
                        "main_file": main, "chapter_number": order.get(name), "tags": chapter_tags}
        yield sub


def read(inputs: list[str], limits: Limits = Limits()) -> Iterator[Submission]:
    """Every chapter of every given checkout."""
    for checkout in inputs:
        if not os.path.isdir(checkout):
            yield _broken(checkout, "FileNotFoundError", f"not a folder: {input_name(checkout)}")
            continue
        yield from read_checkout(checkout, limits)


def extract(submission: Submission, limits: Limits = Limits()) -> ExtractionResult:
    """The chapter's statements with their tags, links and book numbers."""
    from transforms.latex.extract import extract_submission

    metadata = submission.metadata or {}
    main = metadata.get("main_file")
    if main is None or main not in submission.files:
        return ExtractionResult([], events=list(submission.events))
    result = extract_submission(submission.files, main_file=main, limits=limits)
    result.events = list(submission.events) + list(result.events)
    tags = metadata.get("tags") or {}
    chapter = metadata.get("chapter_number")
    for statement in result.statements:
        if statement.number is not None and chapter is not None:
            statement.number = f"{chapter}.{statement.number}"
        tag = tags.get(statement.label) if statement.label else None
        if tag:
            statement.tag = tag
            statement.url = tag_url(tag)
    return result


@dataclasses.dataclass(frozen=True)
class Stacks(WholeInputSource):
    """A Stacks Project checkout per input, one paper per chapter (read whole: chapters are small)."""

    name = SOURCE

    def read_input(self, path: str, limits: Limits) -> Iterator[Submission]:
        return read([path], limits)

    def extract(self, submission: Submission, limits: Limits) -> ExtractionResult:
        return extract(submission, limits)
