"""Submissions to `papers`, `theorems`, `edges` and `failures` rows: pure row building plus thin Beam DoFns.

Every submission that enters ends as exactly one `papers` row with status ok, failed or skipped;
every problem met on the way (reader events, extraction events, a crashing extractor) becomes a
`failures` row. Extraction runs per paper inside a guard, so one hostile paper never stops a run.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import unicodedata
import urllib.parse
from typing import Iterable, Mapping, Optional

import apache_beam as beam
from apache_beam.metrics import Metrics

from schemas import PAPERS
from transforms.edges import formal_fields, statement_edges
from transforms.latex.model import Event, ExtractionResult, Limits, Statement, Submission
from transforms.sources import make_source
from transforms.sources.base import InputIndex, input_name, metadata_lines, unique_refs
from transforms.progress import Progress
from transforms.write.commit import DUPLICATE

METRICS_NAMESPACE = "thmforge.corpus"
PAPERS_TAG, THEOREMS_TAG, FAILURES_TAG, INPUTS_TAG = "papers", "theorems", "failures", "inputs"
EDGES_TAG = "edges"


# ---------------------------------------------------------------------------------------- rows

def normalize_latex(latex: str) -> str:
    """The form hashed for `content_hash`: NFC, whitespace runs collapsed, ends stripped."""
    return " ".join(unicodedata.normalize("NFC", latex).split())


def content_hash(latex: str) -> str:
    return hashlib.sha256(normalize_latex(latex).encode("utf-8")).hexdigest()


def theorem_id(paper_id: str, ordinal: int, digest: str) -> str:
    return f"{paper_id}#{ordinal}-{digest[:12]}"


def statement_url(sub: Submission, st: Statement) -> Optional[str]:
    """The statement's link: the one its source made, else the paper's page with the label or number."""
    if st.url:
        return st.url
    if not sub.url:
        return None
    anchor = st.label or (f"{st.display_name} {st.number}" if st.number else None)
    return f"{sub.url}#{urllib.parse.quote(anchor, safe=':-_.')}" if anchor else sub.url


def theorem_row(sub: Submission, st: Statement) -> dict:
    digest = content_hash(st.statement_latex)
    return {
        "theorem_id": theorem_id(sub.paper_id, st.ordinal, digest),
        "paper_id": sub.paper_id, "source": sub.source, "year": sub.year, "ordinal": st.ordinal,
        "kind": st.kind, "env_name": st.env_name, "display_name": st.display_name, "number": st.number,
        "title": st.title, "label": st.label, "tag": st.tag, "section_path": list(st.section_path),
        "file": st.file, "line": st.line, "statement_latex_raw": st.statement_latex_raw,
        "statement_latex": st.statement_latex, "statement_text": st.statement_text, "slogan": st.slogan,
        "proof_latex": st.proof_latex, "proof_text": st.proof_text, "content_hash": digest, "url": statement_url(sub, st),
        "bundle": sub.bundle, **formal_fields(st),
    }


def edge_rows(sub: Submission, result: ExtractionResult, theorems: list[dict]) -> list[dict]:
    """The paper's `edges` rows: its statements' links, with the paper's partition columns."""
    ids = {row["ordinal"]: row["theorem_id"] for row in theorems}
    paper = {"paper_id": sub.paper_id, "source": sub.source, "year": sub.year, "bundle": sub.bundle}
    return [{**paper, **edge} for edge in statement_edges(result, ids)]


def failure_row(sub: Submission, event: Event) -> dict:
    return {"paper_id": sub.paper_id, "theorem_id": None, "stage": event.stage,
            "error_class": event.error_class, "message": event.message,
            "location": event.location or sub.member, "fatal": event.fatal, "bundle": sub.bundle}


def bundle_failure_row(bundle: str, event: Event) -> dict:
    """A problem of an input as a whole (unreadable or truncated bundle): no paper to blame."""
    return {"paper_id": None, "theorem_id": None, "stage": event.stage, "error_class": event.error_class,
            "message": event.message, "location": event.location or bundle, "fatal": event.fatal,
            "bundle": bundle}


def duplicate_rows(found: InputIndex) -> list[dict]:
    """The copies `unique_refs` dropped, each a failure row of its paper (the kept copy has the
    paper's one `papers` row)."""
    return [{"paper_id": dropped.paper_id, "theorem_id": None, "stage": "read", "error_class": DUPLICATE,
             "message": f"another copy skipped: {kept.location} is kept (newest version, else the later copy)",
             "location": dropped.location, "fatal": False, "bundle": found.bundle}
            for dropped, kept in found.duplicates]


def _metadata_columns(sub: Submission) -> dict:
    record = sub.metadata or {}
    return {**{k: v for k, v in record.items() if k in PAPERS.columns}, "has_metadata": sub.metadata is not None}


def paper_row(sub: Submission, result: Optional[ExtractionResult], status: str,
              reason: Optional[str]) -> dict:
    row = {c: None for c in PAPERS.columns}
    row.update(paper_id=sub.paper_id, source=sub.source, source_id=sub.source_id, version=sub.version,
               year=sub.year, url=sub.url)
    row.update({k: v for k, v in _metadata_columns(sub).items() if v is not None or k == "has_metadata"})
    row.update(year=sub.year, bundle=sub.bundle, member=sub.member, n_files=len(sub.files),
               n_bytes=sum(len(b) for b in sub.files.values()),
               n_statements=len(result.statements) if result and status == "ok" else 0,
               main_file=result.main_file if result else None,
               encoding=result.encoding if result else None, status=status, status_reason=reason)
    return row


@dataclasses.dataclass
class PaperOutcome:
    """Everything one submission turned into."""

    paper: dict
    theorems: list[dict]
    failures: list[dict]
    introduction: Optional[str] = None
    edges: list[dict] = dataclasses.field(default_factory=list)


MAX_FAILURE_ROWS_PER_PAPER = 100


def capped_failures(sub: Submission, rows: list[dict]) -> list[dict]:
    """At most `MAX_FAILURE_ROWS_PER_PAPER` rows for one paper (fatal ones always kept), then one
    row counting, by class, what was cut: a hostile paper cannot flood the failures table."""
    if len(rows) <= MAX_FAILURE_ROWS_PER_PAPER:
        return rows
    room = MAX_FAILURE_ROWS_PER_PAPER - sum(1 for r in rows if r["fatal"])
    kept: list[dict] = []
    cut: dict[str, int] = {}
    for row in rows:
        if row["fatal"] or room > 0:
            kept.append(row)
            room -= not row["fatal"]
        else:
            cut[row["error_class"]] = cut.get(row["error_class"], 0) + 1
    summary = ", ".join(f"{name} {count}" for name, count in sorted(cut.items()))
    return kept + [failure_row(sub, Event("read", "failures-cut",
                                          f"{sum(cut.values())} more failure rows not written: {summary}"[:2000]))]


def _first_fatal(events: Iterable[Event]) -> Optional[Event]:
    return next((e for e in events if e.fatal), None)


def process_submission(sub: Submission, extract, limits: Limits) -> PaperOutcome:
    """Extract one submission in isolation: whatever happens, one paper row comes out."""
    outcome = _outcome(sub, extract, limits)
    outcome.failures = capped_failures(sub, outcome.failures)
    return outcome


def _outcome(sub: Submission, extract, limits: Limits) -> PaperOutcome:
    failures = [failure_row(sub, e) for e in sub.events]
    if sub.skip_reason:
        return PaperOutcome(paper_row(sub, None, "skipped", sub.skip_reason), [], failures)
    fatal = _first_fatal(sub.events)
    if fatal:
        return PaperOutcome(paper_row(sub, None, "failed", fatal.error_class), [], failures)
    try:
        result = extract(sub, limits)
    except Exception as exc:  # the guard of per-paper isolation: recorded, never fatal to the run
        event = Event("extract", type(exc).__name__, str(exc)[:2000], sub.member, fatal=True)
        return PaperOutcome(paper_row(sub, None, "failed", event.error_class), [],
                            failures + [failure_row(sub, event)])
    failures += [failure_row(sub, e) for e in result.events if e not in sub.events]  # a source may copy them
    fatal = _first_fatal(result.events)
    if fatal:
        return PaperOutcome(paper_row(sub, result, "failed", fatal.error_class), [], failures)
    theorems = [theorem_row(sub, st) for st in result.statements]
    return PaperOutcome(paper_row(sub, result, "ok", None), theorems, failures, result.introduction,
                        edge_rows(sub, result, theorems))


# ---------------------------------------------------------------------------------------- config

@dataclasses.dataclass(frozen=True)
class ReadConfig:
    """What the reading and extraction stages need (picklable, sent to workers)."""

    source: str = "arxiv"
    limits: Limits = Limits()
    staging: str = ""               # where the per-input accounting files go
    total_papers: Optional[int] = None   # for progress lines; None when unknown
    progress: bool = False
    describe_context: str = "body"  # body+abstract / body+intro / body+deps: theorem rows carry that context
    source_options: tuple[tuple[str, object], ...] = ()   # keyword options of the source
    launcher_pid: int = 0           # progress lines from other processes say which worker they count

    def make_source(self):
        return make_source(self.source, **dict(self.source_options))


def accounting_path(staging: str, group: str) -> str:
    return f"{staging.rstrip('/')}/_inputs/{group}.json"


def write_accounting(staging: str, group: str, bundle: str, submissions: int) -> None:
    """The number of submissions an input holds (duplicate copies included), written once per
    input, checked after the run."""
    from apache_beam.io.filesystems import FileSystems

    with FileSystems.create(accounting_path(staging, group)) as handle:
        handle.write(json.dumps({"group": group, "bundle": bundle, "submissions": submissions}).encode())


# ---------------------------------------------------------------------------------------- Beam

class IndexInputs(beam.DoFn):
    """Input path -> one small ref per paper (main); input problems and duplicates (failures)."""

    def __init__(self, config: ReadConfig):
        self.config = config
        self.inputs_read = Metrics.counter(METRICS_NAMESPACE, "inputs_read")

    def setup(self):
        self.source = self.config.make_source()

    def process(self, path: str):
        self.inputs_read.inc()
        found = unique_refs(self.source.index(path, self.config.limits))
        write_accounting(self.config.staging, found.group, found.bundle, len(found.refs) + len(found.duplicates))
        for event in found.events:
            yield beam.pvalue.TaggedOutput(FAILURES_TAG, bundle_failure_row(found.bundle, event))
        for row in duplicate_rows(found):
            yield beam.pvalue.TaggedOutput(FAILURES_TAG, row)
        yield from found.refs


class ReadMetadata(beam.DoFn):
    """A metadata file's line (offset, bytes or None when over the length cap) -> (key, record)
    for the keys in `wanted` (the papers of the run: a snapshot of millions of records never
    reaches the join whole); a bad line becomes a failure row instead, so the papers it describes
    are still processed."""

    def __init__(self, config: ReadConfig):
        self.config = config

    def setup(self):
        self.source = self.config.make_source()

    def process(self, span: tuple[str, int, int], wanted: Mapping[str, object]):
        for offset, raw in metadata_lines(span):
            try:
                if raw is None:
                    raise ValueError("line longer than the metadata line cap; skipped unread")
                parsed = self.source.parse_metadata_line(raw.decode("utf-8"))
            except ValueError as exc:   # UnicodeDecodeError and json.JSONDecodeError are ValueErrors
                preview = "" if raw is None else f": {raw[:200].decode('utf-8', 'replace')}"
                yield beam.pvalue.TaggedOutput(FAILURES_TAG, {
                    "paper_id": None, "theorem_id": None, "stage": "metadata", "error_class": "bad-metadata-line",
                    "message": f"{type(exc).__name__}: {exc}{preview}",
                    "location": f"{input_name(span[0])}@{offset}", "fatal": False, "bundle": None})
                continue
            if parsed and parsed[0] in wanted:
                yield parsed


def refs_with_metadata(joined):
    """(key, {"refs": [...], "metadata": [...]}) -> (ref, record or None) for each ref."""
    _, groups = joined
    records = list(groups["metadata"])
    for ref in groups["refs"]:
        yield ref, records[0] if records else None


DEPENDENCY_METHODS = ("ref", "name", "blueprint")


def dependency_texts(theorems: list[dict], edges: list[dict]) -> dict[str, str]:
    """theorem_id -> the statements of the same document it uses, one "Lemma 2.3: text" line each."""
    by_id = {row["theorem_id"]: row for row in theorems}
    lines: dict[str, list[str]] = {}
    for edge in edges:
        target = by_id.get(edge.get("dst_theorem_id"))
        if edge["relation"] != "uses" or edge["method"] not in DEPENDENCY_METHODS or target is None:
            continue
        heading = " ".join(part for part in (target.get("display_name"), target.get("number")) if part)
        line = f"{heading or target.get('kind')}: {target.get('statement_text') or ''}".strip()
        found = lines.setdefault(edge["src_theorem_id"], [])
        if line not in found:
            found.append(line)
    return {theorem_id: "\n".join(found) for theorem_id, found in lines.items()}


class ExtractPapers(beam.DoFn):
    """(ref, metadata record or None) -> paper row (main), theorem rows, failure rows.

    Fetching happens here, after the shuffle, so a submission's bytes never travel between workers.
    """

    def __init__(self, config: ReadConfig):
        self.config = config
        counter = lambda name: Metrics.counter(METRICS_NAMESPACE, name)  # noqa: E731
        self.counters = {s: counter(f"papers_{s}") for s in ("ok", "failed", "skipped")}
        self.papers_read = counter("papers_read")
        self.statements = counter("statements_found")
        self.failures = counter("failure_events")

    def setup(self):
        self.source = self.config.make_source()
        limits = self.config.limits
        if self.config.describe_context != "body+intro":        # no work for a stage that is off
            limits = dataclasses.replace(limits, introduction_chars=0)
        self.limits = limits
        self.found = 0
        where = "" if os.getpid() == self.config.launcher_pid else f" (worker {os.getpid()})"
        self.progress = Progress(f"extracting{where}", total=self.config.total_papers, unit="papers",
                                 enabled=self.config.progress)

    def teardown(self):
        self.progress.close()

    def process(self, element):
        ref, record = element
        self.papers_read.inc()
        try:
            sub = self.source.fetch(ref, self.config.limits)
        except Exception as exc:  # unreadable member: the paper fails, the run goes on
            sub = self.source.failed_fetch(ref, Event("read", type(exc).__name__, str(exc)[:2000], ref.location,
                                                      fatal=True))
        if record is not None:
            self.source.attach_metadata(sub, record)
        outcome = process_submission(sub, self.source.extract, self.limits)
        self.counters[outcome.paper["status"]].inc()
        self.statements.inc(len(outcome.theorems))
        self.failures.inc(len(outcome.failures))
        self.found += len(outcome.theorems)
        self.progress.advance(note=f"{self.found} statements found")
        yield outcome.paper
        from transforms.describe.records import PAPER_TITLE_KEY

        context = {**self._describe_context(outcome), PAPER_TITLE_KEY: outcome.paper.get("title")}
        dependencies = self._dependency_context(outcome)
        for row in outcome.theorems:
            yield beam.pvalue.TaggedOutput(THEOREMS_TAG, {**row, **context, **dependencies.get(row["theorem_id"], {})})
        for row in outcome.failures:
            yield beam.pvalue.TaggedOutput(FAILURES_TAG, row)
        for row in outcome.edges:
            yield beam.pvalue.TaggedOutput(EDGES_TAG, row)

    def _describe_context(self, outcome: PaperOutcome) -> dict:
        """The transient context keys the describe stage reads (and drops) for this paper's rows."""
        from transforms.describe.records import ABSTRACT_KEY, INTRODUCTION_KEY

        if self.config.describe_context == "body+abstract" and outcome.paper.get("abstract"):
            return {ABSTRACT_KEY: outcome.paper["abstract"]}
        if self.config.describe_context == "body+intro" and outcome.introduction:
            return {INTRODUCTION_KEY: outcome.introduction}
        return {}

    def _dependency_context(self, outcome: PaperOutcome) -> dict[str, dict]:
        """body+deps: per statement, the transient key holding the text of the statements it uses."""
        from transforms.describe.records import DEPENDENCIES_KEY

        if self.config.describe_context != "body+deps":
            return {}
        return {theorem_id: {DEPENDENCIES_KEY: text}
                for theorem_id, text in dependency_texts(outcome.theorems, outcome.edges).items()}
