"""faiss IVF-PQ against usearch HNSW on embedding-like vectors: build rate, query latency, recall@10.

  .venv/bin/python benchmarks/vector_libraries.py [--rows 50000] [--queries 50] [--cache FILE]

Both shortlist 200 candidates that are re-scored exactly (as `retrieval.vector_index` does), so
recall@10 is against the exact top 10 of the same rows. usearch comes from the `bench` extra.
The figures recorded in docs/vector_index.md came from this script.
"""
from __future__ import annotations

import argparse
import pathlib
import statistics
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from benchmarks.synthetic_vectors import perturbed, real_embeddings  # noqa: E402
from retrieval import vector_index  # noqa: E402

SHORTLIST = 200


def rescored(matrix: np.ndarray, query: np.ndarray, candidates: np.ndarray, k: int) -> list[int]:
    candidates = candidates[candidates >= 0]
    scores = matrix[candidates] @ query
    return candidates[np.argsort(-scores, kind="stable")[:k]].tolist()


def measure(name: str, build, search, matrix, queries, exact, k=10) -> None:
    start = time.perf_counter()
    index = build(matrix)
    build_s = time.perf_counter() - start
    times, found = [], []
    for q in queries:
        start = time.perf_counter()
        found.append(rescored(matrix, q, search(index, q), k))
        times.append(time.perf_counter() - start)
    print(f"{name:<34}{len(matrix) / build_s:>12,.0f}{statistics.median(times) * 1e3:>10.2f}"
          f"{vector_index.recall_at_k(found, exact, k):>10.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=50_000)
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--cache", metavar="FILE", help="cache of the real embeddings (.npy)")
    args = parser.parse_args()
    import faiss
    import usearch.index

    base = real_embeddings(2500, pathlib.Path(args.cache) if args.cache else None)
    rng = np.random.default_rng(5)
    matrix = np.concatenate(list(perturbed(base, args.rows, rng)))
    queries = next(perturbed(base, args.queries, np.random.default_rng(6)))
    exact = [np.argsort(-(matrix @ q), kind="stable")[:10].tolist() for q in queries]
    print(f"{args.rows:,} x {matrix.shape[1]} vectors, {args.queries} queries, shortlist {SHORTLIST} re-scored")
    print(f"{'index':<34}{'vectors/s':>12}{'ms/query':>10}{'recall@10':>10}")

    def faiss_build(m):
        lists = vector_index.list_count(len(m))
        sample = m[rng.choice(len(m), min(len(m), lists * vector_index.TRAIN_PER_LIST), replace=False)]
        index = faiss.deserialize_index(np.frombuffer(vector_index.train_quantizer(sample, lists), dtype=np.uint8))
        index.add(m)
        index.nprobe = vector_index.NPROBE
        return index

    measure("faiss IVF-PQ48 (train + add)", faiss_build,
            lambda index, q: index.search(q.reshape(1, -1), SHORTLIST)[1][0], matrix, queries, exact)

    def usearch_build(m):
        index = usearch.index.Index(ndim=m.shape[1], metric="cos", dtype="i8")
        index.add(np.arange(len(m)), m)
        return index

    measure("usearch HNSW i8 (add)", usearch_build,
            lambda index, q: np.asarray(index.search(q, SHORTLIST).keys, dtype=np.int64), matrix, queries, exact)


if __name__ == "__main__":
    main()
