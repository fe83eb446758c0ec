"""The read-only HTTP search API: `POST /search`, `GET /openapi.json`, `GET /health`.

Standard library only (`http.server`): requests are small JSON documents and DuckDB does the work.
Every request is validated against explicit limits before it reaches the searcher; errors are JSON
objects `{"error": "..."}` with a 4xx status, never a traceback.
"""
from __future__ import annotations

import dataclasses
import json
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Optional

from retrieval.filters import Filters, make_filters
from retrieval.search import MODES, Searcher
from schemas.errors import UsageError
from schemas.theorems import KINDS
from transforms.sources import SOURCE_MODULES

MAX_BODY_BYTES = 64 * 1024
MAX_QUERY_CHARS = 2000
MAX_RESULTS = 100
_FIELDS = {"query", "n_results", "kinds", "sources", "categories", "year_from", "year_to", "authors",
           "paper_ids", "mode"}


@dataclasses.dataclass(frozen=True)
class SearchRequest:
    query: str
    n_results: int
    filters: Filters
    mode: str


def parse_search_request(body: object) -> SearchRequest:
    """A validated request from the decoded JSON body; `UsageError` says what is wrong."""
    if not isinstance(body, dict):
        raise UsageError("body must be a JSON object")
    unknown = sorted(set(body) - _FIELDS)
    if unknown:
        raise UsageError(f"unknown fields: {', '.join(unknown)}")
    query = body.get("query")
    if not isinstance(query, str) or not query.strip():
        raise UsageError("query: a non-empty string is required")
    if len(query) > MAX_QUERY_CHARS:
        raise UsageError(f"query: at most {MAX_QUERY_CHARS} characters")
    n_results = body.get("n_results", 10)
    if isinstance(n_results, bool) or not isinstance(n_results, int) or not 1 <= n_results <= MAX_RESULTS:
        raise UsageError(f"n_results: an integer from 1 to {MAX_RESULTS}")
    mode = body.get("mode", "vector")
    if mode not in MODES:
        raise UsageError(f"mode: one of {', '.join(MODES)}")
    filters = make_filters(kinds=body.get("kinds"), sources=body.get("sources"), categories=body.get("categories"),
                           year_from=body.get("year_from"), year_to=body.get("year_to"),
                           authors=body.get("authors"), paper_ids=body.get("paper_ids"))
    return SearchRequest(query.strip(), n_results, filters, mode)


def _string_list(description: str, enum=None) -> dict:
    items = {"type": "string", "maxLength": 200}
    if enum:
        items["enum"] = list(enum)
    return {"type": "array", "items": items, "maxItems": 50, "description": description}


def openapi_schema() -> dict:
    hit = {
        "type": "object",
        "properties": {name: {"type": t} for name, t in (
            ("rank", "integer"), ("score", "number"), ("theorem_id", "string"), ("paper_id", "string"),
            ("source", "string"), ("kind", "string"), ("name", "string"), ("display_name", "string"),
            ("number", "string"), ("title", "string"), ("label", "string"), ("tag", "string"),
            ("paper_title", "string"), ("year", "integer"), ("url", "string"), ("snippet", "string"))},
    }
    hit["properties"]["authors"] = {"type": "array", "items": {"type": "string"}}
    error = {"type": "object", "properties": {"error": {"type": "string"}}, "required": ["error"]}
    request = {
        "type": "object", "additionalProperties": False, "required": ["query"],
        "properties": {
            "query": {"type": "string", "minLength": 1, "maxLength": MAX_QUERY_CHARS,
                      "description": "what to find, in words"},
            "n_results": {"type": "integer", "minimum": 1, "maximum": MAX_RESULTS, "default": 10},
            "mode": {"type": "string", "enum": list(MODES), "default": "vector"},
            "kinds": _string_list("statement kinds", KINDS),
            "sources": _string_list("corpus sources", SOURCE_MODULES),
            "categories": _string_list("arXiv categories (math.AG) or archives (math)"),
            "year_from": {"type": "integer", "minimum": 1000, "maximum": 9999},
            "year_to": {"type": "integer", "minimum": 1000, "maximum": 9999},
            "authors": _string_list("author names, case-insensitive substrings; any of them"),
            "paper_ids": _string_list("paper ids such as arxiv:2101.00001"),
        },
    }
    json_body = lambda ref: {"content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{ref}"}}}}
    return {
        "openapi": "3.0.3",
        "info": {"title": "thmforge theorem search", "version": "1",
                 "description": "Read-only semantic, lexical and hybrid search over a thmforge corpus."},
        "paths": {
            "/search": {"post": {
                "summary": "Search theorem-like statements",
                "requestBody": {"required": True, **json_body("SearchRequest")},
                "responses": {
                    "200": {"description": "results, best first", **json_body("SearchResponse")},
                    "400": {"description": "invalid request", **json_body("Error")},
                    "413": {"description": "body larger than %d bytes" % MAX_BODY_BYTES, **json_body("Error")},
                    "415": {"description": "not application/json", **json_body("Error")},
                },
            }},
            "/health": {"get": {"summary": "liveness and corpus size",
                                "responses": {"200": {"description": "ok"}}}},
            "/openapi.json": {"get": {"summary": "this document", "responses": {"200": {"description": "ok"}}}},
        },
        "components": {"schemas": {
            "SearchRequest": request,
            "SearchResponse": {"type": "object", "properties": {
                "results": {"type": "array", "items": {"$ref": "#/components/schemas/Hit"}},
                "mode": {"type": "string"}, "n_results": {"type": "integer"}}},
            "Hit": hit,
            "Error": error,
        }},
    }


class SearchServer(ThreadingHTTPServer):
    """Serves one searcher; searches are serialized (one DuckDB connection) behind a lock."""

    daemon_threads = True

    def __init__(self, address, searcher: Searcher):
        super().__init__(address, _Handler)
        self.searcher = searcher
        self.lock = threading.Lock()
        self.schema_bytes = json.dumps(openapi_schema(), indent=2).encode()

    def run_search(self, request: SearchRequest) -> dict:
        from retrieval.render import hit_record

        with self.lock:
            hits = self.searcher.search(request.query, k=request.n_results, filters=request.filters,
                                        mode=request.mode)
        return {"results": [hit_record(h) for h in hits], "mode": request.mode, "n_results": len(hits)}


class _Handler(BaseHTTPRequestHandler):
    server: SearchServer
    server_version = "thmforge"
    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):  # quiet by default: one line per request is noise in tests
        pass

    def _send(self, status: int, payload: Optional[dict] = None, raw: Optional[bytes] = None) -> None:
        data = raw if raw is not None else json.dumps(payload, ensure_ascii=False).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(data)

    def _error(self, status: HTTPStatus, message: str) -> None:
        self.close_connection = True
        self._send(status, {"error": message})

    def do_GET(self):
        if self.path == "/openapi.json":
            self._send(HTTPStatus.OK, raw=self.server.schema_bytes)
        elif self.path == "/health":
            self._send(HTTPStatus.OK, {"status": "ok", "statements": self.server.searcher.size})
        elif self.path == "/search":
            self._error(HTTPStatus.METHOD_NOT_ALLOWED, "use POST /search with a JSON body")
        else:
            self._error(HTTPStatus.NOT_FOUND, f"no such path {self.path[:100]!r}")

    def do_POST(self):
        if self.path != "/search":
            self._error(HTTPStatus.NOT_FOUND, f"no such path {self.path[:100]!r}")
            return
        content_type = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        if content_type != "application/json":
            self._error(HTTPStatus.UNSUPPORTED_MEDIA_TYPE, "Content-Type must be application/json")
            return
        try:
            length = int(self.headers.get("Content-Length", ""))
        except ValueError:
            self._error(HTTPStatus.LENGTH_REQUIRED, "Content-Length is required")
            return
        if length < 0 or length > MAX_BODY_BYTES:
            self._error(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, f"body larger than {MAX_BODY_BYTES} bytes")
            return
        try:
            body = json.loads(self.rfile.read(length).decode("utf-8"))
            request = parse_search_request(body)
            response = self.server.run_search(request)
        except (ValueError, UnicodeDecodeError, RecursionError) as exc:   # RecursionError: nesting too deep
            self._error(HTTPStatus.BAD_REQUEST, f"body is not UTF-8 JSON ({exc.__class__.__name__})")
            return
        except UsageError as exc:
            self._error(HTTPStatus.BAD_REQUEST, str(exc))
            return
        self._send(HTTPStatus.OK, response)

    do_PUT = do_DELETE = do_PATCH = lambda self: self._error(HTTPStatus.METHOD_NOT_ALLOWED, "read-only API")
