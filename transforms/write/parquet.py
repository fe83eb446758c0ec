"""Hive-partitioned Parquet written with pyarrow from a DoFn, through Beam's FileSystems (gs:// too).

Rows are grouped by the file they belong in: (table, partition directory, input group, shard).
The input group (the bundle or folder a row came from) is part of every file name, so a rerun of
an input replaces exactly its own files and a run over new inputs only adds files. Within a file
rows are sorted by a stable key, so the same input always gives the same bytes.
"""
from __future__ import annotations

import hashlib
import io
from typing import Any, Iterable, Mapping

import apache_beam as beam
import pyarrow.parquet as pq
from apache_beam.metrics import Metrics

from schemas.table import Table
from transforms.write.files import hive_dir, input_group, write_bytes

UNATTRIBUTED = "unattributed"
SORT_KEYS = {
    "papers": ("paper_id", "bundle", "member"),
    "theorems": ("paper_id", "ordinal", "theorem_id"),
    "failures": ("paper_id", "stage", "error_class", "location", "message", "theorem_id"),
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


def parquet_bytes(table: Table, rows: Iterable[Mapping[str, Any]]) -> bytes:
    """One Parquet file of the rows (partition columns left to the directory names), sorted.

    The Arrow schema is not stored in the file: pyarrow 25 cannot read back a fixed-size list
    column holding nulls (statements without an embedding) when it is; readers get a plain list
    and the DuckDB views cast it back to FLOAT[dim].
    """
    arrow = table.to_arrow(sorted_rows(table.name, rows))
    sink = io.BytesIO()
    pq.write_table(arrow, sink, compression="zstd", store_schema=False)
    return sink.getvalue()


class _WritePart(beam.DoFn):
    """(relative path, rows) -> the file under the staging root; yields (relative path, row count)."""

    def __init__(self, table: Table, staging: str):
        self.table = table
        self.staging = staging.rstrip("/")
        self.files = Metrics.counter("thmforge.write", f"{table.name}_files")
        self.rows = Metrics.counter("thmforge.write", f"{table.name}_rows")

    def process(self, element):
        relative, rows = element
        rows = list(rows)
        write_bytes(f"{self.staging}/{relative}", parquet_bytes(self.table, rows))
        self.files.inc()
        self.rows.inc(len(rows))
        yield relative, len(rows)


class WriteTable(beam.PTransform):
    """Rows of one table -> Parquet files under `staging/<table>/...`; outputs (path, rows) per file.

    Keys other stages add for their own use (transient context) are not columns and are dropped.
    """

    def __init__(self, table: Table, staging: str, shards: int = 1):
        super().__init__()
        self.table = table
        self.staging = staging
        self.shards = shards

    def expand(self, rows):
        table, shards = self.table, self.shards
        columns = table.columns
        return (rows
                | "ByFile" >> beam.Map(lambda row: (relative_file_path(table, row, shards),
                                                    {c: row.get(c) for c in columns}))
                | "GroupByFile" >> beam.GroupByKey()
                | "Write" >> beam.ParDo(_WritePart(table, self.staging)))
