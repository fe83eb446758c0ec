"""The statements one statement uses (or that use it), from the `edges` table, to a given depth.

  thmforge graph out/corpus thm:monotone --paper arxiv:2103.00001 --direction both --depth 2
  thmforge graph out/blueprint pfr --direction uses --depth 3 --format dot > pfr.dot
"""
from __future__ import annotations

import argparse

from retrieval.catalog import open_catalog
from retrieval.graph import DIRECTIONS, as_dot, as_json, as_table, find_statement, neighbourhood
from schemas.errors import UsageError

FORMATS = {"table": as_table, "json": as_json, "dot": as_dot}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dir", help="output directory of build-corpus")
    parser.add_argument("statement", metavar="ID_OR_LABEL", help="a theorem_id, or a label")
    parser.add_argument("--paper", metavar="PAPER_ID", help="the paper of a label several papers use")
    parser.add_argument("--direction", choices=DIRECTIONS, default="uses")
    parser.add_argument("--depth", type=int, default=1, help="edges followed from the statement (default 1)")
    parser.add_argument("--format", choices=tuple(FORMATS), default="table")


def run(args, beam_args) -> int:
    if not 0 <= args.depth <= 50:
        raise UsageError("--depth: between 0 and 50")
    catalog = open_catalog(args.dir)
    start = find_statement(catalog.con, args.statement, args.paper)
    print(FORMATS[args.format](neighbourhood(catalog.con, start, args.direction, args.depth)))
    return 0
