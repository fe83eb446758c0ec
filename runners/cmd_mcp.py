"""An MCP server over stdio for agents: theorem search and the theorem graph of one corpus.

  thmforge mcp out/demo

Tools: theorem_search (the parameters of `POST /search`: query, n_results, mode, kinds, sources,
categories, year_from, year_to, authors, paper_ids), get_statement, get_paper and
statement_neighbors (dependencies, dependents, restatements). An MCP client starts this command
and speaks JSON-RPC on its stdin/stdout; `thmforge serve` offers the same tools at /mcp.
"""
from __future__ import annotations

import argparse

from runners.cmd_search import add_searcher_arguments, searcher_from_args


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dir", help="output directory of build-corpus")
    add_searcher_arguments(parser)


def run(args, beam_args) -> int:
    from retrieval.mcp_tools import build_mcp_server
    from retrieval.service import SearchService

    searcher = searcher_from_args(args, lean_encoder=True, views=False)
    searcher.prepare()      # load the model before the client's first call, not during it
    build_mcp_server(SearchService(searcher)).run("stdio")
    return 0
