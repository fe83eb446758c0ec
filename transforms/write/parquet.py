"""Hive-partitioned Parquet written with pyarrow from a DoFn, through Beam's FileSystems (gs:// too).

Rows are grouped by the file they belong in: (table, partition directory, input group, shard).
The input group (the bundle or folder a row came from) is part of every file name, so a rerun of
an input replaces exactly its own files and a run over new inputs only adds files. Within a file
rows are sorted by a stable key, so the same input always gives the same bytes.

Rows are not grouped themselves: each is spilled to a piece file under the staging directory as
it comes, only its address travels to the step that writes its file, and that step reads the
rows back one paper at a time. Memory is bounded per paper, whatever the size of an input or of
the run (an in-process runner would otherwise hold every row of the run at the GroupByKey).
"""
from __future__ import annotations

import hashlib
import io
import pickle
import shutil
import tempfile
import uuid
from typing import Any, Iterable, Iterator, Mapping, Optional

import apache_beam as beam
import pyarrow as pa
import pyarrow.parquet as pq
from apache_beam.io.filesystem import CompressionTypes
from apache_beam.io.filesystems import FileSystems
from apache_beam.metrics import Metrics
from apache_beam.transforms.window import GlobalWindow
from apache_beam.utils.timestamp import MIN_TIMESTAMP
from apache_beam.utils.windowed_value import WindowedValue

from schemas.table import Table
from transforms.write.files import delete_tree, exists, hive_dir, input_group

UNATTRIBUTED = "unattributed"
SPILL = "_spill"            # under the staging root: rows on their way to their file
SPILL_ROWS = 1000           # rows a writer step holds before it spills them
ROW_GROUP_BYTES = 32 << 20  # Arrow bytes of one Parquet row group
ROW_GROUP_TABLES = 1024     # tables (papers not merged) one row group holds at most: some 25 KB of objects each
MERGE_PAPERS = 32           # waiting papers' tables merged into one while a row group is small
MERGE_BYTES = 256 << 10     # ... below a quarter of pyarrow's 1 MiB data page and dictionary limits
MERGE_ROWS = 10_000         # ... and half its 20,000 rows per page
COPY_CHUNK = 8 << 20
SORT_KEYS = {               # each starts with paper_id: a file is written one paper at a time
    "papers": ("paper_id", "bundle", "member"),
    "theorems": ("paper_id", "ordinal", "theorem_id"),
    "failures": ("paper_id", "stage", "error_class", "location", "message", "theorem_id"),
    "edges": ("paper_id", "src_theorem_id", "relation", "method", "location", "dst_theorem_id", "dst_label",
              "cite_key", "dst_doi", "dst_paper_id", "count", "evidence"),
}


def partition_dir(table: Table, row: Mapping[str, Any]) -> str:
    """`source=arxiv/year=2021` for a row of a partitioned table ('' when unpartitioned)."""
    return hive_dir(table.partition_by, row)


def row_group(row: Mapping[str, Any]) -> str:
    bundle = row.get("bundle")
    return input_group(bundle) if bundle else UNATTRIBUTED


def shard_of(key: str, shards: int) -> int:
    if shards <= 1:
        return 0
    return int.from_bytes(hashlib.sha1(key.encode("utf-8")).digest()[:8], "big") % shards


def part_file_name(group: str, shard: int) -> str:
    return f"part-{group}-{shard:05d}.parquet"


def relative_file_path(table: Table, row: Mapping[str, Any], shards: int) -> str:
    """`theorems/source=arxiv/year=2021/part-arXiv_src_2101_001-00000.parquet`."""
    directory = "/".join(p for p in (table.name, partition_dir(table, row)) if p)
    return f"{directory}/{part_file_name(row_group(row), shard_of(str(row.get('paper_id')), shards))}"


def _sort_key(table_name: str, row: Mapping[str, Any]) -> tuple:
    return tuple((row.get(c) is None, row.get(c) if row.get(c) is not None else "")
                 for c in SORT_KEYS.get(table_name, ()))


def sorted_rows(table_name: str, rows: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return sorted(rows, key=lambda r: _sort_key(table_name, r))


def paper_order(paper_id: Optional[str]) -> tuple:
    """A file's papers in the order of the sort keys' first column (rows of no paper last)."""
    return (paper_id is None, paper_id or "")


def write_parquet(table: Table, papers: Iterable[list[Mapping[str, Any]]], sink) -> int:
    """One Parquet file of the rows, given one paper's rows at a time in `paper_order`, written
    to the binary file `sink`; returns the rows written.

    Rows are sorted within each paper, so the file is sorted (every sort key starts with
    `paper_id`). Memory holds one paper's rows and one row group: papers are converted as they
    come and a row group is written once `ROW_GROUP_BYTES` of them, or `ROW_GROUP_TABLES` tables,
    are waiting, so a file's size never decides the writer's memory and the same rows always give
    the same bytes.

    Each paper's table is a chunk of the row group, and pyarrow cuts pages and falls back from
    dictionary encoding only at chunk ends, so the chunks decide the bytes. While the row group is
    below every such limit (`MERGE_BYTES`, `MERGE_ROWS`) no chunk end can matter, and the waiting
    tables are merged into one: a file of many small papers (the papers file: one row each) holds
    one table, not one per paper (an Arrow table's objects outweigh a one-row paper's bytes).

    The Arrow schema is not stored in the file: pyarrow 25 cannot read back a fixed-size list
    column holding nulls (statements without an embedding) when it is; readers get a plain list
    and the DuckDB views cast it back to FLOAT[dim].
    """
    written = waiting_bytes = waiting_rows = 0
    waiting: list[pa.Table] = []
    with pq.ParquetWriter(sink, table.file_schema, compression="zstd", store_schema=False) as writer:
        for rows in papers:
            waiting.append(table.to_arrow(sorted_rows(table.name, rows)))
            waiting_bytes += waiting[-1].nbytes      # running totals: a sum over `waiting` is quadratic
            waiting_rows += waiting[-1].num_rows
            if waiting_bytes >= ROW_GROUP_BYTES or len(waiting) >= ROW_GROUP_TABLES:
                written += _write_group(writer, waiting)
                waiting_bytes = waiting_rows = 0
            elif len(waiting) > MERGE_PAPERS and waiting_bytes < MERGE_BYTES and waiting_rows < MERGE_ROWS:
                waiting[:] = [pa.concat_tables(waiting).combine_chunks()]
        written += _write_group(writer, waiting)
    return written


def _write_group(writer: pq.ParquetWriter, waiting: list[pa.Table]) -> int:
    rows = sum(t.num_rows for t in waiting)
    if rows:
        writer.write_table(pa.concat_tables(waiting), row_group_size=rows)
    waiting.clear()
    return rows


def file_papers(path: str, batch_rows: int = SPILL_ROWS) -> Iterator[list[dict]]:
    """A Parquet file's rows one paper's list at a time in `paper_order`, read a batch at a time.

    Files this module writes are in that order; a file that is not (written before the sort keys
    began with `paper_id`) is grouped in memory instead. Nothing when `path` does not exist.
    """
    if not exists(path):
        return
    with FileSystems.open(path, compression_type=CompressionTypes.UNCOMPRESSED) as handle:
        parquet = pq.ParquetFile(handle)
        if not _in_paper_order(parquet, batch_rows):
            by_paper: dict[Optional[str], list[dict]] = {}
            for row in parquet.read().to_pylist():
                by_paper.setdefault(row["paper_id"], []).append(row)
            yield from (by_paper[p] for p in sorted(by_paper, key=paper_order))
            return
        rows: list[dict] = []
        for batch in parquet.iter_batches(batch_size=batch_rows):
            for row in batch.to_pylist():
                if rows and row["paper_id"] != rows[-1]["paper_id"]:
                    yield rows
                    rows = []
                rows.append(row)
        if rows:
            yield rows


def _in_paper_order(parquet: pq.ParquetFile, batch_rows: int) -> bool:
    last = None
    for batch in parquet.iter_batches(batch_size=batch_rows, columns=["paper_id"]):
        for paper_id in batch.column(0).to_pylist():
            key = paper_order(paper_id)
            if last is not None and key < last:
                return False
            last = key
    return True


def parquet_bytes(table: Table, rows: Iterable[Mapping[str, Any]]) -> bytes:
    """One Parquet file of the rows, sorted: the bytes `WriteTable` writes for them."""
    by_paper: dict[Optional[str], list[Mapping[str, Any]]] = {}
    for row in rows:
        by_paper.setdefault(row.get("paper_id"), []).append(row)
    sink = io.BytesIO()
    write_parquet(table, (by_paper[p] for p in sorted(by_paper, key=paper_order)), sink)
    return sink.getvalue()


class _SpillRows(beam.DoFn):
    """Rows -> (relative path, (paper id, piece, offset, length)): the rows themselves go to a
    spill piece (one file per bundle of work, pickled lists of one paper's rows for one file), so
    nothing downstream holds more than their address.

    At most `SPILL_ROWS` rows wait in memory; rows of one paper that arrive apart become several
    lists, which the writer joins again.
    """

    def __init__(self, table: Table, spill: str, shards: int):
        self.table = table
        self.spill = spill
        self.shards = shards

    def setup(self):
        self.columns = self.table.columns       # a new list on every read of the property

    def start_bundle(self):
        self.waiting: dict[tuple[str, Optional[str]], list[dict]] = {}
        self.count = 0
        self.piece = self.handle = None
        self.offset = 0

    def process(self, row):
        relative = relative_file_path(self.table, row, self.shards)
        self.waiting.setdefault((relative, row.get("paper_id")), []).append(
            {c: row.get(c) for c in self.columns})
        self.count += 1
        if self.count >= SPILL_ROWS:
            yield from self._spill()

    def finish_bundle(self):
        for entry in self._spill():
            yield WindowedValue(entry, MIN_TIMESTAMP, [GlobalWindow()])
        if self.handle is not None:
            self.handle.close()

    def _spill(self):
        if self.handle is None and self.waiting:
            self.piece = f"{self.spill}/{uuid.uuid4().hex}.pickle"
            self.handle = FileSystems.create(self.piece, compression_type=CompressionTypes.UNCOMPRESSED)
        for (relative, paper_id), rows in self.waiting.items():
            data = pickle.dumps(rows, protocol=pickle.HIGHEST_PROTOCOL)
            self.handle.write(data)
            yield relative, (paper_id, self.piece, self.offset, len(data))
            self.offset += len(data)
        self.waiting, self.count = {}, 0


def _spilled_papers(entries: Iterable[tuple[Optional[str], str, int, int]]) -> Iterator[list[dict]]:
    """One file's spill addresses -> its rows, one paper's list at a time in `paper_order`."""
    by_paper: dict[Optional[str], list[tuple[str, int, int]]] = {}
    for paper_id, piece, offset, length in entries:
        by_paper.setdefault(paper_id, []).append((piece, offset, length))
    handles: dict[str, Any] = {}
    try:
        for paper_id in sorted(by_paper, key=paper_order):
            rows: list[dict] = []
            for piece, offset, length in sorted(by_paper[paper_id]):
                if piece not in handles:
                    handles[piece] = FileSystems.open(piece, compression_type=CompressionTypes.UNCOMPRESSED)
                handles[piece].seek(offset)
                rows += pickle.loads(handles[piece].read(length))
            yield rows
    finally:
        for handle in handles.values():
            handle.close()


class _WritePart(beam.DoFn):
    """(relative path, spill addresses) -> the file under the staging root; yields (relative path,
    row count). The file is built in a local temporary file, then copied: the rows never are all
    in memory at once."""

    def __init__(self, table: Table, staging: str):
        self.table = table
        self.staging = staging.rstrip("/")
        self.files = Metrics.counter("thmforge.write", f"{table.name}_files")
        self.rows = Metrics.counter("thmforge.write", f"{table.name}_rows")

    def process(self, element):
        relative, entries = element
        with tempfile.TemporaryFile() as local:
            rows = write_parquet(self.table, _spilled_papers(entries), local)
            local.seek(0)
            with FileSystems.create(f"{self.staging}/{relative}", compression_type=CompressionTypes.UNCOMPRESSED) as out:
                shutil.copyfileobj(local, out, COPY_CHUNK)
        pa.default_memory_pool().release_unused()   # the row groups' memory, back to the system for later steps
        self.files.inc()
        self.rows.inc(rows)
        yield relative, rows


def _drop_spill(spill: str, written) -> None:
    """Runs once every file is written (`written` is a side input): the pieces are no longer needed."""
    delete_tree(spill)


class WriteTable(beam.PTransform):
    """Rows of one table -> Parquet files under `staging/<table>/...`; outputs (path, rows) per file.

    Rows are spilled to `staging/_spill/` as they come and only their addresses are grouped by
    file, so no step holds a table (or an input's share of it): memory is bounded by one paper's
    rows, however large the input. Keys other stages add for their own use (transient context) are
    not columns and are dropped.

    The rows may come as a tuple of PCollections: each is spilled in the step that makes it and only
    the addresses are flattened. A Flatten of the rows themselves would not be: a runner that does
    not fuse it with every producer (the FnApiRunner) buffers the flattened rows whole, in memory,
    until the writer's step runs.
    """

    def __init__(self, table: Table, staging: str, shards: int = 1):
        super().__init__()
        self.table = table
        self.staging = staging
        self.shards = shards
        self.spill = f"{staging.rstrip('/')}/{SPILL}/{table.name}-{uuid.uuid4().hex[:12]}"

    def expand(self, rows):
        spill = _SpillRows(self.table, self.spill, self.shards)
        if isinstance(rows, tuple):
            addresses = (tuple(part | f"Spill{n}" >> beam.ParDo(spill) for n, part in enumerate(rows))
                         | "Addresses" >> beam.Flatten())
        else:
            addresses = rows | "Spill" >> beam.ParDo(spill)
        written = (addresses
                   | "GroupByFile" >> beam.GroupByKey()
                   | "Write" >> beam.ParDo(_WritePart(self.table, self.staging)))
        _ = (addresses.pipeline
             | "SpillDir" >> beam.Create([self.spill])
             | "DropSpill" >> beam.Map(_drop_spill, written=beam.pvalue.AsList(written)))
        return written
