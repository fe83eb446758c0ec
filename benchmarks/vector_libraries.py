"""faiss IVF-PQ against usearch HNSW on embedding-like vectors: build rate, latency, recall@10, memory, bytes.

  .venv/bin/python benchmarks/vector_libraries.py [--rows 100000] [--queries 100] [--cache FILE] [--format json]

Each library runs in its own child process (so its peak RSS is its own) on the same vectors
(`benchmarks/synthetic_vectors.py`) and the same held-out queries; both shortlist 200 candidates
that are re-scored exactly (as `retrieval.vector_index` does), so recall@10 is against the exact
top 10 of the same rows. Build is timed in wall and CPU seconds (usearch adds with every core,
faiss trains and encodes on one thread as a Beam worker does). RSS: the child's peak, and its
peak minus the vectors it holds before building. usearch comes from the `bench` extra.
The figures recorded in docs/vector_index.md came from this script.
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import resource
import subprocess
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402

from benchmarks.synthetic_vectors import perturbed, real_embeddings  # noqa: E402
from retrieval import vector_index  # noqa: E402

SHORTLIST = 200
LIBRARIES = ("faiss", "usearch")


def rescored(matrix: np.ndarray, query: np.ndarray, candidates: np.ndarray, k: int) -> list[int]:
    candidates = candidates[candidates >= 0]
    scores = matrix[candidates] @ query
    return candidates[np.argsort(-scores, kind="stable")[:k]].tolist()


def faiss_index(matrix: np.ndarray, rng: np.random.Generator):
    """IVF-PQ as `thmforge index` builds it: quantizer trained on a sample, every vector encoded;
    (index, its serialized bytes, a search function)."""
    import faiss

    lists = vector_index.list_count(len(matrix))
    sample = matrix[rng.choice(len(matrix), min(len(matrix), lists * vector_index.TRAIN_PER_LIST), replace=False)]
    index = faiss.deserialize_index(np.frombuffer(vector_index.train_quantizer(sample, lists), dtype=np.uint8))
    index.add(matrix)
    index.nprobe = vector_index.probe_count(len(matrix), lists)
    return len(faiss.serialize_index(index)), lambda q: index.search(q.reshape(1, -1), SHORTLIST)[1][0]


def usearch_index(matrix: np.ndarray, rng: np.random.Generator):
    """HNSW with int8 vectors (usearch's compact setting), every core adding."""
    import usearch.index

    index = usearch.index.Index(ndim=matrix.shape[1], metric="cos", dtype="i8")
    index.add(np.arange(len(matrix)), matrix)
    return (index.serialized_length,
            lambda q: np.asarray(index.search(q, SHORTLIST, threads=1).keys, dtype=np.int64))


BUILDERS = {"faiss": faiss_index, "usearch": usearch_index}


def write_vectors(rows: int, queries: int, cache: str | None, folder: pathlib.Path) -> None:
    """The rows and queries as .npy files, so that a child loads them without generation temporaries
    (its peak RSS before building is then the vectors themselves)."""
    base = real_embeddings(2500, pathlib.Path(cache) if cache else None)
    np.save(folder / "rows.npy", np.concatenate(list(perturbed(base, rows, np.random.default_rng(5)))))
    np.save(folder / "queries.npy", next(perturbed(base, queries, np.random.default_rng(6))))


def measure_one(library: str, args) -> dict:
    """One library's figures, measured in this process."""
    folder = pathlib.Path(args.data)
    matrix, queries = np.load(folder / "rows.npy"), np.load(folder / "queries.npy")
    exact = [np.argsort(-(matrix @ q), kind="stable")[:10].tolist() for q in queries]
    before_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    wall, cpu = time.perf_counter(), time.process_time()
    index_bytes, search = BUILDERS[library](matrix, np.random.default_rng(7))
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    times, found = [], []
    for q in queries:
        start = time.perf_counter()
        found.append(rescored(matrix, q, search(q), 10))
        times.append((time.perf_counter() - start) * 1e3)
    times.sort()
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"library": library, "rows": len(matrix), "build_s": round(wall, 2), "build_cpu_s": round(cpu, 2),
            "build_vectors_per_s": round(len(matrix) / wall), "build_vectors_per_cpu_s": round(len(matrix) / cpu),
            "p50_ms": round(times[len(times) // 2], 2), "p95_ms": round(times[int(0.95 * (len(times) - 1))], 2),
            "recall_at_10": round(vector_index.recall_at_k(found, exact, 10), 4), "index_bytes": index_bytes,
            "rss_peak_mb": round(peak_mb), "rss_over_vectors_mb": round(peak_mb - before_mb)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--cache", metavar="FILE", help="cache of the real embeddings (.npy)")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.add_argument("--only", choices=LIBRARIES, help=argparse.SUPPRESS)    # the child's run
    parser.add_argument("--data", help=argparse.SUPPRESS)                       # ... and its vectors
    args = parser.parse_args()
    if args.only:
        print(json.dumps(measure_one(args.only, args)))
        return
    with tempfile.TemporaryDirectory() as tmp:
        write_vectors(args.rows, args.queries, args.cache, pathlib.Path(tmp))
        results = []
        for library in LIBRARIES:
            command = [sys.executable, __file__, "--only", library, "--data", tmp]
            run = subprocess.run(command, capture_output=True, text=True, check=True,
                                 env=dict(os.environ, HF_HUB_OFFLINE="1"))
            results.append(json.loads(run.stdout.strip().splitlines()[-1]))
    if args.format == "json":
        print(json.dumps(results))
        return
    print(f"{args.rows:,} vectors, {args.queries} queries, shortlist {SHORTLIST} re-scored exactly; "
          f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}")
    keys = [k for k in results[0] if k not in ("library", "rows")]
    print(f"{'':<24}" + "".join(f"{r['library']:>14}" for r in results))
    for key in keys:
        print(f"{key:<24}" + "".join(f"{r[key]:>14,}" if isinstance(r[key], int) else f"{r[key]:>14}"
                                     for r in results))


if __name__ == "__main__":
    main()
