"""The index job: a corpus's theorem files -> `DIR/index/` (vector index shards, search database).

Plan (driver): every theorems Parquet file is a shard with a fixed first doc id; files already
indexed with the same size keep their shard, new or changed files get new ones. Beam job: when
the representation has no quantizer yet, sample vectors from every file and train the IVF-PQ
quantizer (one worker); then encode the new shards in parallel, each writing its PQ codes and its
rows of the stored vectors file. Driver: merge the shards' inverted lists into one memory-mapped file, rebuild the
search table with its BM25 index, and replace the records. An incremental `build-corpus` run thus
encodes only its new files; the merge and the search table are rewritten (I/O, no encoding).
"""
from __future__ import annotations

import pathlib
import shutil
import time
from typing import Optional

import apache_beam as beam
import duckdb
import numpy as np
from apache_beam.options.pipeline_options import PipelineOptions

from retrieval import lexical, vector_index
from retrieval.catalog import create_views, embedding_info, read_manifest
from retrieval.search import REPRESENTATIONS, materialize
from retrieval.vector_index import Shard
from schemas import THEOREMS, theorems_table
from schemas.table import duckdb_type

TRAIN_SAMPLE_SEED = 20260
# DuckDB's buffer pool while writing the search table (its default, 80% of RAM, let the sorted
# join grow with the corpus: 850 MB at 1M rows); past it the sort spills to the database's temp dir
SEARCH_DB_MEMORY = "1GB"
_ENCODED = beam.metrics.Metrics.counter("index", "vectors_encoded")


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


def _write_bytes(path: pathlib.Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_bytes(data)
    temporary.replace(path)


def _concatenate(blocks) -> np.ndarray:
    blocks = [b for b in blocks if len(b)]
    return np.concatenate(blocks) if blocks else np.zeros((0, 0), dtype=np.float32)


class EncodeShard(beam.DoFn):
    """Encode one theorem file with the trained quantizer; write its codes and its stored rows."""

    def __init__(self, root: str, directory: str, column: str):
        self.root, self.directory, self.column = root, directory, column

    def process(self, shard: Shard, quantizer: bytes):
        codes, stored, encoded = vector_index.encode_shard(quantizer, str(pathlib.Path(self.root) / shard.file),
                                                           self.column, shard.base)
        folder = pathlib.Path(self.directory) / vector_index.SHARDS / str(shard.base)
        vector_index.write_stored_rows(pathlib.Path(self.directory) / vector_index.STORED, shard.base, stored)
        (folder / "vectors.npy").unlink(missing_ok=True)     # a shard of format 2 kept its own
        _write_bytes(folder / vector_index.SHARD_LISTS, codes)
        _ENCODED.inc(encoded)
        yield shard.base, encoded


class BuildVectorShards(beam.PTransform):
    """Shards to encode -> (base, vectors encoded); trains the quantizer first when `quantizer` is None."""

    def __init__(self, root: pathlib.Path, directory: pathlib.Path, column: str, all_shards: list[Shard],
                 new_shards: list[Shard], quantizer: Optional[bytes], sample_fraction: float, lists: int):
        self.root, self.directory, self.column = root, directory, column
        self.all_shards, self.new_shards = all_shards, new_shards
        self.quantizer, self.sample_fraction, self.lists = quantizer, sample_fraction, lists

    def expand(self, pbegin):
        if self.quantizer is None:
            quantizer = (pbegin
                         | "AllFiles" >> beam.Create([(str(self.root / s.file), s.base) for s in self.all_shards])
                         | "Sample" >> beam.MapTuple(lambda path, base: vector_index.sample_rows(
                             path, self.column, self.sample_fraction, TRAIN_SAMPLE_SEED + base))
                         | "Gather" >> beam.combiners.ToList()
                         | "Train" >> beam.Map(lambda blocks: vector_index.train_quantizer(_concatenate(blocks),
                                                                                            self.lists))
                         | "KeepQuantizer" >> beam.Map(self._keep))
        else:
            quantizer = pbegin | "Quantizer" >> beam.Create([self.quantizer])
        return (pbegin
                | "NewShards" >> beam.Create(self.new_shards)
                | "Encode" >> beam.ParDo(EncodeShard(str(self.root), str(self.directory), self.column),
                                         quantizer=beam.pvalue.AsSingleton(quantizer)))

    def _keep(self, quantizer: bytes) -> bytes:
        _write_bytes(self.directory / vector_index.QUANTIZER, quantizer)
        return quantizer


def _theorems_with_doc_ids(con: duckdb.DuckDBPyConnection, root: pathlib.Path, shards: list[Shard], dim: int) -> None:
    """View `located_theorems`: the theorems of the planned files, `doc` = shard base + row in file."""
    import pyarrow as pa

    con.register("shard_bases", pa.table({"filename": [str(root / s.file) for s in shards],
                                          "base": pa.array([s.base for s in shards], pa.int64())}))
    table = theorems_table(dim)
    types = ", ".join(f"'{c}': '{duckdb_type(table.schema.field(c).type)}'" for c in THEOREMS.partition_by)
    files = ", ".join("'" + str(root / s.file).replace("'", "''") + "'" for s in shards)
    con.execute(f"""CREATE OR REPLACE TEMP VIEW located_theorems AS
        SELECT t.*, (b.base + t.file_row_number)::BIGINT AS doc
        FROM read_parquet([{files}], hive_partitioning = true, hive_types = {{{types}}}, union_by_name = true,
                          filename = true, file_row_number = true) t JOIN shard_bases b USING (filename)""")


def build_search_db(root: pathlib.Path, shards: list[Shard], dim: int) -> int:
    """Write `DIR/index/search.duckdb`: the search table with the planned doc ids, an index on doc
    and its BM25 index, built into a new file that then replaces the old one. Its row count."""
    target = root / vector_index.INDEX_DIR / vector_index.SEARCH_DB
    temporary = target.with_name(target.name + ".tmp")
    temporary.unlink(missing_ok=True)
    con = duckdb.connect(str(temporary), config={"memory_limit": SEARCH_DB_MEMORY})
    try:
        create_views(con, root, dim, read_manifest(root))
        if shards:
            _theorems_with_doc_ids(con, root, shards, dim)
            rows = materialize(con, theorems="located_theorems", doc="t.doc", persistent=True)
        else:
            rows = materialize(con, persistent=True)
        # an ART on doc: a query's hits are read by doc id, ten lookups instead of a table scan
        con.execute("CREATE UNIQUE INDEX search_corpus_doc ON search_corpus (doc)")
        lexical.build_index(con)
        con.execute("CHECKPOINT")
    finally:
        con.close()
    temporary.replace(target)
    return rows


def build_index(root: pathlib.Path, representation: str, options: PipelineOptions) -> dict:
    """Build or extend the index of `representation` under `root/index/`; a summary of the run."""
    started, cpu_started = time.monotonic(), time.process_time()
    info = embedding_info(read_manifest(root))
    column = REPRESENTATIONS[representation]
    directory = vector_index.index_dir(root, representation)
    directory.mkdir(parents=True, exist_ok=True)
    shards = plan_shards(root)
    manifest = vector_index.read_json(directory / vector_index.MANIFEST) or {}
    encoded = ({int(b): n for b, n in manifest.get("encoded", {}).items()}
               if manifest.get("shard_format") == vector_index.SHARD_FORMAT else {})
    planned = {s.base for s in shards}
    to_encode = [s for s in shards if s.base not in encoded]
    summary = {"representation": representation, "shards": len(shards), "shards_encoded": len(to_encode)}
    if info is not None and to_encode:
        quantizer_path = directory / vector_index.QUANTIZER
        quantizer = quantizer_path.read_bytes() if quantizer_path.is_file() else None
        total_rows = sum(s.rows for s in shards)
        lists = vector_index.list_count(total_rows)
        fraction = min(1.0, vector_index.train_sample_rows(lists) / max(1, total_rows))
        pipeline = beam.Pipeline(options=options)
        _ = pipeline | "BuildVectorShards" >> BuildVectorShards(root, directory, column, shards, to_encode,
                                                                 quantizer, fraction, lists)
        pipeline.run().wait_until_finish()
        stored_rows = (directory / vector_index.STORED).stat().st_size // (4 * info.dim)
        for shard in to_encode:
            folder = directory / vector_index.SHARDS / str(shard.base)
            if not (folder / vector_index.SHARD_LISTS).is_file() or stored_rows < shard.base + shard.rows:
                raise RuntimeError(f"index shard {folder} was not written")
            encoded[shard.base] = shard.rows
    encoded = {b: n for b, n in encoded.items() if b in planned}
    encode_s, encode_cpu_s = time.monotonic() - started, time.process_time() - cpu_started
    name = None
    if info is not None and encoded:
        name = f"merged-{int(manifest.get('generation', 0)) + 1}"
        vector_index.merge_shards(directory, sorted(encoded), name)
    merged_s = time.monotonic() - started
    rows = build_search_db(root, shards, info.dim if info else theorems_table().schema.field("embedding").type.list_size)
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
    summary.update(rows=rows, encode_s=round(encode_s, 3), encode_cpu_s=round(encode_cpu_s, 3),
                   merge_s=round(merged_s - encode_s, 3), total_s=round(time.monotonic() - started, 3),
                   total_cpu_s=round(time.process_time() - cpu_started, 3))
    return summary
