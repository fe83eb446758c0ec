"""`thmforge link` throughput in statements per second per core (CPU time of this process).

    nice .venv/bin/python benchmarks/link_throughput.py CORPUS_DIR [--repeat 2] [--embedding-search exact|index]
    nice .venv/bin/python benchmarks/link_throughput.py --synthetic 10000 --cache base.npy --embedding-search index

CORPUS_DIR is a build-corpus output (with statement embeddings for the embedding method); it is
copied to a temporary directory and linked from scratch there (the FnApiRunner in-process, so one
core does the work). Baseline measured in the same run: reading the statements and computing their
MinHash signatures in a plain loop, the floor any text linking pays; the ratio says what the Beam
job (shuffles by LSH band and shard, verification, joins, writing) adds on top. `--synthetic ROWS`
links a corpus of embedding-like vectors instead (`benchmarks/search_scale.py`'s, indexed with
`thmforge index` for `--embedding-search index`): its texts are too short for text linking, so it
measures the embedding side.

Measured 2026-12-04 (synthetic, CPU seconds of the link job, `--repeat 1` per process, the code
before and after the change run alternately, 3 runs each, machine at load 4-11), statements/s/core,
median [range], before -> after: exact 5k 1,630 [1,468-1,661] -> 3,224 [3,220-3,251], 10k 1,848
[1,733-1,864] -> 3,360 [3,238-3,422], 20k 1,613 [1,564-1,630] -> 2,733 [2,720-2,889]; index 5k
1,430 [1,415-1,467] -> 2,026 [2,013-2,075], 10k 1,698 [1,619-1,807] -> 2,572 [2,498-2,578], 20k
1,800 [1,684-1,854] -> 2,592 [2,491-2,706]; the same edges. What went: the joins that brought
each pair's statements back for its edge rows (pairs now carry them), a first run's join with an
empty linked list, the join with failed requests when no endpoint is asked, vectors pickled per
element (they cross shuffles as bytes) and one copy of each query in the exact scan (its own shard
has it). At 20k the exact scan's N x N products are most of what is left (69% of the job's CPU
under cProfile). Earlier (2026-12-03, load 10-18): 5k 540 / 528, 10k 706 / 704, 100k - / 635 (the
exact scan's in-process shuffles passed 6.8 GB RSS and were stopped), a crossover at about 10k
statements, from where `--embedding-search auto` uses the index (`retrieval.link_candidates.INDEX_FROM_ROWS`).
Since this change the exact scan is the faster up to 20k at least; the new crossover is not measured.
"""
from __future__ import annotations

import argparse
import json
import pathlib
import os
import shutil
import subprocess
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import pyarrow.parquet as pq  # noqa: E402
from apache_beam.options.pipeline_options import PipelineOptions  # noqa: E402

from pipelines.link import LINKED_DIR, read_statements, run_link  # noqa: E402
from transforms.link import LinkConfig, text_signature  # noqa: E402
from transforms.write.commit import list_files  # noqa: E402


def _fresh_copy(corpus: pathlib.Path, into: pathlib.Path) -> pathlib.Path:
    target = into / "corpus"
    shutil.copytree(corpus, target, ignore=shutil.ignore_patterns("_cache", "_staging", LINKED_DIR))
    for path in (target / "edges").rglob("part-link_*.parquet") if (target / "edges").exists() else ():
        path.unlink()
    manifest = json.loads((target / "manifest.json").read_text())
    if "files" in manifest:       # the generation no longer names the link runs' edges
        manifest["files"]["edges"] = [f for f in manifest["files"].get("edges", []) if "/part-link_" not in f]
        (target / "manifest.json").write_text(json.dumps(manifest))
    return target


def baseline(corpus: pathlib.Path) -> tuple[int, float]:
    text_signature("datasketch imported before the clock starts: the link job, run after, finds it imported")
    started = time.process_time()
    rows = [row for path in list_files(str(corpus / "theorems")) for row in read_statements(path, str(corpus))]
    for row in rows:
        text_signature(row["statement_text"])
    return len(rows), time.process_time() - started


def linked(corpus: pathlib.Path, search: str) -> tuple[dict, float]:
    from retrieval.link_candidates import open_neighbours

    config = LinkConfig(output=str(corpus))
    neighbours = open_neighbours(str(corpus), config.embedding_threshold) if search == "index" else None
    if search == "index" and neighbours is None:
        raise SystemExit(f"{corpus}: no vector index covering the corpus (thmforge index)")
    started = time.process_time()
    record = run_link(config, PipelineOptions(["--runner=FnApiRunner"]), neighbours,
                      "index" if neighbours else "exact")
    return record, time.process_time() - started


def synthetic(rows: int, cache: pathlib.Path | None, into: pathlib.Path, index: bool) -> pathlib.Path:
    """A corpus of `rows` embedding-like statements (indexed when `index`)."""
    from benchmarks.search_scale import write_corpus
    from benchmarks.synthetic_vectors import real_embeddings

    root = into / "synthetic"
    write_corpus(root, rows, real_embeddings(2500, cache))
    for path in (root / "theorems").rglob("*.parquet"):   # its all-null statement vectors do not read back
        table = pq.read_table(path, columns=[c for c in pq.read_schema(path).names if c != "statement_embedding"])
        pq.write_table(table.append_column("statement_embedding", table.column("embedding")), path)
    if index:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
        subprocess.run([sys.executable, "-m", "runners.cli", "index", str(root)], check=True, env=env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return root


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", type=pathlib.Path, nargs="?")
    parser.add_argument("--synthetic", type=int, metavar="ROWS", help="link a synthetic corpus of ROWS statements")
    parser.add_argument("--cache", type=pathlib.Path, help="with --synthetic: cache of the real embeddings (.npy)")
    parser.add_argument("--repeat", type=int, default=2, help="runs of each; the fastest counts")
    parser.add_argument("--embedding-search", choices=("exact", "index"), default="exact",
                        help="embedding candidates by exact scan or from the corpus's vector index")
    args = parser.parse_args()
    if (args.corpus is None) == (args.synthetic is None):
        parser.error("give CORPUS_DIR or --synthetic ROWS")
    made = tempfile.TemporaryDirectory(prefix="link-bench-corpus-") if args.synthetic else None
    corpus = synthetic(args.synthetic, args.cache, pathlib.Path(made.name), args.embedding_search == "index") \
        if made else args.corpus
    best_base, best_link, record = float("inf"), float("inf"), {}
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory(prefix="link-bench-") as tmp:
            copy = _fresh_copy(corpus, pathlib.Path(tmp))
            n, base_s = baseline(copy)
            record, link_s = linked(copy, args.embedding_search)
            best_base, best_link = min(best_base, base_s), min(best_link, link_s)
    n = record["statements"]
    print(f"statements: {n}, restates edges: {record['edges_written']} ({record['embedding_search']} embedding search)")
    print(f"baseline (read + MinHash, plain loop): {n / best_base:,.0f} statements/s/core")
    print(f"thmforge link (Beam FnApiRunner, one core): {n / best_link:,.0f} statements/s/core")
    print(f"ratio link / baseline: {best_base / best_link:.2f}")
    if made:
        made.cleanup()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
