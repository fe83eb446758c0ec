"""The link job: a corpus directory's statements -> `restates` edges (see `transforms.link`).

Incremental: the statements already linked are listed in `_link/` (one file per run); only pairs
with a statement not yet listed are compared. A statement whose `llm` request failed is listed with
`llm_done` false: the next run with an endpoint asks for it again (without comparing it again). A run stages its edge files and its list like the
corpus job does, then commits them at once and records the thresholds in `manifest.json`.
"""
from __future__ import annotations

import time
from typing import Callable, Iterator, Optional, Sequence

import apache_beam as beam
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from apache_beam.io.filesystems import FileSystems
from apache_beam.options.pipeline_options import PipelineOptions

from schemas import EDGES, THEOREMS
from pipelines.corpus import metric_totals
from transforms import link, link_llm
from transforms.write import commit as staging
from transforms.write import files
from transforms.write import manifest as manifests
from transforms.write.parquet import WriteTable, shard_of

LINKED_DIR = "_link"
METRICS_NAMESPACE = "thmforge.link"
Neighbours = Callable[[np.ndarray], list]   # unit query vectors -> per query, [(file, row), ...]
_VECTOR_COLUMNS = ("statement_embedding", "embedding")
_COLUMNS = ["theorem_id", "paper_id", "source", "year", "statement_text", *_VECTOR_COLUMNS]
_EDGE_SIDE = ("theorem_id", "paper_id", "source", "year")
_LLM_COLUMNS = ["ordinal", "kind", "display_name", "number", "label", "proof_text", "proof_latex"]


def read_statements(path: str, output: str, proofs: bool = False) -> list[dict]:
    """The columns linking needs from one theorems file (a missing vector column reads as None),
    and where each row is (`file` relative to the output, `row`): a vector index names rows so.
    `proofs`: also what the `llm` method shows the model."""
    with FileSystems.open(path) as handle:
        table = pq.read_table(handle)
    present = [c for c in _COLUMNS + (_LLM_COLUMNS if proofs else []) if c in table.column_names]
    rows = table.select([c for c in present if c not in _VECTOR_COLUMNS]).to_pylist()
    vectors = statement_vectors(table)
    partition = partition_values(path)
    relative = files.relative(path, output)
    for number, (row, vector) in enumerate(zip(rows, vectors)):
        row.update(partition, file=relative, row=number, vector=vector)
    return rows


def statement_vectors(table: pa.Table) -> list[Optional[np.ndarray]]:
    """Per row, its statement vector, else its description vector, else None, as a float32 array:
    an array crosses a Beam shuffle as one buffer, a list of floats one float at a time."""
    vectors: list[Optional[np.ndarray]] = [None] * table.num_rows
    for column in _VECTOR_COLUMNS[::-1]:        # the statement vector, read last, wins
        if column not in table.column_names:
            continue
        values = table.column(column).combine_chunks()
        lengths = pc.fill_null(pc.list_value_length(values), 0).to_numpy(zero_copy_only=False)
        for dim in np.unique(lengths[lengths > 0]):
            rows = np.flatnonzero(lengths == dim)
            flat = values.take(pa.array(rows)).flatten().to_numpy(zero_copy_only=False)
            for number, vector in zip(rows, np.asarray(flat, dtype=np.float32).reshape(len(rows), int(dim))):
                vectors[number] = vector
    return vectors


def partition_values(path: str) -> dict:
    """`.../source=arxiv/year=2021/part-...` -> {"source": "arxiv", "year": 2021} (Hive partition columns)."""
    values = files.hive_values(path, ("source", "year"))
    year = values.get("year")
    return {"source": values.get("source"), "year": int(year) if year and year.lstrip("-").isdigit() else None}


def read_edges(path: str) -> list[dict]:
    """The rows of one committed edges file, with its partition columns."""
    with FileSystems.open(path) as handle:
        rows = pq.read_table(handle).to_pylist()
    partition = partition_values(path)
    return [{**row, **partition} for row in rows]


def read_linked(path: str) -> list[tuple[str, bool]]:
    """(theorem id, whether its llm edges are done) of one run's list (lists before the column: done)."""
    with FileSystems.open(path) as handle:
        table = pq.read_table(handle)
    done = table.column("llm_done").to_pylist() if "llm_done" in table.column_names else [True] * table.num_rows
    return list(zip(table.column("theorem_id").to_pylist(), done))


def _mark_new(joined):
    """`new`: never linked (compared for restates, asked for llm edges); `ask`: no run has its llm
    edges yet (new, or its request failed)."""
    theorem_id, groups = joined
    rows, linked = list(groups["rows"]), list(groups["linked"])
    for row in rows:
        yield {**row, "new": not linked, "ask": not any(linked)}


def _linked_row(joined) -> Iterator[dict]:
    _, groups = joined
    for row in groups["row"]:
        yield {"theorem_id": row["theorem_id"], "compared": row["new"], "llm_done": not list(groups["failed"])}


@beam.typehints.with_output_types(tuple[str, dict])     # the main output; signatures go tagged
class _TextKeys(beam.DoFn):
    def __init__(self):
        self.short = beam.metrics.Metrics.counter(METRICS_NAMESPACE, "statements_too_short_for_text")

    def process(self, row):
        signature = link.text_signature(row["statement_text"])
        if signature is None:
            self.short.inc()
            return
        member = {k: row[k] for k in ("theorem_id", "paper_id", "new")}
        for key in link.band_keys(signature):
            yield key, member
        yield beam.pvalue.TaggedOutput("signature", (row["theorem_id"], (signature, _edge_side(row))))


def _edge_side(row: dict) -> dict:
    """What a `restates` edge row says of one of its statements (`link.edge_rows`)."""
    return {k: row[k] for k in _EDGE_SIDE}


class TextRestatements(beam.PTransform):
    """Statements -> pairs of edge sides (`_edge_side`) whose normalized texts nearly coincide
    (MinHash LSH bands)."""

    def __init__(self, threshold: float):
        super().__init__()
        self.threshold = threshold

    def expand(self, statements):
        keyed = statements | "BandKeys" >> beam.ParDo(_TextKeys()).with_outputs("signature", main="bands")
        signatures = keyed.signature
        pairs = (keyed.bands
                 | "ByBand" >> beam.GroupByKey()
                 | "Candidates" >> beam.FlatMap(lambda kv: link.candidate_pairs(list(kv[1])))
                 | "Distinct" >> beam.Distinct())
        return (_join_pair_values(pairs, signatures, "Signature")
                | "Similar" >> beam.Filter(lambda p: link.estimated_jaccard(p[2][0], p[3][0]) >= self.threshold)
                | "Sides" >> beam.Map(lambda p: (p[2][1], p[3][1])))


def _join_pair_values(pairs, values, name: str):
    """(a, b) pairs and (id, value) -> (a, b, value of a, value of b), by two keyed joins."""
    with_a = ({"pair": pairs | f"{name}KeyA" >> beam.Map(lambda p: (p[0], p)), "value": values}
              | f"{name}JoinA" >> beam.CoGroupByKey()
              | f"{name}AttachA" >> beam.FlatMap(_attach_value))
    return ({"pair": with_a | f"{name}KeyB" >> beam.Map(lambda p: (p[1], p)), "value": values}
            | f"{name}JoinB" >> beam.CoGroupByKey()
            | f"{name}AttachB" >> beam.FlatMap(_attach_value))


def _attach_value(joined):
    _, groups = joined
    found = list(groups["value"])
    for item in groups["pair"] if found else ():
        yield item + (found[0],)


class _IndexCandidates(beam.DoFn):
    """Batches of new statements -> ((file, row) of a shortlisted statement, the new statement)."""

    def __init__(self, neighbours: Neighbours):
        self.neighbours = neighbours

    def process(self, batch):
        shortlists = self.neighbours(link.unit_rows(r["vector"] for r in batch))
        for query, locations in zip(batch, shortlists):
            for file, row in locations:
                yield (file, row), query


class EmbeddingRestatements(beam.PTransform):
    """Statements -> pairs of edge sides (`_edge_side`) whose vectors' cosine reaches the threshold.

    With `neighbours` (the corpus's vector index, handed down by the runner: a callable from a
    matrix of unit query vectors to, per query, the (file, row) of the statements it shortlists),
    each new statement meets its shortlist by a join on (file, row) and the pair is re-scored on
    the full-precision vectors. Without, the scan is exact: the corpus is cut into shards of
    `shard_size` statements and every new statement is sent to every other shard (its own has it
    already), so each comparison happens on one worker and no worker holds the whole corpus.
    """

    def __init__(self, threshold: float, shard_size: int, n_statements: int,
                 neighbours: Optional[Neighbours] = None):
        super().__init__()
        self.threshold = threshold
        self.shard_size = shard_size
        self.shards = max(1, -(-n_statements // shard_size))
        self.neighbours = neighbours

    def expand(self, statements):
        shards, threshold = self.shards, self.threshold
        with_vectors = statements | "WithVectors" >> beam.Filter(lambda r: r["vector"] is not None)
        members = with_vectors | "Slim" >> beam.Map(     # the vector as bytes: a coder copies them, an array it pickles
            lambda r: {**{k: r[k] for k in ("new", "file", "row", *_EDGE_SIDE)}, "vector": r["vector"].tobytes()})
        if self.neighbours is not None:
            return self._from_index(members)
        corpus = members | "ByShard" >> beam.Map(lambda r: (shard_of(r["theorem_id"], shards), r))
        queries = (members
                   | "New" >> beam.Filter(lambda r: r["new"])
                   | "ToOtherShards" >> beam.FlatMap(lambda r: (
                       (shard, r) for shard in range(shards) if shard != shard_of(r["theorem_id"], shards))))
        return ({"corpus": corpus, "queries": queries}
                | "MeetByShard" >> beam.CoGroupByKey()
                | "Search" >> beam.ParDo(_ShardSearch(threshold)))

    def _from_index(self, members):
        threshold = self.threshold
        shortlisted = (members
                       | "New" >> beam.Filter(lambda r: r["new"])
                       | "Batches" >> beam.BatchElements(min_batch_size=64, max_batch_size=1024)
                       | "SearchIndex" >> beam.ParDo(_IndexCandidates(self.neighbours)))
        located = members | "ByLocation" >> beam.Map(lambda r: ((r["file"], r["row"]), r))
        return ({"query": shortlisted, "found": located}
                | "MeetByLocation" >> beam.CoGroupByKey()
                | "Rescore" >> beam.FlatMap(lambda kv: (
                    ((a["theorem_id"], b["theorem_id"]), (_edge_side(a), _edge_side(b)))
                    for a, b in link.rescored_pairs(list(kv[1]["found"]), list(kv[1]["query"]), threshold)))
                | "Distinct" >> beam.CombinePerKey(_any)
                | "Sides" >> beam.Values())


class _ShardSearch(beam.DoFn):
    """One shard's statements against the new ones of every shard -> the edge sides of its pairs."""

    def __init__(self, threshold: float):
        self.threshold = threshold

    def setup(self):
        from threadpoolctl import threadpool_limits

        threadpool_limits(1, user_api="blas")   # a Beam worker per core parallelizes; BLAS threads on a shared core spin

    def process(self, shard) -> Iterator[tuple[dict, dict]]:
        _, groups = shard
        corpus = list(groups["corpus"])
        queries = list(groups["queries"]) + [r for r in corpus if r["new"]]
        for query, found, _ in link.embedding_pairs(corpus, queries, self.threshold):
            yield _edge_side(query), _edge_side(found)


def _any(values):
    """One of equal values (a pair found from both sides)."""
    return next(iter(values))


class _AskDependencies(beam.DoFn):
    """(paper id, its statements) -> `llm` edges from the proofs of its new statements (see
    `transforms.link_llm`); one `LLMCaller` per worker, requests in flight up to its concurrency.
    The ids of statements whose request failed go to the `failed` output (asked again next run)."""

    def __init__(self, config: link_llm.LLMEdgeConfig, group: str):
        self.config = config
        self.group = group
        self.counters = {name: beam.metrics.Metrics.counter(METRICS_NAMESPACE, f"llm_{name}")
                         for name in ("asked", "failed", "unparsed", "proposed", "kept", "rejected")}

    def setup(self):
        from transforms.llm import ChatClient, LLMCaller, RetryPolicy

        cfg = self.config
        client = ChatClient(cfg.endpoint, cfg.model, timeout_s=cfg.timeout_s, temperature=0.0, max_tokens=cfg.max_tokens)
        self.caller = LLMCaller(client, RetryPolicy(max_attempts=cfg.max_attempts), concurrency=cfg.concurrency,
                                thread_name="link-llm")

    def teardown(self):
        self.caller.close()

    def _ask(self, statement: dict, paper: list[dict]) -> tuple[str, list[dict], dict]:
        """(statement id, edges, counts) of one proof; counted by the caller (Beam metrics belong to
        the bundle's thread)."""
        theorem_id = statement["theorem_id"]
        candidates = link_llm.candidates_for(statement, paper)
        if not candidates:
            return theorem_id, [], {}
        answer = self.caller.ask(link_llm.messages(statement, candidates))
        if answer.result is None:
            return theorem_id, [], {"asked": 1, "failed": 1}
        uses = link_llm.proposals(answer.result.content)
        if uses is None:
            return theorem_id, [], {"asked": 1, "unparsed": 1}
        kept, rejected = link_llm.accepted(statement, candidates, uses)
        edges = [link_llm.edge_row(statement, target, evidence, self.group) for target, evidence in kept]
        return theorem_id, edges, {"asked": 1, "proposed": len(uses), "kept": len(kept), "rejected": rejected}

    def process(self, element):
        _, rows = element
        paper = list(rows)
        asked = [r for r in paper if r["ask"] and link_llm.proof_of(r)]
        for theorem_id, edges, counts in self.caller.map(lambda statement: self._ask(statement, paper), asked):
            for name, value in counts.items():
                self.counters[name].inc(value)
            if counts.get("failed"):
                yield beam.pvalue.TaggedOutput("failed", theorem_id)
            yield from edges


def _present(edges, ids, column: str):
    """Edges whose `column` names a statement of `ids` ((id, None) pairs); the others are dropped."""
    name = column.split("_")[0].capitalize()
    return ({"edge": edges | f"By{name}" >> beam.Map(lambda e: (e[column], e)), "id": ids}
            | f"Join{name}" >> beam.CoGroupByKey()
            | f"Keep{name}" >> beam.FlatMap(lambda kv: kv[1]["edge"] if list(kv[1]["id"]) else ()))


class KeepCurrentEdges(beam.PTransform):
    """Restates edges of earlier runs -> those whose two statements still exist (a paper rebuilt
    with changed statements has new theorem ids: its old edges go)."""

    def __init__(self, edge_files: list[str]):
        super().__init__()
        self.edge_files = edge_files

    def expand(self, statements):
        earlier = (statements.pipeline | "EdgeFiles" >> beam.Create(self.edge_files)
                   | "ReadEdges" >> beam.FlatMap(read_edges))
        if not self.edge_files:     # a first run: nothing to check against every statement
            return earlier
        ids = statements | "Ids" >> beam.Map(lambda r: (r["theorem_id"], None))
        return _present(_present(earlier, ids, "src_theorem_id"), ids, "dst_theorem_id")


class LinkStatements(beam.PTransform):
    """Theorem and linked-list files -> staged `restates` edges and the list of statements now linked."""

    def __init__(self, config: link.LinkConfig, theorem_files: list[str], linked_files: list[str],
                 n_statements: int, earlier_edge_files: Sequence[str] = (),
                 neighbours: Optional[Neighbours] = None, llm: Optional[link_llm.LLMEdgeConfig] = None):
        super().__init__()
        self.config = config
        self.theorem_files = theorem_files
        self.linked_files = linked_files
        self.n_statements = n_statements
        self.earlier_edge_files = list(earlier_edge_files)
        self.neighbours = neighbours
        self.llm = llm

    def expand(self, pbegin):
        cfg = self.config
        rows = (pbegin | "TheoremFiles" >> beam.Create(self.theorem_files)
                | "SpreadFiles" >> beam.Reshuffle()
                | "ReadStatements" >> beam.FlatMap(read_statements, cfg.output, self.llm is not None))
        if self.linked_files:
            linked = (pbegin | "LinkedFiles" >> beam.Create(self.linked_files)
                      | "ReadLinked" >> beam.FlatMap(read_linked))
            statements = ({"rows": rows | "RowsById" >> beam.Map(lambda r: (r["theorem_id"], r)), "linked": linked}
                          | "JoinLinked" >> beam.CoGroupByKey()
                          | "MarkNew" >> beam.FlatMap(_mark_new))
        else:                       # a first run: every statement is new, nothing to join
            statements = rows | "AllNew" >> beam.Map(lambda r: {**r, "new": True, "ask": True})
        text = statements | "Text" >> TextRestatements(cfg.text_threshold)
        embedding = statements | "Embedding" >> EmbeddingRestatements(
            cfg.embedding_threshold, cfg.shard_size, self.n_statements, self.neighbours)
        edges = [_edges(pairs, method, cfg.group) for method, pairs in (("text", text), ("embedding", embedding))]
        edges.append(statements | "Earlier" >> KeepCurrentEdges(self.earlier_edge_files))
        if self.llm is None:        # nothing asked, nothing failed; a request failed in an earlier run stays pending
            linked_rows = (statements | "LinkedNow" >> beam.Filter(lambda r: r["new"])
                           | "LinkedRows" >> beam.Map(
                               lambda r: {"theorem_id": r["theorem_id"], "compared": True, "llm_done": True}))
        else:
            asked = (statements
                     | "ByPaper" >> beam.Map(lambda r: (r["paper_id"], r))
                     | "Papers" >> beam.GroupByKey()
                     | "AskDependencies" >> beam.ParDo(_AskDependencies(self.llm, cfg.group)).with_outputs(
                         "failed", main="edges"))
            edges.append(asked.edges)
            linked_now = (statements | "LinkedNow" >> beam.Filter(lambda r: r["new"] or r["ask"])
                          | "LinkedNowById" >> beam.Map(
                              lambda r: (r["theorem_id"], {"theorem_id": r["theorem_id"], "new": r["new"]})))
            linked_rows = ({"row": linked_now, "failed": asked.failed | "FailedById" >> beam.Map(lambda i: (i, None))}
                           | "JoinFailed" >> beam.CoGroupByKey()
                           | "LinkedRows" >> beam.FlatMap(_linked_row))
        staged = staging.staging_dir(cfg.output)
        return {
            "edges": (edges | "AllEdges" >> beam.Flatten() | "WriteEdges" >> WriteTable(EDGES, staged)),
            "linked": (linked_rows | "AllLinked" >> beam.combiners.ToList()
                       | "WriteLinked" >> beam.Map(_write_linked, files.join(staged, LINKED_DIR, cfg.group))),
        }


def _edges(pairs, method: str, group: str):
    return pairs | f"{method.capitalize()}Edges" >> beam.FlatMap(lambda p: link.edge_rows(p[0], p[1], method, group))


_LINKED_SCHEMA = pa.schema([("theorem_id", pa.string()), ("compared", pa.bool_()), ("llm_done", pa.bool_())])


def _linked_table(rows: list[dict]) -> bytes:
    sink = pa.BufferOutputStream()
    pq.write_table(pa.Table.from_pylist(sorted(rows, key=lambda r: r["theorem_id"]), _LINKED_SCHEMA), sink)
    return sink.getvalue().to_pybytes()


def _write_linked(rows: list[dict], path: str) -> int:
    files.write_bytes(path + ".parquet", _linked_table(rows))
    return len(rows)


def next_group(output: str) -> str:
    """`link_00001`, `link_00002`, ...: one group per run, so a run never overwrites another's edges."""
    runs = files.list_files(files.join(output, LINKED_DIR), ".parquet")
    return f"{link.LINK_GROUP_PREFIX}{len(runs) + 1:05d}"


def _count_rows(paths: list[str]) -> int:
    total = 0
    for path in paths:
        with FileSystems.open(path) as handle:
            total += pq.ParquetFile(handle).metadata.num_rows
    return total


def run_link(config: link.LinkConfig, options: PipelineOptions, neighbours: Optional[Neighbours] = None,
             search: str = "exact", llm: Optional[link_llm.LLMEdgeConfig] = None) -> dict:
    """Run the job, commit its edges as a new generation, list what it linked; returns the manifest's record.

    Earlier runs' restates edges are carried into the new generation only while both their
    statements exist. `neighbours` (see `EmbeddingRestatements`) shortlists embedding candidates;
    `search` says where it came from, for the record. With `llm`, an endpoint proposes `uses`
    edges from the proofs of the new statements (method `llm`)."""
    import dataclasses

    started = time.monotonic()
    files.check_writable(config.output)
    manifests.finish_interrupted_commit(config.output)
    previous = manifests.read_manifest(config.output)
    if previous is None:
        raise FileNotFoundError(f"{config.output}: no manifest.json (not a build-corpus output)")
    config = dataclasses.replace(config, group=next_group(config.output))
    theorem_files = manifests.committed_files(config.output, THEOREMS.name, previous)
    linked_files = files.list_files(files.join(config.output, LINKED_DIR), ".parquet")
    earlier_edges = [f for f in manifests.committed_files(config.output, EDGES.name, previous)
                     if staging.group_of_file(f).startswith(link.LINK_GROUP_PREFIX)]
    earlier_groups = sorted({staging.group_of_file(f) for f in earlier_edges})
    n_statements = _count_rows(theorem_files)
    staging.open_staging(config.output, {"job": "link", "group": config.group, **config.manifest()})
    pipeline = beam.Pipeline(options=options)
    _ = pipeline | "Link" >> LinkStatements(config, theorem_files, linked_files, n_statements, earlier_edges,
                                            neighbours, llm)
    result = pipeline.run()
    result.wait_until_finish()
    staged = staging.staging_dir(config.output)
    newly_linked = staging.read_columns(files.list_files(files.join(staged, LINKED_DIR), ".parquet"),
                                        list(_LINKED_SCHEMA.names))
    plan = staging.plan_commit(config.output, [config.group, *earlier_groups],
                               manifests.committed_relative(config.output, previous))
    locate = staging.plan_locator(config.output, plan)
    linked = [r for r in staging.read_columns([locate(f) for f in plan["files"][EDGES.name]
                                               if staging.group_of_file(f).startswith(link.LINK_GROUP_PREFIX)],
                                              ["relation", "method", "bundle"])]
    restates = [r for r in linked if r["relation"] == "restates"]
    record = {**config.manifest(), "runs": len(linked_files) + 1, "statements": n_statements,
              "statements_compared": sum(1 for r in newly_linked if r["compared"]),
              "edges_written": sum(1 for r in restates if r["bundle"] == config.group),
              "edges_total": len(restates), "stale_edges_removed": _count_rows(earlier_edges) - sum(
                  1 for r in linked if r["bundle"] != config.group),
              "vector_column": "statement_embedding, else embedding", "embedding_search": search,
              "duration_s": round(time.monotonic() - started, 3)}
    if llm is not None:
        counts = {name.split("/llm_", 1)[1]: value for name, value in metric_totals(result).items()
                  if name.startswith(f"{METRICS_NAMESPACE}/llm_")}
        record["llm"] = {**llm.manifest(), **counts,
                         "edges_written": sum(1 for r in linked if r["method"] == "llm" and r["bundle"] == config.group),
                         "to_retry": sum(1 for r in newly_linked if not r["llm_done"])}
    manifest = {**previous, "files": plan["files"], "commit": plan["stats"], "link": record}
    manifests.commit_generation(config.output, plan, manifest)
    files.write_bytes(files.join(config.output, LINKED_DIR, f"linked-{config.group}.parquet"),
                      _linked_table(newly_linked))
    return record
