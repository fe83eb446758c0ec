"""Serve read-only theorem search over HTTP.

  thmforge serve out/demo --port 8750
  curl -s localhost:8750/search -H 'Content-Type: application/json' \
       -d '{"query": "bounded monotone sequences converge", "n_results": 5, "kinds": ["theorem"]}'

POST /search takes {query, n_results (<= 100), mode, kinds, sources, categories, year_from,
year_to, authors, paper_ids}; GET /openapi.json is the OpenAPI 3 description; GET /health.
Binds to 127.0.0.1 unless --host says otherwise.
"""
from __future__ import annotations

import argparse
import sys

from retrieval.api import SearchServer
from runners.cmd_search import add_searcher_arguments, searcher_from_args
from schemas.errors import UsageError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dir", help="output directory of build-corpus")
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8750, help="port (default 8750; 0 picks a free one)")
    add_searcher_arguments(parser)


def run(args, beam_args) -> int:
    if not 0 <= args.port <= 65535:
        raise UsageError("--port: 0 to 65535")
    searcher = searcher_from_args(args)
    searcher.prepare()      # a bad model fails at start, and the first request builds no index
    try:
        server = SearchServer((args.host, args.port), searcher)
    except OSError as exc:
        raise UsageError(f"cannot listen on {args.host}:{args.port} ({exc.strerror})") from None
    host, port = server.server_address[:2]
    print(f"thmforge serve: {searcher.size} statements; http://{host}:{port}/search (POST), "
          f"http://{host}:{port}/openapi.json", file=sys.stderr, flush=True)
    try:
        server.serve_forever()
    finally:
        server.server_close()
    return 0
