"""Retrieval quality on thmforge's own evaluation set, per search mode and per representation.

  .venv/bin/python benchmarks/retrieval_eval.py [--corpus DIR] [--rebuild] [--rerank MODEL] [--no-index]

Builds (or reuses) a corpus over the shared books and papers with the real pipeline
(`thmforge build-corpus --source latex-project --embed-statements`), then evaluates
`retrieval/evalsets/queries.jsonl` with vector, lexical and hybrid search over both stored
representations: the description embedding (`embedding`) and the statement-text embedding
(`statement_embedding`). With the offline `text` describer the description is a plain-text
rendering of the statement, so the two representations differ only by that rendering. Each
representation is then indexed (`thmforge index`) and vector search from the index is scored next
to exact search (`--exact`): its metrics, recall@10, and every query whose gold rank differs.
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import subprocess
import sys
import time

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from retrieval import vector_index  # noqa: E402
from retrieval.catalog import open_catalog  # noqa: E402
from retrieval.evaluate import evaluate, read_queries, write_ranks  # noqa: E402
from retrieval.filters import Filters  # noqa: E402
from retrieval.render import metrics_table  # noqa: E402
from retrieval.search import MODES, Searcher  # noqa: E402

SHARED = REPO.parent / "shared" / "corpora"
# A folder lets the source pick the root file; the HoTT book's folder also holds stand-alone
# documents (exercise solutions, covers) that score as roots, so its root is named.
PROJECTS = ("books/cring", "books/hott-book/main.tex", "books/napkin", "papers/poly-book",
            "papers/rijke-hott-intro", "papers/shulman-catlog", "papers/equational-theories",
            "papers/pfr-blueprint")


def build(out: pathlib.Path) -> float:
    command = [str(REPO / ".venv" / "bin" / "thmforge"), "build-corpus", "--source", "latex-project",
               "--input", *[str(SHARED / p) for p in PROJECTS], "--output", str(out),
               "--embed-statements", "--preset", "local"]
    start = time.perf_counter()
    subprocess.run(command, check=True, env=dict(os.environ, HF_HUB_OFFLINE="1"))
    return time.perf_counter() - start


def report_index(corpus: pathlib.Path, representation: str, queries) -> None:
    """Vector search from the index against exact search: metrics, recall@10, per-query rank changes."""
    command = [sys.executable, "-m", "runners.cli", "index", str(corpus), "--representation", representation]
    subprocess.run(command, check=True, cwd=REPO, env=dict(os.environ, HF_HUB_OFFLINE="1"))
    indexed = Searcher(open_catalog(str(corpus)), representation=representation)
    exact = Searcher(open_catalog(str(corpus)), representation=representation, exact=True)
    if not indexed.indexed:
        raise RuntimeError(f"{corpus}: the index is not current after `thmforge index`")
    both = [evaluate(s, queries, ["vector"], k=20) for s in (indexed, exact)]
    for (results, unresolved), label in zip(both, ("index", "exact")):
        results[0].mode = f"vector {label}"
        print(metrics_table(results, len(queries), unresolved, label=f"{representation}, vector from the {label}"))
    top = [[[d for d, _ in s.ranking(q.query, 10, Filters(), "vector")] for q in queries] for s in (indexed, exact)]
    print(f"index recall@10 against exact search: {vector_index.recall_at_k(top[0], top[1], 10):.3f}")
    ranks = [{r["query"]: r["theorem_rank"] for r in results[0].per_query} for results, _ in both]
    changed = [(q, ranks[1].get(q), ranks[0].get(q)) for q in ranks[1] if ranks[0].get(q) != ranks[1].get(q)]
    print(f"queries whose gold rank differs (exact -> index): {changed or 'none'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default=str(REPO / "out" / "evalset-corpus"), help="corpus directory")
    parser.add_argument("--rebuild", action="store_true", help="build even when the corpus exists")
    parser.add_argument("--queries", default=str(REPO / "retrieval" / "evalsets" / "queries.jsonl"))
    parser.add_argument("--rerank", metavar="MODEL", help="also evaluate reranking with this cross-encoder")
    parser.add_argument("--lexical-weight", type=float, default=0.5,
                        help="BM25 weight of the extra weighted-fusion hybrid row (default 0.5)")
    parser.add_argument("--no-index", action="store_true",
                        help="skip indexing the corpus and comparing search from the index with exact search")
    parser.add_argument("--ranks-out", metavar="DIR", help="write per-query ranks per representation here")
    args = parser.parse_args()

    corpus = pathlib.Path(args.corpus)
    if args.rebuild or not (corpus / "manifest.json").is_file():
        print(f"building the corpus over {len(PROJECTS)} projects in {corpus} ...", flush=True)
        print(f"built in {build(corpus):.0f}s")
    queries = read_queries(args.queries)
    catalog = open_catalog(str(corpus))
    counts = catalog.con.execute(
        "SELECT paper_id, status, n_statements FROM papers ORDER BY paper_id").fetchall()
    print("papers:", ", ".join(f"{p} ({s}, {n})" for p, s, n in counts))
    print(f"describer: {catalog.manifest.get('options', {}).get('describer', 'text')}; "
          f"embedding: {json.dumps(catalog.manifest.get('embedding'))}")

    hit10 = {}
    for representation in ("description", "statement"):
        searcher = Searcher(open_catalog(str(corpus)), representation=representation)
        start = time.perf_counter()
        results, unresolved = evaluate(searcher, queries, MODES, k=20)
        elapsed = time.perf_counter() - start
        print()
        print(metrics_table(results, len(queries), unresolved, label=f"representation {representation}"))
        print(f"({elapsed:.1f}s for {len(queries) * len(MODES)} searches over {searcher.size} statements)")
        for result in results:
            hit10[(representation, result.mode)] = result.theorem["hit@10"]
        weighted = Searcher(open_catalog(str(corpus)), representation=representation,
                            lexical_weight=args.lexical_weight)
        results_w, _ = evaluate(weighted, queries, ["hybrid"], k=20)
        results_w[0].mode = f"hybrid w={args.lexical_weight:g}"
        print(metrics_table(results_w, len(queries), unresolved, label="reciprocal-rank fusion, BM25 down-weighted"))
        hit10[(representation, results_w[0].mode)] = results_w[0].theorem["hit@10"]
        if args.ranks_out:
            write_ranks(str(pathlib.Path(args.ranks_out) / f"ranks-{representation}.jsonl"), results)
        if unresolved:
            missing = [q.query for q in queries
                       if not searcher.con.execute("SELECT count(*) FROM search_corpus WHERE list_contains(?, label)",
                                                   [list(q.labels)]).fetchall()[0][0]]
            print(f"gold not extracted for: {missing}")
        if not args.no_index:
            report_index(corpus, representation, queries)
        if args.rerank:
            from retrieval.rerank import CrossEncoderReranker

            reranked = Searcher(open_catalog(str(corpus)), representation=representation,
                                reranker=CrossEncoderReranker(args.rerank), rerank_depth=50)
            results, unresolved = evaluate(reranked, queries, ["hybrid"], k=20)
            print(metrics_table(results, len(queries), unresolved, label=f"{representation}, hybrid + rerank"))
            hit10[(representation, "hybrid+rerank")] = results[0].theorem["hit@10"]
    print()
    for representation in ("description", "statement"):
        vector = hit10[(representation, "vector")]
        best = max((m for r, m in hit10 if r == representation and m != "vector"),
                   key=lambda m: hit10[(representation, m)])
        verdict = "beats" if hit10[(representation, best)] > vector else "does not beat"
        print(f"{representation}: best non-vector mode {best} Hit@10 {hit10[(representation, best)]:.3f} "
              f"{verdict} plain vector {vector:.3f}")


if __name__ == "__main__":
    main()
