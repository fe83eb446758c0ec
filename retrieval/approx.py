"""Approximate vector search: an HNSW index from DuckDB's `vss` extension, behind `--approximate N`.

The index lives in memory, built on first use from the same unit vectors as exact search. A query
takes the N nearest rows from the index (vss searches the graph with a candidate list of
max(hnsw_ef_search, N): measured, raising the setting to N changes no result), then applies the
filters and keeps the top k: with a filter that
few rows pass, fewer than k may survive, which is the price of a shortlist. Building is slow
(hundreds of seconds per 100k vectors on 2 cores, see `benchmarks/search_latency.py`), so it pays
off for a long-running `serve` over a large corpus, not for one-off queries. Its recall against
exact search is printed by that benchmark (synthetic vectors) and by `benchmarks/retrieval_eval.py
--approximate` (the evaluation corpus).
"""
from __future__ import annotations

from typing import Sequence

import duckdb
import numpy as np

from retrieval import extensions, vectors

M = 16                  # graph degree (vss default)
EF_CONSTRUCTION = 128   # build-time candidate list (vss default)


def build_index(con: duckdb.DuckDBPyConnection, table: str, docs: np.ndarray, matrix: np.ndarray) -> None:
    """Create `table(doc, v FLOAT[dim])` from unit vectors and an HNSW index on `v` (cosine)."""
    extensions.load(con, "vss")
    vectors.create_array_table(con, table, docs, matrix)
    con.execute(f"CREATE INDEX {table}_hnsw ON {table} USING HNSW (v) "
                f"WITH (metric = 'cosine', M = {M}, ef_construction = {EF_CONSTRUCTION})")


def shortlist_sql(table: str, dim: int, size: int) -> str:
    """(doc, cosine) of the `size` nearest rows by the index, for the query bound as one `?`.

    DuckDB answers this from the index only in this shape: ORDER BY the distance of the column to
    one constant, with a LIMIT; the same vector bound twice reads as two constants and scans."""
    return (f"SELECT doc, 1 - distance AS score FROM (SELECT doc, array_cosine_distance(v, ?::FLOAT[{dim}]) "
            f"AS distance FROM {table} ORDER BY distance LIMIT {int(size)})")


def recall_at_k(approx: Sequence[Sequence[int]], exact: Sequence[Sequence[int]], k: int) -> float:
    """Mean fraction of the exact top k found in the approximate top k."""
    if not exact:
        return 1.0
    found = [len(set(a[:k]) & set(e[:k])) / max(1, len(e[:k])) for a, e in zip(approx, exact)]
    return sum(found) / len(found)
