"""build-bench: registry -> cells (task x difficulty x variant, split in shards of indices) ->
instances -> Hive-partitioned Parquet, JSONL, a Hugging Face DatasetDict and a manifest.

    shards ──Reshuffle──► build instances ──► key by (suite, category) ──GroupByKey──► write
    part files (sorted by instance_id) into DIR/_staging_bench/ ──► driver: JSONL, HF, manifest,
    content hash ──► move into place

Every instance is a pure function of its keys and every file is written from sorted rows with a
deterministic name, so any runner and any number of workers give byte-identical output. The
content hash is the sha256 of `instances.jsonl`: one canonical JSON record per line, ordered by
(suite, instance_id). A generator that raises fails the run: a release with a missing instance
would have the wrong counts, so nothing is moved into place.

All I/O goes through Beam's `FileSystems`, so DIR may be a local path or any Beam filesystem URL
(`gs://bucket/release` on Dataflow): workers write the part files, the launcher the rest.
"""
from __future__ import annotations

import collections
import hashlib
import json
import os
import tempfile
from typing import Any, Iterable, Sequence

import apache_beam as beam
import pyarrow as pa
import pyarrow.parquet as pq
from apache_beam.io.filesystems import FileSystems
from apache_beam.metrics import Metrics
from apache_beam.options.pipeline_options import PipelineOptions

from schemas import INSTANCES
from transforms.bench.instances import GENERATOR_VERSION, Exemplars, build_instance, canonical_json
from transforms.bench.registry import get_task
from transforms.bench.release import ALL_SUITES, DEFAULT_PER_CELL, SUITES, Cell, release_cells
from transforms.write import files

SHARD_SIZE = 50
ROWS_PER_FILE = 50_000
STAGING = "_staging_bench"
OUTPUTS = ("instances", "instances.jsonl", "hf", "manifest.json")


def shards(cells: Iterable[Cell], size: int = SHARD_SIZE) -> list[tuple[str, str, tuple, int, int]]:
    """(task id, variant, ((difficulty, count), ...), first index, end index) slices of the cells of
    each (task, variant): the difficulties of one index share its k-shot exemplars."""
    groups: dict[tuple[str, str], list[tuple[str, int]]] = {}
    for c in cells:
        groups.setdefault((c.task_id, c.variant), []).append((c.difficulty, c.count))
    return [(task_id, variant, tuple(counts), start, min(start + size, max(n for _, n in counts)))
            for (task_id, variant), counts in groups.items()
            for start in range(0, max(n for _, n in counts), size)]


class BuildInstances(beam.DoFn):
    """One shard of a (task, variant) -> its instance rows, every difficulty of an index together."""

    def __init__(self, seed: int):
        self.seed = seed
        self.built = Metrics.counter("bench", "instances")

    def process(self, shard):
        task_id, variant, counts, start, stop = shard
        task = get_task(task_id)
        for index in range(start, stop):
            exemplars = Exemplars(task, variant, index, self.seed)
            for difficulty, count in counts:
                if index < count:
                    self.built.inc()
                    yield build_instance(task, difficulty, index, self.seed, variant, exemplars)


def partition_dir(root: str, suite: str, category: str) -> str:
    return files.join(root, INSTANCES.name, files.hive_dir(INSTANCES.partition_by, {"suite": suite, "category": category}))


def write_partition(item, root: str) -> tuple[str, str, int]:
    """Rows of one (suite, category) partition -> `part-NNNNN.parquet` files sorted by instance_id."""
    (suite, category), rows = item
    rows = sorted(rows, key=lambda r: r["instance_id"])
    directory = partition_dir(root, suite, category)
    for number, start in enumerate(range(0, len(rows), ROWS_PER_FILE)):
        table = INSTANCES.to_arrow(rows[start:start + ROWS_PER_FILE])
        with FileSystems.create(FileSystems.join(directory, f"part-{number:05d}.parquet")) as handle:
            pq.write_table(table, handle)
    return suite, category, len(rows)


class GenerateRelease(beam.PTransform):
    """Shards of cells -> written partitions, as (suite, category, rows) records."""

    def __init__(self, cells: Sequence[Cell], seed: int, root: str):
        super().__init__()
        self.cells, self.seed, self.root = list(cells), seed, root

    def expand(self, pipeline):
        return (pipeline
                | "Shards" >> beam.Create(shards(self.cells))
                | "Spread" >> beam.Reshuffle()
                | "Build" >> beam.ParDo(BuildInstances(self.seed))
                | "ByPartition" >> beam.Map(lambda row: ((row["suite"], row["category"]), row))
                | "Group" >> beam.GroupByKey()
                | "Write" >> beam.Map(write_partition, self.root))


def read_rows(root: str) -> list[dict]:
    """All staged rows with their partition columns, ordered by (suite, instance_id)."""
    rows = []
    base = FileSystems.join(root, INSTANCES.name)
    for path in files.list_files(base, ".parquet"):
        extra = files.hive_values(files.relative(path, base), INSTANCES.partition_by)
        table = pq.read_table(pa.BufferReader(files.read_bytes(path)))
        rows.extend({**r, **extra} for r in table.to_pylist())
    suite_order = {s: i for i, s in enumerate(ALL_SUITES)}
    rows.sort(key=lambda r: (suite_order[r["suite"]], r["instance_id"]))
    return [{name: r[name] for name in INSTANCES.columns} for r in rows]


def write_jsonl(rows: list[dict], path: str) -> str:
    """instances.jsonl; returns its sha256, the release's content hash."""
    digest = hashlib.sha256()
    with FileSystems.create(path) as handle:
        for row in rows:
            line = (canonical_json(row) + "\n").encode()
            digest.update(line)
            handle.write(line)
    return digest.hexdigest()


def count_cells(rows: list[dict]) -> list[dict]:
    counts = collections.Counter((r["suite"], r["structure"], r["task"], r["difficulty"], r["variant"] or "") for r in rows)
    return [{"suite": s, "task": f"{st}/{t}", "difficulty": d, "variant": v, "count": n}
            for (s, st, t, d, v), n in sorted(counts.items())]


def summary(rows: list[dict], seed: int, per_cell: int, suites: Sequence[str], content_hash: str) -> dict:
    main = [r for r in rows if r["suite"] == "main"]
    return {
        "kind": "bench",
        "seed": seed,
        "per_cell": per_cell,
        "suites": list(suites),
        "generator_version": GENERATOR_VERSION,
        "content_hash": f"sha256:{content_hash}",
        "counts": {
            "total": len(rows),
            "by_suite": dict(sorted(collections.Counter(r["suite"] for r in rows).items())),
            "by_category": dict(sorted(collections.Counter(r["category"] for r in rows).items())),
            "main_by_category": dict(sorted(collections.Counter(r["category"] for r in main).items())),
            "structures": len({r["structure"] for r in rows}),
            "main_tasks": len({(r["structure"], r["task"]) for r in main}),
        },
        "cells": count_cells(rows),
        "versions": {"beam": beam.__version__, "pyarrow": pa.__version__},
    }


def write_hf(rows: list[dict], directory: str, manifest: dict) -> None:
    """A DatasetDict with one split per suite and its dataset card. `save_to_disk` only reaches
    remote storage through fsspec, so it saves to a local temporary directory whose files are then
    copied into `directory` through FileSystems."""
    import datasets

    datasets.disable_progress_bars()
    features = datasets.Features.from_arrow_schema(INSTANCES.schema)
    splits = {}
    for suite in manifest["suites"]:
        table = pa.Table.from_pylist([r for r in rows if r["suite"] == suite], schema=INSTANCES.schema)
        fingerprint = hashlib.sha256(f"{manifest['content_hash']}/{suite}".encode()).hexdigest()[:16]
        splits[suite] = datasets.Dataset(datasets.table.InMemoryTable(table),
                                         info=datasets.DatasetInfo(features=features, description=INSTANCES.description),
                                         split=datasets.NamedSplit(suite), fingerprint=fingerprint)
    with tempfile.TemporaryDirectory() as local:
        datasets.DatasetDict(splits).save_to_disk(local)
        for path in files.list_files(local):
            files.write_bytes(files.join(directory, os.path.relpath(path, local)), files.read_bytes(path))
    files.write_bytes(files.join(directory, "README.md"), dataset_card(manifest).encode())


def dataset_card(manifest: dict) -> str:
    features = "\n".join(f"- `{f.name}` ({f.type}){': partition' if f.name in INSTANCES.partition_by else ''}"
                         for f in INSTANCES.schema)
    cells = "\n".join(f"| {c['suite']} | {c['task']} | {c['difficulty']} | {c['variant'] or '-'} | {c['count']} |"
                      for c in manifest["cells"])
    suites = ", ".join(f"{s}: {n}" for s, n in manifest["counts"]["by_suite"].items())
    return f"""---
pretty_name: thmforge data-structure reasoning benchmark
configs:
- config_name: default
---
# thmforge data-structure reasoning benchmark

Generated by `thmforge build-bench` ({manifest['generator_version']}) with seed {manifest['seed']} and
{manifest['per_cell']} instances per main-suite cell. Every instance is a pure function of
(task, difficulty, variant, index, seed): the same command regenerates this release byte for byte,
and another seed gives fresh instances.

- Content hash: `{manifest['content_hash']}` (sha256 of `instances.jsonl`)
- Instances: {manifest['counts']['total']} ({suites})
- Structures: {manifest['counts']['structures']}; main-suite tasks: {manifest['counts']['main_tasks']}

Each split is a suite. `spec` (JSON) holds the inputs that determine `answer` (JSON, typed by
`answer_type`); `thmforge bench-answer --task STRUCTURE/TASK --spec SPEC` recomputes it. `prompt` is
the stepwise prompt with the full description; `prompt_parts` renders any other mode
(`transforms.bench.prompts.render`).

## Features
{features}

## Counts per cell
| suite | task | difficulty | variant | count |
|---|---|---|---|---|
{cells}
"""


def run(output: str, seed: int = 0, per_cell: int = DEFAULT_PER_CELL, suites: Sequence[str] = SUITES,
        beam_args: Sequence[str] = ()) -> dict[str, Any]:
    """Build the release into `output`; returns the manifest."""
    cells = release_cells(tuple(suites), per_cell)
    staging = FileSystems.join(output, STAGING)
    files.check_writable(output)
    files.delete_tree(staging)
    with beam.Pipeline(options=PipelineOptions(list(beam_args))) as pipeline:
        _ = pipeline | "Release" >> GenerateRelease(cells, seed, staging)
    rows = read_rows(staging)
    expected = sum(c.count for c in cells)
    if len(rows) != expected:
        raise RuntimeError(f"built {len(rows)} instances, expected {expected}; nothing was moved into place")
    content_hash = write_jsonl(rows, FileSystems.join(staging, "instances.jsonl"))
    manifest = summary(rows, seed, per_cell, suites, content_hash)
    write_hf(rows, FileSystems.join(staging, "hf"), manifest)
    files.write_bytes(FileSystems.join(staging, "manifest.json"),
                 (json.dumps(manifest, indent=2, sort_keys=True) + "\n").encode())
    for name in OUTPUTS:
        files.move_tree(FileSystems.join(staging, name), FileSystems.join(output, name))
    files.delete_tree(staging)
    return manifest
