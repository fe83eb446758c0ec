"""Approximate vector search: a sign-bit (binary-quantized) shortlist, reranked by exact cosine.

DuckDB's `vss` extension (HNSW) is not bundled with the 2.0.1 wheels and `INSTALL vss` needs the
network, so the approximate index here is the one the seed system deploys in pgvector: every
vector is reduced to its sign bits (dim/64 UBIGINT words), a query scans those words by Hamming
distance (`bit_count(xor(...))`, a few integer operations per row instead of dim float products),
and the `shortlist` nearest by Hamming are re-scored exactly. Recall against exact search is
measured by `recall_at_k` and reported by the benchmarks.
"""
from __future__ import annotations

from typing import Sequence

import duckdb
import numpy as np
import pyarrow as pa

BITS = 64


def sign_words(vectors: np.ndarray) -> np.ndarray:
    """(n, dim) float vectors to (n, ceil(dim/64)) uint64 words of their sign bits."""
    vectors = np.atleast_2d(vectors)
    n, dim = vectors.shape
    words = -(-dim // BITS)
    bits = np.zeros((n, words * BITS), dtype=bool)
    bits[:, :dim] = vectors > 0
    packed = np.packbits(bits, axis=1, bitorder="little")           # (n, words * 8) bytes
    return packed.view("<u8").reshape(n, words)


def build_sign_index(con: duckdb.DuckDBPyConnection, source: str, column: str, table: str = "approx_bits",
                     chunk: int = 100_000) -> int:
    """Create `table(doc, w0..)` from `source(doc, column)`; returns the number of words per vector."""
    rows = con.sql(f"SELECT doc, {column} FROM {source} WHERE {column} IS NOT NULL ORDER BY doc").to_arrow_table()
    docs = rows.column("doc").to_numpy()
    values = rows.column(column).combine_chunks()
    dim = values.type.list_size if pa.types.is_fixed_size_list(values.type) else len(values[0]) if len(values) else 1
    matrix = np.asarray(values.flatten().to_numpy(zero_copy_only=False), dtype=np.float32).reshape(len(docs), dim)
    words = sign_words(matrix) if len(docs) else np.zeros((0, -(-dim // BITS)), dtype=np.uint64)
    n_words = words.shape[1]
    con.execute(f"CREATE OR REPLACE TEMP TABLE {table} (doc INTEGER, "
                + ", ".join(f"w{i} UBIGINT" for i in range(n_words)) + ")")
    for start in range(0, len(docs), chunk):
        batch = pa.table({"doc": pa.array(docs[start:start + chunk], pa.int32()),
                          **{f"w{i}": pa.array(words[start:start + chunk, i]) for i in range(n_words)}})
        con.execute(f"INSERT INTO {table} SELECT * FROM batch")
    return n_words


def hamming_sql(n_words: int, table: str = "approx_bits") -> str:
    """(doc, distance) of every indexed row to the query's words bound as `?` parameters, one per word."""
    distance = " + ".join(f"bit_count(xor(w{i}, ?::UBIGINT))" for i in range(n_words))
    return f"SELECT doc, {distance} AS distance FROM {table}"


def recall_at_k(approx: Sequence[Sequence[int]], exact: Sequence[Sequence[int]], k: int) -> float:
    """Mean fraction of the exact top k found in the approximate top k."""
    if not exact:
        return 1.0
    found = [len(set(a[:k]) & set(e[:k])) / max(1, len(e[:k])) for a, e in zip(approx, exact)]
    return sum(found) / len(found)
