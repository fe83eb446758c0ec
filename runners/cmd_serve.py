"""Serve a corpus on the web: the search page, the JSON API and the MCP endpoint.

  thmforge serve out/demo --port 8750
  curl -s localhost:8750/search -H 'Content-Type: application/json' \
       -d '{"query": "bounded monotone sequences converge", "n_results": 5, "kinds": ["theorem"]}'

http://HOST:PORT/ is the search page (KaTeX ships with the package: it works offline).
POST /search takes {query, n_results (<= 100), mode, kinds, sources, categories, year_from,
year_to, authors, paper_ids}; GET /statements/{id} and GET /papers/{id} read one statement or
paper; /openapi.json describes them all; /mcp is the MCP server (streamable HTTP) with the tools
of `thmforge mcp`. Binds to 127.0.0.1 unless --host says otherwise; --cors-origin lets a page on
another origin call the API.
"""
from __future__ import annotations

import argparse
import sys

from retrieval.service import MAX_EMBED_BATCH, default_workers
from runners.cmd_search import add_searcher_arguments, searcher_from_args
from schemas.errors import UsageError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dir", help="output directory of build-corpus")
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8750, help="port (default 8750; 0 picks a free one)")
    parser.add_argument("--cors-origin", action="append", metavar="ORIGIN", default=[],
                        help="an origin (https://example.org, or * for any) whose pages may call the API; repeat")
    parser.add_argument("--threads", type=int, default=None, metavar="N",
                        help="worker threads answering requests, searches among them concurrently "
                             "(default four per core, 8 to 64)")
    parser.add_argument("--embed-batch", type=int, default=MAX_EMBED_BATCH, metavar="N",
                        help="query embeddings computed together at most, from requests that arrive while the "
                             f"encoder is busy (default {MAX_EMBED_BATCH}; 1: each query alone)")
    parser.add_argument("--no-mcp", action="store_true", help="leave out the MCP endpoint /mcp")
    add_searcher_arguments(parser)


def run(args, beam_args) -> int:
    if not 0 <= args.port <= 65535:
        raise UsageError("--port: 0 to 65535")
    threads = default_workers() if args.threads is None else args.threads
    if not 1 <= threads <= 256:
        raise UsageError("--threads: 1 to 256")
    if not 1 <= args.embed_batch <= 256:
        raise UsageError("--embed-batch: 1 to 256")
    for origin in args.cors_origin:
        if origin != "*" and not origin.startswith(("http://", "https://")):
            raise UsageError(f"--cors-origin: {origin!r} is not an origin such as https://example.org")
    from retrieval.http_server import listening_socket, make_server
    from retrieval.service import SearchService
    from retrieval.web import create_app

    searcher = searcher_from_args(args, lean_encoder=True, views=False)    # NumPy query encoder: no torch in memory
    searcher.prepare()      # a bad model fails at start, and the first request builds no index
    try:
        sock = listening_socket(args.host, args.port)
    except OSError as exc:
        raise UsageError(f"cannot listen on {args.host}:{args.port} ({exc.strerror})") from None
    app = create_app(SearchService(searcher, max_embed_batch=args.embed_batch), cors_origins=args.cors_origin,
                     mcp_host=None if args.no_mcp else args.host, worker_threads=threads)
    host, port = sock.getsockname()[:2]
    base = f"http://{host if ':' not in host else f'[{host}]'}:{port}"
    print(f"thmforge serve: {searcher.size} statements; {base}/ (search page), {base}/search (POST), "
          f"{base}/openapi.json" + ("" if args.no_mcp else f", {base}/mcp (MCP)"), file=sys.stderr, flush=True)
    make_server(app).run(sockets=[sock])
    return 0
