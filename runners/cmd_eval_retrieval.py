"""Measure search quality on a query set: Hit@1, Hit@10, Hit@20 and MRR@20, per mode.

  thmforge eval-retrieval out/books --queries retrieval/evalsets/queries.jsonl --modes vector,lexical,hybrid

Queries file (JSONL): {"query": "...", "labels": [...]} (or "theorem_ids", or Stacks "tags"),
optional "paper_ids" for paper-level scoring and to scope labels. Metrics are given at theorem
level and paper level (the first result from a gold paper). --ranks-out writes one line per
(query, mode) with the ranks found and the top results, for error analysis.
"""
from __future__ import annotations

import argparse

from retrieval.evaluate import evaluate, read_queries, write_ranks
from retrieval.render import metrics_json, metrics_table
from retrieval.search import MODES
from runners.cmd_search import add_filter_arguments, add_searcher_arguments, filters_from_args, searcher_from_args
from schemas.errors import UsageError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dir", help="output directory of build-corpus")
    parser.add_argument("--queries", required=True, metavar="FILE.jsonl", help="query set (JSONL)")
    parser.add_argument("-k", type=int, default=20, help="results retrieved per query (>= 20 for all metrics)")
    parser.add_argument("--modes", default=",".join(MODES), help=f"comma-separated, from {', '.join(MODES)}")
    add_filter_arguments(parser)
    add_searcher_arguments(parser)
    parser.add_argument("--format", choices=("table", "json"), default="table")
    parser.add_argument("--ranks-out", metavar="FILE", help="write per-query ranks (JSONL) here")


def run(args, beam_args) -> int:
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    bad = [m for m in modes if m not in MODES]
    if not modes or bad:
        raise UsageError(f"--modes: choose from {', '.join(MODES)}")
    if not 1 <= args.k <= 1000:
        raise UsageError("-k: between 1 and 1000")
    queries = read_queries(args.queries)
    filters = filters_from_args(args)
    searcher = searcher_from_args(args)
    results, unresolved = evaluate(searcher, queries, modes, k=args.k, filters=filters)
    if args.ranks_out:
        write_ranks(args.ranks_out, results)
    if args.format == "json":
        print(metrics_json(results, len(queries), unresolved))
    else:
        print(metrics_table(results, len(queries), unresolved, label=f"representation {args.representation}"))
    return 0
