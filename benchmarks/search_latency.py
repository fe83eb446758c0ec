"""Vector search latency in DuckDB next to NumPy's matrix-vector product (the memory-bandwidth limit).

  .venv/bin/python benchmarks/search_latency.py [--rows 1000000] [--dim 384] [--queries 100] [-k 10]


Synthetic unit vectors stand in for a corpus's embeddings; each query is one top-k scan. Exact
methods over all `--rows`, interleaved query by query so machine load hits them alike:
  - NumPy: `matrix @ q` plus an argpartition for the top k (the baseline);
  - DuckDB, one FLOAT[dim] column in a DuckDB table, `array_cosine_similarity` (the plain layout);
  - DuckDB as `thmforge search` runs it (`retrieval.vectors`: unit vectors in an Arrow table,
    split into FLOAT[32] parts whose inner products are summed). Target: within 3x of NumPy.
This is the exact path of a corpus without an index; the persisted index (`retrieval.vector_index`)
is measured at scale by `benchmarks/search_scale.py`.
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

from retrieval import vector_index, vectors  # noqa: E402

SEARCH = "duckdb, as search runs it"


def unit_vectors(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    return vectors.normalized(rng.standard_normal((n, dim), dtype=np.float32))


def percentile(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def interleaved(methods: dict, queries) -> dict[str, tuple[list[float], list]]:
    """Per method: latencies and results, the methods taking turns on each query."""
    out = {name: ([], []) for name in methods}
    for q in queries:
        for name, fn in methods.items():
            start = time.perf_counter()
            result = fn(q)
            out[name][0].append(time.perf_counter() - start)
            out[name][1].append(result)
    return out


def numpy_topk(matrix: np.ndarray, k: int):
    def run(q):
        scores = matrix @ q
        top = np.argpartition(-scores, k)[:k]
        return top[np.argsort(-scores[top], kind="stable")].tolist()
    return run


def report(title: str, methods: dict, queries, k: int, baseline: str) -> dict:
    for fn in methods.values():   # warm caches and plans
        fn(queries[0])
    measured = {name: (statistics.median(times), percentile(times, 0.95), results)
                for name, (times, results) in interleaved(methods, queries).items()}
    base_median, _, base_results = measured[baseline]
    print(f"\n{title}\n{'method':<42}{'median ms':>11}{'p95 ms':>9}{'x numpy':>9}{'recall@k':>10}")
    for name, (median, p95, results) in measured.items():
        recall = vector_index.recall_at_k(results, base_results, k)
        print(f"{name:<42}{median * 1e3:>11.1f}{p95 * 1e3:>9.1f}{median / base_median:>9.2f}{recall:>10.3f}")
    return measured


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("-k", type=int, default=10)
    parser.add_argument("--threads", type=int, default=0, help="DuckDB threads (0: DuckDB's default)")
    args = parser.parse_args()

    rng = np.random.default_rng(20260)
    t0 = time.perf_counter()
    matrix = unit_vectors(rng, args.rows, args.dim)
    queries = unit_vectors(rng, args.queries, args.dim)
    con = duckdb.connect(":memory:")
    if args.threads:
        con.execute(f"SET threads = {int(args.threads)}")
    vectors.create_array_table(con, "plain", np.arange(args.rows), matrix)
    table = vectors.register(con, "split", np.arange(args.rows), matrix)
    threads = con.execute("SELECT current_setting('threads')").fetchall()[0][0]
    print(f"{args.rows:,} rows x {args.dim}-d float32 ({matrix.nbytes / 2**30:.2f} GiB), {args.queries} queries, "
          f"k={args.k}, DuckDB {duckdb.__version__} threads={threads}; loaded in {time.perf_counter() - t0:.1f}s")

    def duckdb_plain(q):
        sql = (f"SELECT doc FROM plain ORDER BY array_cosine_similarity(v, ?::FLOAT[{args.dim}]) DESC, doc "
               f"LIMIT {args.k}")
        return [r[0] for r in con.execute(sql, [q.tolist()]).fetchall()]

    def duckdb_search(q):
        return [r[0] for r in con.execute(table.topk_sql(args.k), table.query_params(q)).fetchall()]

    exact = report("exact search over every row", {
        "numpy matrix @ q + argpartition": numpy_topk(matrix, args.k),
        "duckdb FLOAT[384] column, cosine": duckdb_plain,
        f"{SEARCH} ({len(table.widths)} x FLOAT[{vectors.PART_WIDTH}])": duckdb_search,
    }, queries, args.k, "numpy matrix @ q + argpartition")
    numpy_median = exact["numpy matrix @ q + argpartition"][0]
    search_median = next(m for name, (m, _, _) in exact.items() if name.startswith(SEARCH))
    ratio = search_median / numpy_median
    print(f"exact cosine search in DuckDB: {ratio:.2f}x NumPy's median (target <= 3x): {'PASS' if ratio <= 3 else 'FAIL'}")


if __name__ == "__main__":
    main()
