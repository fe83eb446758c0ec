"""Exact vector search latency in DuckDB next to NumPy's matrix-vector product (the memory-bandwidth limit).

  .venv/bin/python benchmarks/search_latency.py [--rows 1000000] [--dim 384] [--queries 100] [-k 10]

Synthetic unit vectors stand in for a corpus's embeddings. They are stored in a DuckDB table of
FLOAT[dim] (as `retrieval.search` materializes `search_corpus`), and each query is one
`ORDER BY similarity DESC LIMIT k` scan: with `array_cosine_similarity` (what search runs) and with
`array_inner_product` (equal on normalized vectors). The baseline is `matrix @ q` plus an
argpartition for the top k over the same float32 data. Prints median and p95 per method and the
ratio to NumPy (target: DuckDB within 3x), and recall@k against the exact top k; the last row is
the approximate sign-bit shortlist of `retrieval.approx` (synthetic Gaussian vectors are its
worst case: real embeddings cluster, so their sign bits preserve neighbourhoods far better).
"""
from __future__ import annotations

import argparse
import pathlib
import statistics
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

import duckdb  # noqa: E402
import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402

from retrieval import approx  # noqa: E402


def unit_vectors(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    x = rng.standard_normal((n, dim), dtype=np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    return x


def load_duckdb(matrix: np.ndarray, chunk: int = 100_000) -> duckdb.DuckDBPyConnection:
    n, dim = matrix.shape
    con = duckdb.connect(":memory:")
    con.execute(f"CREATE TABLE vectors (doc INTEGER, embedding FLOAT[{dim}])")
    for start in range(0, n, chunk):
        block = matrix[start:start + chunk]
        batch = pa.table({
            "doc": pa.array(np.arange(start, start + len(block), dtype=np.int32)),
            "embedding": pa.FixedSizeListArray.from_arrays(pa.array(block.reshape(-1)), dim),
        })
        con.execute("INSERT INTO vectors SELECT * FROM batch")
    return con


def percentile(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def interleaved(methods: dict, queries) -> dict[str, tuple[list[float], list]]:
    """Per method: latencies and results; methods alternate per query so that load on a shared
    machine affects them alike."""
    out = {name: ([], []) for name in methods}
    for q in queries:
        for name, fn in methods.items():
            start = time.perf_counter()
            result = fn(q)
            out[name][0].append(time.perf_counter() - start)
            out[name][1].append(result)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("-k", type=int, default=10)
    parser.add_argument("--threads", type=int, default=0, help="DuckDB threads (0: DuckDB's default)")
    parser.add_argument("--shortlist", type=int, default=1000, help="sign-bit shortlist of the approximate search")
    args = parser.parse_args()

    rng = np.random.default_rng(20260)
    t0 = time.perf_counter()
    matrix = unit_vectors(rng, args.rows, args.dim)
    queries = unit_vectors(rng, args.queries, args.dim)
    con = load_duckdb(matrix)
    if args.threads:
        con.execute(f"SET threads = {int(args.threads)}")
    threads = con.execute("SELECT current_setting('threads')").fetchall()[0][0]
    print(f"{args.rows:,} rows x {args.dim}-d float32 ({matrix.nbytes / 2**30:.2f} GiB), {args.queries} queries, "
          f"k={args.k}, DuckDB threads={threads}; loaded in {time.perf_counter() - t0:.1f}s")

    def numpy_topk(q):
        scores = matrix @ q
        top = np.argpartition(-scores, args.k)[: args.k]
        return top[np.argsort(-scores[top], kind="stable")].tolist()

    def duckdb_topk(function):
        sql = (f"SELECT doc FROM vectors ORDER BY {function}(embedding, ?::FLOAT[{args.dim}]) DESC LIMIT {args.k}")
        return lambda q: [r[0] for r in con.execute(sql, [q.tolist()]).fetchall()]

    n_words = approx.build_sign_index(con, "vectors", "embedding")

    def approximate_topk(q):
        words = [int(w) for w in approx.sign_words(q)[0]]
        sql = (f"WITH short AS (SELECT doc FROM ({approx.hamming_sql(n_words)}) ORDER BY distance, doc "
               f"LIMIT {args.shortlist}) SELECT v.doc FROM vectors v JOIN short ON short.doc = v.doc "
               f"ORDER BY array_cosine_similarity(v.embedding, ?::FLOAT[{args.dim}]) DESC LIMIT {args.k}")
        return [r[0] for r in con.execute(sql, words + [q.tolist()]).fetchall()]

    methods = {
        "numpy matrix @ q + argpartition": numpy_topk,
        "duckdb array_cosine_similarity": duckdb_topk("array_cosine_similarity"),
        "duckdb array_inner_product": duckdb_topk("array_inner_product"),
        f"duckdb sign-bit {args.shortlist} + exact": approximate_topk,
    }
    for fn in methods.values():   # warm caches and the plan
        fn(queries[0])
    measured = {name: (statistics.median(times), percentile(times, 0.95), results)
                for name, (times, results) in interleaved(methods, queries).items()}
    base_median, base_p95, base_results = measured["numpy matrix @ q + argpartition"]
    print(f"{'method':<34}{'median ms':>11}{'p95 ms':>9}{'x numpy':>9}{'recall@k':>10}")
    for name, (median, p95, results) in measured.items():
        recall = approx.recall_at_k(results, base_results, args.k)
        print(f"{name:<34}{median * 1e3:>11.1f}{p95 * 1e3:>9.1f}{median / base_median:>9.2f}{recall:>10.3f}")
    ratio = measured["duckdb array_cosine_similarity"][0] / base_median
    print(f"exact cosine search in DuckDB: {ratio:.2f}x NumPy's median (target <= 3x): {'PASS' if ratio <= 3 else 'FAIL'}")


if __name__ == "__main__":
    main()
