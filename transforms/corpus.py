"""Submissions to `papers`, `theorems` and `failures` rows: pure row building plus thin Beam DoFns.

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
from typing import Iterable, Optional

import apache_beam as beam
from apache_beam.metrics import Metrics

from schemas import PAPERS
from transforms.latex.model import Event, ExtractionResult, Limits, Statement, Submission
from transforms.progress import Progress
from transforms.sources import arxiv, source_module

METRICS_NAMESPACE = "thmforge.corpus"
PAPERS_TAG, THEOREMS_TAG, FAILURES_TAG, INPUTS_TAG = "papers", "theorems", "failures", "inputs"
STACKS_TAG_URL = "https://stacks.math.columbia.edu/tag/"


# ---------------------------------------------------------------------------------------- rows

def normalize_latex(latex: str) -> str:
    """The form hashed for `content_hash`: NFC, whitespace runs collapsed, ends stripped."""
    return " ".join(unicodedata.normalize("NFC", latex).split())


def content_hash(latex: str) -> str:
    return hashlib.sha256(normalize_latex(latex).encode("utf-8")).hexdigest()


def theorem_id(paper_id: str, ordinal: int, digest: str) -> str:
    return f"{paper_id}#{ordinal}-{digest[:12]}"


def statement_url(sub: Submission, st: Statement) -> Optional[str]:
    """The statement's link: the one its source made, its Stacks tag page, else the paper's page
    with the label or number."""
    if st.url:
        return st.url
    if st.tag and sub.source == "stacks":
        return STACKS_TAG_URL + st.tag
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
        "proof_latex": st.proof_latex, "content_hash": digest, "url": statement_url(sub, st),
        "bundle": sub.bundle,
    }


def failure_row(sub: Submission, event: Event) -> dict:
    return {"paper_id": sub.paper_id, "theorem_id": None, "stage": event.stage,
            "error_class": event.error_class, "message": event.message,
            "location": event.location or sub.member, "fatal": event.fatal, "bundle": sub.bundle}


def bundle_failure_row(bundle: str, event: Event) -> dict:
    """A problem of an input as a whole (unreadable or truncated bundle): no paper to blame."""
    return {"paper_id": None, "theorem_id": None, "stage": event.stage, "error_class": event.error_class,
            "message": event.message, "location": event.location or bundle, "fatal": event.fatal,
            "bundle": bundle}


def _metadata_columns(sub: Submission) -> dict:
    if sub.source == arxiv.SOURCE:
        return arxiv.paper_metadata(sub.metadata)
    record = sub.metadata or {}
    return {"has_metadata": sub.metadata is not None,
            **{k: v for k, v in record.items() if k in PAPERS.columns}}


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


def _first_fatal(events: Iterable[Event]) -> Optional[Event]:
    return next((e for e in events if e.fatal), None)


def process_submission(sub: Submission, extract, limits: Limits) -> PaperOutcome:
    """Extract one submission in isolation: whatever happens, one paper row comes out."""
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
    return PaperOutcome(paper_row(sub, result, "ok", None), theorems, failures, result.introduction)


# ---------------------------------------------------------------------------------------- config

@dataclasses.dataclass(frozen=True)
class ReadConfig:
    """What the reading and extraction stages need (picklable, sent to workers)."""

    source: str = arxiv.SOURCE
    limits: Limits = Limits()
    requester_pays: bool = False
    staging: str = ""               # where the per-input accounting files go
    total_papers: Optional[int] = None   # for progress lines; None when unknown
    progress: bool = False
    describe_context: str = "body"  # body+abstract / body+intro: theorem rows carry that context
    source_options: tuple[tuple[str, object], ...] = ()   # keyword options of the source's `read`
    launcher_pid: int = 0           # progress lines from other processes say which worker they count

    @property
    def store(self) -> arxiv.BundleStore:
        return arxiv.BundleStore(requester_pays=self.requester_pays)


def accounting_path(staging: str, group: str) -> str:
    return f"{staging.rstrip('/')}/_inputs/{group}.json"


def write_accounting(staging: str, group: str, bundle: str, submissions: int) -> None:
    """The number of submissions an input holds, written once per input, checked after the run."""
    from apache_beam.io.filesystems import FileSystems

    with FileSystems.create(accounting_path(staging, group)) as handle:
        handle.write(json.dumps({"group": group, "bundle": bundle, "submissions": submissions}).encode())


# ---------------------------------------------------------------------------------------- Beam

class IndexInputs(beam.DoFn):
    """Input path -> one small ref per submission (main), input problems (failures)."""

    def __init__(self, config: ReadConfig):
        self.config = config
        self.inputs_read = Metrics.counter(METRICS_NAMESPACE, "inputs_read")

    def process(self, path: str):
        self.inputs_read.inc()
        found = next(arxiv.index([path], self.config.store))
        write_accounting(self.config.staging, found.group, found.bundle, len(found.refs))
        for event in found.events:
            yield beam.pvalue.TaggedOutput(FAILURES_TAG, bundle_failure_row(found.bundle, event))
        yield from found.refs


class ReadSourceSubmissions(beam.DoFn):
    """Input path -> submissions, for sources that only offer `read` (books, Stacks, ProofWiki)."""

    def __init__(self, config: ReadConfig):
        self.config = config

    def process(self, path: str):
        module = source_module(self.config.source)
        group = arxiv.group_name(path)
        count = 0
        for sub in module.read([path], self.config.limits, **dict(self.config.source_options)):
            sub.bundle = path   # the input names the output files and the accounting of its papers
            count += 1
            yield sub
        write_accounting(self.config.staging, group, path, count)


def parse_metadata(item: tuple[str, bytes]):
    """A (file, raw line) of the snapshot to (id, record); a bad line (not UTF-8, not JSON, no id)
    becomes a failure row instead, so the papers it describes are still processed."""
    path, raw = item
    try:
        parsed = arxiv.parse_metadata_line(raw.decode("utf-8"))
    except ValueError as exc:   # UnicodeDecodeError and json.JSONDecodeError are ValueErrors
        yield beam.pvalue.TaggedOutput(FAILURES_TAG, {
            "paper_id": None, "theorem_id": None, "stage": "metadata", "error_class": "bad-metadata-line",
            "message": f"{type(exc).__name__}: {exc}: {raw[:200].decode('utf-8', 'replace')}",
            "location": path, "fatal": False, "bundle": None})
        return
    if parsed:
        yield parsed


def refs_with_metadata(joined):
    """(id, {"refs": [...], "metadata": [...]}) -> (ref, record or None) for each ref."""
    _, groups = joined
    records = list(groups["metadata"])
    for ref in groups["refs"]:
        yield ref, records[0] if records else None


class ExtractPapers(beam.DoFn):
    """(ref or submission, metadata) -> paper row (main), theorem rows, failure rows.

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
        self.module = source_module(self.config.source)
        self.found = 0
        where = "" if os.getpid() == self.config.launcher_pid else f" (worker {os.getpid()})"
        self.progress = Progress(f"extracting{where}", total=self.config.total_papers, unit="papers",
                                 enabled=self.config.progress)

    def teardown(self):
        self.progress.close()

    def process(self, element):
        item, record = element
        self.papers_read.inc()
        if isinstance(item, arxiv.MemberRef):
            try:
                sub = arxiv.fetch(item, self.config.limits, self.config.store)
            except Exception as exc:  # unreadable member: the paper fails, the run goes on
                sub = arxiv.empty_submission(item)
                sub.events.append(Event("read", type(exc).__name__, str(exc)[:2000], item.location, fatal=True))
        else:
            sub = item
        if record is not None:
            arxiv.attach_metadata(sub, record)
        outcome = process_submission(sub, self.module.extract, self.config.limits)
        self.counters[outcome.paper["status"]].inc()
        self.statements.inc(len(outcome.theorems))
        self.failures.inc(len(outcome.failures))
        self.found += len(outcome.theorems)
        self.progress.advance(note=f"{self.found} statements found")
        yield outcome.paper
        context = self._describe_context(outcome)
        for row in outcome.theorems:
            yield beam.pvalue.TaggedOutput(THEOREMS_TAG, {**row, **context})
        for row in outcome.failures:
            yield beam.pvalue.TaggedOutput(FAILURES_TAG, row)

    def _describe_context(self, outcome: PaperOutcome) -> dict:
        """The transient context keys the describe stage reads (and drops) for this paper's rows."""
        from transforms.describe.records import ABSTRACT_KEY, INTRODUCTION_KEY

        if self.config.describe_context == "body+abstract" and outcome.paper.get("abstract"):
            return {ABSTRACT_KEY: outcome.paper["abstract"]}
        if self.config.describe_context == "body+intro" and outcome.introduction:
            return {INTRODUCTION_KEY: outcome.introduction}
        return {}

