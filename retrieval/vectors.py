"""Exact cosine search in DuckDB over unit vectors held as Arrow and split into short arrays.

Why this shape: DuckDB computes `array_inner_product` one row at a time with a single running sum,
so a 384-float product is bound by the latency of that chain, not by memory. Split into arrays of
32 floats, the partial products are independent chains that the CPU overlaps, and the sum of them
is the same inner product. The vectors are normalized once, so the inner product is the cosine,
and they are registered as an Arrow table (DuckDB scans it in place, no copy into its own
storage) cut into many record batches, so that every thread gets an even share of the scan. `benchmarks/search_latency.py` measures
this against one FLOAT[384] column and against NumPy's matrix-vector product.
"""
from __future__ import annotations

import dataclasses

import duckdb
import numpy as np
import pyarrow as pa

PART_WIDTH = 32
BATCH_ROWS = 65_536         # record batches: even shares for the threads, each large enough to amortize its setup


def normalized(matrix: np.ndarray, *, in_place: bool = False) -> np.ndarray:
    """Rows scaled to unit length (float32); all-zero rows stay zero. `in_place` reuses a writable
    float32 `matrix`, so that a million-row corpus is not held twice."""
    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.sqrt(np.einsum("ij,ij->i", matrix, matrix))[:, None]     # no (n, dim) temporary
    norms[norms == 0] = 1
    if in_place:
        matrix /= norms
        return matrix
    return matrix / norms


def unit(vector) -> np.ndarray:
    """One query vector scaled to unit length."""
    return normalized(np.asarray(vector, dtype=np.float32).reshape(1, -1))[0]


def create_array_table(con: duckdb.DuckDBPyConnection, table: str, docs: np.ndarray, matrix: np.ndarray,
                       chunk: int = 100_000) -> None:
    """A DuckDB temp table `table(doc INTEGER, v FLOAT[dim])` holding `matrix` row by row."""
    dim = int(matrix.shape[1])
    con.execute(f"CREATE OR REPLACE TEMP TABLE {table} (doc INTEGER, v FLOAT[{dim}])")
    for start in range(0, len(docs), chunk):
        block = np.ascontiguousarray(matrix[start:start + chunk], dtype=np.float32)
        batch = pa.table({"doc": pa.array(np.asarray(docs[start:start + chunk], dtype=np.int32)),
                          "v": pa.FixedSizeListArray.from_arrays(pa.array(block.reshape(-1)), dim)})
        con.execute(f"INSERT INTO {table} SELECT * FROM batch")


@dataclasses.dataclass(frozen=True)
class VectorTable:
    """A registered Arrow table `name(doc, p0, p1, ...)`; `widths` are the parts' lengths."""

    name: str
    widths: tuple[int, ...]
    rows: int
    table: pa.Table = dataclasses.field(repr=False, compare=False)

    @property
    def dim(self) -> int:
        return sum(self.widths)

    def score_sql(self, alias: str = "v") -> str:
        """Cosine of each row with the query bound as one `?` parameter per part."""
        return " + ".join(f"array_inner_product({alias}.p{i}, ?::FLOAT[{w}])" for i, w in enumerate(self.widths))

    def topk_sql(self, k: int, restrict: str = "true") -> str:
        """(doc, cosine) of the k rows nearest the query (parameters: `query_params`, then any of
        `restrict`, a condition on alias `v`), best first, ties by doc."""
        return (f"SELECT v.doc, {self.score_sql()} AS score FROM {self.name} v WHERE {restrict} "
                f"ORDER BY score DESC, v.doc LIMIT {int(k)}")

    def query_params(self, vector) -> list[list[float]]:
        """The normalized query cut into the parts `score_sql` binds."""
        query = unit(vector)
        if query.shape[0] != self.dim:
            raise ValueError(f"query has {query.shape[0]} dimensions, the stored vectors {self.dim}")
        bounds = np.cumsum((0,) + self.widths)
        return [query[a:b].tolist() for a, b in zip(bounds[:-1], bounds[1:])]


def part_widths(dim: int, width: int = PART_WIDTH) -> tuple[int, ...]:
    return tuple(min(width, dim - start) for start in range(0, dim, width))


def arrow_parts(docs: np.ndarray, matrix: np.ndarray, widths: tuple[int, ...],
                batch_rows: int = BATCH_ROWS) -> pa.Table:
    """(doc, p0, p1, ...) with each part a FixedSizeList of its width, in record batches of `batch_rows`."""
    bounds = np.cumsum((0,) + widths)
    batches = []
    for start in range(0, len(docs), batch_rows):
        block = matrix[start:start + batch_rows]
        columns = {"doc": pa.array(np.asarray(docs[start:start + batch_rows], dtype=np.int32))}
        for i, (a, b) in enumerate(zip(bounds[:-1], bounds[1:])):
            columns[f"p{i}"] = pa.FixedSizeListArray.from_arrays(pa.array(np.ascontiguousarray(block[:, a:b]).reshape(-1)),
                                                                 int(b - a))
        batches.append(pa.record_batch(columns))
    if not batches:
        schema = pa.schema([("doc", pa.int32())] + [(f"p{i}", pa.list_(pa.float32(), w)) for i, w in enumerate(widths)])
        return schema.empty_table()
    return pa.Table.from_batches(batches)


def register(con: duckdb.DuckDBPyConnection, name: str, docs: np.ndarray, matrix: np.ndarray) -> VectorTable:
    """Register `matrix` (unit vectors, one row per doc: see `normalized`) as `name` on `con`."""
    widths = part_widths(matrix.shape[1])
    table = arrow_parts(docs, matrix, widths)
    con.register(name, table)
    return VectorTable(name=name, widths=widths, rows=len(docs), table=table)


def fetch_matrix(con: duckdb.DuckDBPyConnection, sql: str, params=None) -> tuple[np.ndarray, np.ndarray]:
    """(docs, matrix) from a query returning (doc, array or list of floats) with no NULL vectors;
    the matrix is a writable copy, made chunk by chunk from DuckDB's Arrow result."""
    rows = con.execute(sql, params or []).to_arrow_table()
    docs = rows.column(0).to_numpy()
    values = rows.column(1)
    if not len(docs):
        dim = values.type.list_size if pa.types.is_fixed_size_list(values.type) else 0
        return docs, np.zeros((0, dim), dtype=np.float32)
    flat = np.concatenate([np.asarray(chunk.flatten().to_numpy(zero_copy_only=False), dtype=np.float32)
                           for chunk in values.chunks if len(chunk)])
    return docs, flat.reshape(len(docs), -1)
