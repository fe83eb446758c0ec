"""The index job: a corpus's theorem files -> `DIR/index/` (vector index shards, search database).

Plan (driver): every theorems Parquet file is a shard with a fixed first doc id; files already
indexed with the same size keep their shard, new or changed files get new ones. Beam job
(`retrieval.index_beam`): each new file's vectors are read once into its rows of the stored
vectors file (and, when the representation has no quantizer yet, a sample of every file is
taken in the same read and the IVF-PQ quantizer trained on one worker); then the new shards are
encoded in parallel from their stored rows, each writing its PQ codes. Driver: merge the shards'
inverted lists into one memory-mapped file, rebuild the search table with its BM25 index, and
replace the records. An incremental `build-corpus` run thus encodes only its new files; the
merge and the search table are rewritten (I/O, no encoding). A corpus under APART_FROM_ROWS
given no Beam options (`thmforge index DIR`) runs the same steps in this process, without Beam.
"""
from __future__ import annotations

import json
import os
import pathlib
import resource
import shutil
import subprocess
import sys
import time
from typing import TYPE_CHECKING, Sequence, Union

from retrieval import index_steps, vector_index
from retrieval.catalog import embedding_info, read_manifest
from retrieval.search import REPRESENTATIONS
from retrieval.vector_index import Shard
from schemas import theorems_table

if TYPE_CHECKING:
    from apache_beam.options.pipeline_options import PipelineOptions

APART_FROM_ROWS = 250_000   # from this many rows the merge and the search table run in fresh processes


def plan_shards(root: pathlib.Path) -> list[Shard]:
    """The shards of the current theorem files: an indexed file of the same size keeps its shard."""
    import pyarrow.parquet as pq

    previous = {s.file: s for s in vector_index.shards_of(vector_index.read_json(root / vector_index.INDEX_DIR
                                                                                 / vector_index.PLAN))}
    next_base = max((s.base + s.rows for s in previous.values()), default=0)
    shards = []
    for file, size in vector_index.theorem_files(root).items():
        kept = previous.get(file)
        if kept is not None and kept.size == size:
            shards.append(kept)
            continue
        rows = pq.ParquetFile(root / file).metadata.num_rows
        shard = Shard(file=file, size=size, base=next_base, rows=rows)
        next_base += rows
        shards.append(shard)
    return shards


def run_apart(request: dict) -> dict:
    """One of the last stages (`retrieval.index_finish`: the merge, or the search table) in a fresh
    interpreter, the request on stdin: its answer, or its error as one line. Apart, the build's
    peak memory is the largest of the stages' own: in this process they came on top of what the
    Beam job left (at 10M rows 1.15 GB resident under the search table's 1.8 GB: 4,017 MB), and
    together in one they would be the merge's mapped lists (1.9 GB peak) then the table's (1.9 GB)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))    # the modules of this process
    run = subprocess.run([sys.executable, "-m", "retrieval.index_finish"], input=json.dumps(request),
                         capture_output=True, text=True, env=env)
    if run.returncode:
        lines = run.stderr.strip().splitlines()
        raise ValueError(f"index: {lines[-1] if lines else f'exit status {run.returncode}'}")
    sys.stderr.write(run.stderr)
    return json.loads(run.stdout.strip().splitlines()[-1])


def finish(request: dict, rows: int) -> dict:
    """A last stage for a corpus of `rows` statements: apart (`run_apart`) from APART_FROM_ROWS,
    else here, where the fresh interpreter's start and imports cost more than the stage (at 100k
    rows, 0.5 of 2.6 s of CPU for the merge and the table) and the memory it bounds is small."""
    if rows >= APART_FROM_ROWS:
        return run_apart(request)
    import duckdb

    from retrieval import index_finish

    try:       # one DuckDB thread: at 100k rows two took 2.1 s of CPU for the table, one 1.1-1.5 s
        return index_finish.answer({**request, "threads": 1})
    except (duckdb.Error, RuntimeError) as exc:     # as `run_apart` words them: one line
        lines = str(exc).strip().splitlines()
        raise ValueError(f"index: {type(exc).__name__}: {lines[0] if lines else ''}") from None


def _children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def build_index(root: pathlib.Path, representation: str, options: Union["PipelineOptions", Sequence[str]],
                in_process: bool = False) -> dict:
    """Build or extend the index of `representation` under `root/index/`; a summary of the run.
    `options`: the Beam job's, or its flags. `in_process`: they only choose the `local` preset's
    in-memory runner (`thmforge index DIR`; the caller compares them with the preset), so a corpus
    under APART_FROM_ROWS is indexed without Beam, in this process (at 100k rows Beam's import and
    start were 1.5-2 of 9 s of CPU)."""
    started, cpu_started, children_started = time.monotonic(), time.process_time(), _children_cpu_s()
    info = embedding_info(read_manifest(root))
    column = REPRESENTATIONS[representation]
    directory = vector_index.index_dir(root, representation)
    directory.mkdir(parents=True, exist_ok=True)
    shards = plan_shards(root)
    manifest = vector_index.read_json(directory / vector_index.MANIFEST) or {}
    encoded = ({int(b): n for b, n in manifest.get("encoded", {}).items()}
               if manifest.get("shard_format") == vector_index.SHARD_FORMAT else {})
    planned, planned_rows = {s.base for s in shards}, sum(s.rows for s in shards)
    to_encode = [s for s in shards if s.base not in encoded]
    summary = {"representation": representation, "shards": len(shards), "shards_encoded": len(to_encode)}
    if info is not None and to_encode:
        quantizer_path = directory / vector_index.QUANTIZER
        quantizer = quantizer_path.read_bytes() if quantizer_path.is_file() else None
        lists = vector_index.list_count(planned_rows)
        fraction = min(1.0, vector_index.train_sample_rows(lists) / max(1, planned_rows))
        if in_process and planned_rows < APART_FROM_ROWS:
            index_steps.encode_here(root, directory, column, info.dim, shards, to_encode, quantizer, fraction, lists)
        else:
            from retrieval.index_beam import run_job

            run_job(options, root, directory, column, info.dim, shards, to_encode, quantizer, fraction, lists)
        shutil.rmtree(directory / index_steps.SAMPLE_DIR, ignore_errors=True)
        stored_rows = (directory / vector_index.STORED).stat().st_size // (4 * info.dim)
        for shard in to_encode:
            folder = directory / vector_index.SHARDS / str(shard.base)
            if not (folder / vector_index.SHARD_LISTS).is_file() or stored_rows < shard.base + shard.rows:
                raise RuntimeError(f"index shard {folder} was not written")
            encoded[shard.base] = shard.rows
    encoded = {b: n for b, n in encoded.items() if b in planned}
    encode_s, encode_cpu_s = time.monotonic() - started, time.process_time() - cpu_started
    name, merge_s = None, 0.0
    if info is not None and encoded:
        name = f"merged-{int(manifest.get('generation', 0)) + 1}"
        merge_s = finish({"merge": {"directory": str(directory), "bases": sorted(encoded), "name": name}},
                         planned_rows)["merge_s"]
    rows = finish({"root": str(root), "shards": [vars(s) for s in shards],
                   "dim": info.dim if info else theorems_table().schema.field("embedding").type.list_size},
                  planned_rows)["rows"]
    vector_index.write_json(root / vector_index.INDEX_DIR / vector_index.PLAN,
                            {"shards": [vars(s) for s in shards]})
    if name is not None:
        old = manifest.get("merged")
        vector_index.write_json(directory / vector_index.MANIFEST, {
            "dim": info.dim, "model": info.model, "merged": name, "generation": int(name.split("-")[1]),
            "shard_format": vector_index.SHARD_FORMAT,
            "encoded": {str(b): n for b, n in sorted(encoded.items())}})
        for suffix in (".index", ".ivfdata"):
            if old and old != name:
                (directory / f"{old}{suffix}").unlink(missing_ok=True)
    for folder in (directory / vector_index.SHARDS).glob("*"):
        if folder.name.isdigit() and int(folder.name) not in planned:
            shutil.rmtree(folder)
    summary.update(rows=rows, encode_s=round(encode_s, 3), encode_cpu_s=round(encode_cpu_s, 3), merge_s=merge_s, total_s=round(time.monotonic() - started, 3),
                   total_cpu_s=round(time.process_time() - cpu_started + _children_cpu_s() - children_started, 3))
    return summary
