"""`thmforge link` throughput in statements per second per core (CPU time of this process).

    nice .venv/bin/python benchmarks/link_throughput.py CORPUS_DIR [--repeat 2]

CORPUS_DIR is a build-corpus output (with statement embeddings for the embedding method); it is
copied to a temporary directory and linked from scratch there (the FnApiRunner in-process, so one
core does the work). Baseline measured in the same run: reading the statements and computing their
MinHash signatures in a plain loop, the floor any text linking pays; the ratio says what the Beam
job (shuffles by LSH band and shard, verification, joins, writing) adds on top.
"""
from __future__ import annotations

import argparse
import json
import pathlib
import shutil
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", type=pathlib.Path)
    parser.add_argument("--repeat", type=int, default=2, help="runs of each; the fastest counts")
    parser.add_argument("--embedding-search", choices=("exact", "index"), default="exact",
                        help="embedding candidates by exact scan or from the corpus's vector index")
    args = parser.parse_args()
    best_base, best_link, record = float("inf"), float("inf"), {}
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory(prefix="link-bench-") as tmp:
            copy = _fresh_copy(args.corpus, pathlib.Path(tmp))
            n, base_s = baseline(copy)
            record, link_s = linked(copy, args.embedding_search)
            best_base, best_link = min(best_base, base_s), min(best_link, link_s)
    n = record["statements"]
    print(f"statements: {n}, restates edges: {record['edges_written']} ({record['embedding_search']} embedding search)")
    print(f"baseline (read + MinHash, plain loop): {n / best_base:,.0f} statements/s/core")
    print(f"thmforge link (Beam FnApiRunner, one core): {n / best_link:,.0f} statements/s/core")
    print(f"ratio link / baseline: {best_base / best_link:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
