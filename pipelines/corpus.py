"""The corpus job: sources -> submissions -> statements -> described -> embedded -> Parquet.

`BuildCorpus` is the composite (its `expand` is the data flow); `run_corpus` runs it and then
does what must happen exactly once, on the launcher: check that every input's submissions are
accounted for, commit the staged files into place, and write `manifest.json` from the tables on
disk.
"""
from __future__ import annotations

import collections
import dataclasses
import time
from typing import Iterator, Mapping, Optional

import apache_beam as beam
from apache_beam.options.pipeline_options import PipelineOptions

from schemas import EDGES, FAILURES, PAPERS, THEOREMS, theorems_table
from schemas.theorems import DEFAULT_EMBEDDING_DIM
from transforms import corpus, duplicates
from transforms.describe import DescribeConfig, DescribeStatements
from transforms.edges import cited_doi, doi_keys, needs_cited_paper, with_cited_paper
from transforms.embed import EmbedConfig, EmbedStatements
from transforms.sources.base import metadata_ranges
from transforms.write import commit as staging
from transforms.write import files
from transforms.write import manifest as manifests
from transforms.write.parquet import WriteTable


@dataclasses.dataclass(frozen=True)
class CorpusConfig:
    """Everything the corpus job needs besides the runner options."""

    inputs: tuple[str, ...]          # paths as expanded on the launcher
    output: str
    read: corpus.ReadConfig
    metadata: Optional[str] = None
    files_per_partition: int = 1
    inputs_per_wave: int = 32        # inputs per pipeline run; each finished wave is never redone
    describe: Optional[object] = None   # transforms.describe.DescribeConfig, None: no describe stage
    embed: Optional[object] = None      # transforms.embed.EmbedConfig, None: no embeddings
    gpu_accelerator: Optional[str] = None   # resource hint for the model steps (GPU workers)
    known_papers: tuple[str, ...] = ()   # papers files of other inputs (committed, staged): their DOIs

    def model_step(self, transform: beam.PTransform, *, on_gpu: bool = True) -> beam.PTransform:
        """`transform` with the accelerator hint, when one is configured, so only model steps get GPUs."""
        if self.gpu_accelerator and on_gpu:
            return transform.with_resource_hints(accelerator=self.gpu_accelerator)
        return transform

    @property
    def embedding_dim(self) -> int:
        return int(self.embed.manifest()["dim"]) if self.embed is not None else DEFAULT_EMBEDDING_DIM


_EMBEDDED = beam.metrics.Metrics.counter(corpus.METRICS_NAMESPACE, "statements_embedded")


def _count_embedded(row: dict) -> dict:
    if row.get("embedding") is not None:
        _EMBEDDED.inc()
    return row


class ReadSubmissions(beam.PTransform):
    """Inputs -> (member ref, metadata record or None), spread across workers.

    Every source's inputs are indexed into small refs (one per paper, unique within an input);
    with a metadata file, refs and records are joined by id (CoGroupByKey: the file is never a
    side input; the refs' ids are, so only the records of the run's papers reach the join, and
    its memory follows the run's papers, not the snapshot). Papers are fetched only after that
    shuffle. Returns (work, failures).
    """

    def __init__(self, config: CorpusConfig):
        super().__init__()
        self.config = config

    def expand(self, pbegin):
        cfg = self.config
        indexed = (pbegin
                   | "Inputs" >> beam.Create(list(cfg.inputs))
                   | "Index" >> beam.ParDo(corpus.IndexInputs(cfg.read)).with_outputs(corpus.FAILURES_TAG,
                                                                                       main="refs"))
        failures = [indexed[corpus.FAILURES_TAG]]
        if not cfg.metadata:
            work = (indexed.refs
                    | "NoMetadata" >> beam.Map(lambda ref: (ref, None))
                    | "Spread" >> beam.Reshuffle())
            return work, failures
        source = cfg.read.make_source()
        refs = indexed.refs | "ById" >> beam.Map(lambda ref: (source.metadata_key(ref), ref))
        wanted = beam.pvalue.AsDict(refs | "Keys" >> beam.Map(lambda keyed: (keyed[0], True)))
        records = (pbegin
                   | "MetadataFile" >> beam.Create([cfg.metadata])
                   | "MetadataRanges" >> beam.FlatMap(metadata_ranges)
                   | "SpreadRanges" >> beam.Reshuffle()
                   | "ReadMetadata" >> beam.ParDo(corpus.ReadMetadata(cfg.read), wanted=wanted).with_outputs(
                       corpus.FAILURES_TAG, main="records"))
        failures.append(records[corpus.FAILURES_TAG])
        work = ({"refs": refs, "metadata": records.records}
                | "JoinMetadata" >> beam.CoGroupByKey()
                | "WithMetadata" >> beam.FlatMap(corpus.refs_with_metadata))
        return work, failures


def read_paper_dois(path: str) -> Iterator[tuple[str, str]]:
    """(DOI, paper id) for every DOI of every paper of one papers file, read a batch at a time."""
    for row in staging.iter_columns([path], ["paper_id", "doi"]):
        for doi in doi_keys(row["doi"]):
            yield doi, row["paper_id"]


def read_cited_dois(path: str, cited: Mapping[str, object]) -> Iterator[tuple[str, str]]:
    """`read_paper_dois` of one papers file, only the DOIs in `cited`."""
    return (pair for pair in read_paper_dois(path) if pair[0] in cited)


class CitedPapersByDoi(beam.PTransform):
    """{"edges", "papers"} -> the edges as two PCollections (cite edges that went through the join,
    every other edge), a cite edge naming a DOI now with `dst_paper_id` when a paper of this run or
    of `known_papers` files carries that DOI (a keyed join, no lookup table).

    Of the `known_papers` (the corpus so far) only the DOIs this run's edges cite reach the join
    (they are a side input of the reading step), so the join follows the run, not the corpus. The
    two parts are not flattened: `WriteTable` spills each where it is made (see there).
    """

    def __init__(self, known_papers: tuple[str, ...]):
        super().__init__()
        self.known_papers = known_papers

    def expand(self, inputs):
        edges, papers = inputs["edges"], inputs["papers"]
        unresolved, rest = edges | "NeedsPaper" >> beam.Partition(
            lambda edge, _: 0 if needs_cited_paper(edge) else 1, 2)
        cited = beam.pvalue.AsDict(unresolved
                                   | "CitedDois" >> beam.Map(cited_doi)
                                   | "OneEach" >> beam.Distinct()
                                   | "AsKeys" >> beam.Map(lambda doi: (doi, True)))
        dois = ((papers | "PaperDois" >> beam.FlatMap(lambda p: [(d, p["paper_id"]) for d in doi_keys(p.get("doi"))]),
                 edges.pipeline | "KnownPapers" >> beam.Create(list(self.known_papers))
                 | "KnownDois" >> beam.FlatMap(read_cited_dois, cited))
                | "AllDois" >> beam.Flatten())
        resolved = ({"edge": unresolved | "ByDoi" >> beam.Map(lambda e: (cited_doi(e), e)),
                     "paper": dois}
                    | "JoinDois" >> beam.CoGroupByKey()
                    | "FillPaper" >> beam.FlatMap(lambda kv: [with_cited_paper(e, kv[1]["paper"])
                                                              for e in kv[1]["edge"]]))
        return resolved, rest


class BuildCorpus(beam.PTransform):
    """The corpus job from inputs to staged Parquet files."""

    def __init__(self, config: CorpusConfig):
        super().__init__()
        self.config = config

    def expand(self, pbegin):
        cfg = self.config
        work, read_failures = pbegin | "Sources" >> ReadSubmissions(cfg)
        extracted = work | "ExtractStatements" >> beam.ParDo(corpus.ExtractPapers(cfg.read)).with_outputs(
            corpus.THEOREMS_TAG, corpus.FAILURES_TAG, corpus.EDGES_TAG, main=corpus.PAPERS_TAG)
        papers, theorems = extracted[corpus.PAPERS_TAG], extracted[corpus.THEOREMS_TAG]
        later_failures = []
        if cfg.describe is not None:
            theorems, failed = theorems | "Describe" >> cfg.model_step(
                DescribeStatements(cfg.describe), on_gpu=getattr(cfg.describe, "describer", "") == "vllm")
            later_failures.append(failed)
        if cfg.embed is not None:
            theorems, failed = theorems | "Embed" >> cfg.model_step(
                EmbedStatements(cfg.embed))
            later_failures.append(failed)
        # later stages' failure rows carry their statement's bundle, which names their file
        failures = read_failures + [extracted[corpus.FAILURES_TAG]] + later_failures
        staged = staging.staging_dir(cfg.output)
        theorem_table = theorems_table(cfg.embedding_dim)
        return {
            "papers": papers | "WritePapers" >> WriteTable(PAPERS, staged),
            "theorems": (theorems
                         | "CountEmbedded" >> beam.Map(_count_embedded)
                         | "WriteTheorems" >> WriteTable(theorem_table, staged, cfg.files_per_partition)),
            "failures": tuple(failures) | "WriteFailures" >> WriteTable(FAILURES, staged),
            "edges": ({"edges": extracted[corpus.EDGES_TAG], "papers": papers}
                      | "CitedPapers" >> CitedPapersByDoi(cfg.known_papers)
                      | "WriteEdges" >> WriteTable(EDGES, staged, cfg.files_per_partition)),
        }


def stage_configs(options: PipelineOptions, output: str, embed_model: Optional[str]):
    """The describe and embed configs from the options (embed None with --embed-model none)."""
    describe = DescribeConfig.from_options(options, output=output)
    embed = None
    if embed_model != "none":
        embed = EmbedConfig.from_options(options)
        if not getattr(embed, "enabled", True):
            embed = None
    return describe, embed


def describe_totals(theorem_files: list[str], failure_files: list[str], results: list) -> dict:
    """The describer's manifest figures: what the generation's table holds (counted a batch at a
    time: the descriptions are never all in memory), and what this run's pipelines (one per wave) paid."""
    from transforms.describe import summarize, totals_from_metrics

    rows = staging.iter_columns(theorem_files,
                                ["description", "description_input_tokens", "description_output_tokens"])
    failures = (f for f in staging.iter_columns(failure_files, ["stage", "error_class"]) if f["stage"] == "describe")
    paid: collections.Counter = collections.Counter()
    for result in results:
        paid.update(totals_from_metrics(result))
    return {**summarize(rows, failures), **paid}


def metric_totals(result) -> dict[str, int]:
    try:
        counters = result.metrics().query()["counters"]
    except (AttributeError, KeyError, NotImplementedError):
        return {}
    totals: dict[str, int] = {}
    for counter in counters:
        name = f"{counter.key.metric.namespace}/{counter.key.metric.name}"
        value = counter.committed if counter.committed is not None else counter.attempted
        totals[name] = totals.get(name, 0) + int(value or 0)
    return dict(sorted(totals.items()))


class IncompatibleOutputError(ValueError):
    """The output directory holds a corpus this run cannot be added to."""


def check_embedding_compatible(previous: Optional[dict], embedding: Optional[dict]) -> None:
    """An incremental run must not mix vectors of different models in one output."""
    before = (previous or {}).get("embedding")
    if before and embedding and (before.get("model"), before.get("dim")) != (embedding.get("model"),
                                                                              embedding.get("dim")):
        raise IncompatibleOutputError(f"the output holds embeddings of {before.get('model')} (dim {before.get('dim')}); "
                         f"this run would add {embedding.get('model')} (dim {embedding.get('dim')}): "
                         "use a new output directory")


def _fingerprint(config: CorpusConfig, recorded_options: dict) -> dict:
    """What decides the staged bytes: a staging directory is resumed only by a run with the same."""
    volatile = {"no_progress", "input", "inputs_per_wave"}   # waves do not change a file's bytes
    return {"inputs": list(config.inputs), "metadata": config.metadata, "source": config.read.source,
            "files_per_partition": config.files_per_partition, "limits": repr(config.read.limits),
            "source_options": repr(config.read.source_options),
            "embedding": config.embed.manifest() if config.embed is not None else None,
            "options": {k: v for k, v in recorded_options.items() if k not in volatile}}


def plan_waves(inputs: list[str], max_inputs: int) -> list[list[str]]:
    """`inputs` cut into consecutive waves of at most `max_inputs` inputs: each wave is one pipeline
    run, after which its inputs are marked finished (memory does not depend on a wave's size: the
    writers hold one paper's rows, see `transforms.write.parquet`)."""
    size = max(1, max_inputs)
    return [inputs[start:start + size] for start in range(0, len(inputs), size)]


def _run_waves(config: CorpusConfig, options: PipelineOptions, pending: list[str]) -> list:
    """Run the pipeline over `pending` inputs in waves; each wave's inputs are checked and marked
    finished as soon as it ends. Returns the Beam results (for their metrics)."""
    results = []
    rebuilt = {files.input_group(path) for path in config.inputs}
    for wave in plan_waves(pending, config.inputs_per_wave):
        known = [f for f in manifests.committed_files(config.output, PAPERS.name)
                 if staging.group_of_file(f) not in rebuilt]
        known += files.list_files(files.join(staging.staging_dir(config.output), PAPERS.name), ".parquet")
        pipeline = beam.Pipeline(options=options)
        _ = pipeline | "BuildCorpus" >> BuildCorpus(dataclasses.replace(config, inputs=tuple(wave),
                                                                        known_papers=tuple(known)))
        result = pipeline.run()
        result.wait_until_finish()
        results.append(result)
        groups = {files.input_group(path) for path in wave}
        accounting = staging.read_accounting(config.output, groups)
        if set(accounting) != groups:
            raise staging.AccountingError(f"inputs without accounting: {sorted(groups - set(accounting))}")
        staging.mark_finished(config.output, staging.check_accounting(config.output, accounting))
    return results


def run_corpus(config: CorpusConfig, options: PipelineOptions, *, recorded_options: dict) -> dict:
    """Run the job (resuming an interrupted one), check the accounting, commit, return the manifest."""
    started = time.monotonic()
    files.check_writable(config.output)
    fingerprint = _fingerprint(config, recorded_options)
    same_run = staging.resumes(config.output, fingerprint)
    resumed = manifests.finish_interrupted_commit(config.output, {   # a decided commit of any command first
        "inputs": len(config.inputs), "inputs_processed": 0, "inputs_finished_earlier": len(config.inputs),
        "inputs_redone_after_interruption": 0, "commit_finished_from_plan": True} if same_run else None)
    if resumed is not None and same_run:
        return resumed
    previous = manifests.read_manifest(config.output)
    embedding = config.embed.manifest() if config.embed is not None else None
    check_embedding_compatible(previous, embedding)
    staging.open_staging(config.output, fingerprint)
    finished = staging.finished_inputs(config.output)
    pending = [path for path in config.inputs if files.input_group(path) not in finished]
    redone = staging.discard_unfinished(config.output, {files.input_group(path) for path in pending})
    results = _run_waves(config, options, pending)
    ran = time.monotonic()
    groups = list(dict.fromkeys(files.input_group(path) for path in config.inputs))
    current = manifests.committed_relative(config.output, previous)
    superseded = duplicates.keep_one_copy(config.output, groups, current, theorems_table(config.embedding_dim),
                                          (previous or {}).get("accounting", {}))
    finished = staging.finished_inputs(config.output)      # recounted: keeping one copy may drop papers
    per_group = {**staging.check_accounting(config.output, {g: finished[g] for g in groups}), **superseded}
    relinked = duplicates.drop_stale_link_edges(config.output, per_group, current)
    plan = staging.plan_commit(config.output, [*per_group, *relinked], current)
    locate = staging.plan_locator(config.output, plan)
    describer = (config.describe.manifest(describe_totals(
        [locate(f) for f in plan["files"][THEOREMS.name]], [locate(f) for f in plan["files"][FAILURES.name]],
        results)) if config.describe is not None else None)
    resume = {"inputs": len(config.inputs), "inputs_processed": len(pending),
              "inputs_finished_earlier": len(config.inputs) - len(pending),
              "inputs_redone_after_interruption": redone}
    manifest = manifests.build_manifest(
        plan=plan, locate=locate, inputs=list(config.inputs), accounting=per_group, options=recorded_options,
        durations={"pipeline": ran - started, "total": time.monotonic() - started},
        describer=describer, embedding=embedding, resume=resume, previous=previous)
    by_bundle = manifest["counts"]["by_bundle"]
    for group, counts in per_group.items():
        written = by_bundle.get(counts["bundle"], {"ok": 0, "failed": 0, "skipped": 0})
        if written != {s: counts[s] for s in ("ok", "failed", "skipped")}:
            raise staging.AccountingError(f"{group}: committed papers {written} differ from the run's "
                                          f"accounting {counts}")
    metrics: collections.Counter = collections.Counter()
    for result in results:
        metrics.update(metric_totals(result))
    manifest["metrics"] = dict(sorted(metrics.items()))
    manifests.commit_generation(config.output, plan, manifest)
    return manifest
