"""The web application: JSON API, search page, MCP endpoint, one FastAPI app over one searcher.

  POST /search                  ranked statements (`retrieval.service.SearchRequest` is the contract)
  GET  /statements/{id}         a statement, its paper, proof, neighbourhood and citation
  GET  /papers/{id}             a paper and its statements
  GET  /health, /openapi.json   liveness; the OpenAPI document generated from the models
  GET  /, /statement            the search page and a statement's page (static files, KaTeX vendored)
  POST /mcp                     the MCP tools of `retrieval.mcp_tools` over streamable HTTP

Every malformed request is a JSON 4xx `{"error": "..."}`: the request models are strict, bodies
are capped and read under a deadline, and no path reaches the engine without a validated request.
"""
from __future__ import annotations

import contextlib
import pathlib
from typing import Annotated, Optional, Sequence

import anyio
from fastapi import FastAPI, Path, Request
from fastapi.exceptions import RequestValidationError
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import FileResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException as StarletteHTTPException

from retrieval.service import (Error, Health, NotFound, Paper, SearchRequest, SearchResponse, SearchService,
                               Statement, default_workers)
from schemas.errors import UsageError

STATIC_DIR = pathlib.Path(__file__).with_name("static")
MAX_BODY_BYTES = 64 * 1024
MAX_ID_CHARS = 500
BODY_DEADLINE_S = 10.0      # a request body trickling in slower than this is answered 408
JSON_PATHS = frozenset({"/search"})


def _error(status: int, message: str, headers=None) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status, headers=headers)


def _validation_message(exc: RequestValidationError) -> str:
    errors = exc.errors()
    unknown = [str(e["loc"][-1]) for e in errors if e["type"] == "extra_forbidden"]
    if unknown:
        return f"unknown fields: {', '.join(sorted(unknown))}"
    first = errors[0]
    if first["type"] == "json_invalid":
        return "body is not UTF-8 JSON"
    where = ".".join(str(part) for part in first["loc"] if part not in ("body", "path"))
    if where == "query" and first["type"] in ("string_too_short", "string_pattern_mismatch"):
        return "query: a non-blank string is required"
    if not where:
        return "body must be a JSON object with a 'query'" if first["type"] != "missing" else "a JSON body is required"
    return f"{where}: {first['msg']}"


class RequestLimits:
    """ASGI middleware for the JSON endpoints: Content-Type checked, body capped at `max_bytes` and
    read within `deadline` seconds, before the app sees any of it."""

    def __init__(self, app, max_bytes: int = MAX_BODY_BYTES, deadline: float = BODY_DEADLINE_S):
        self.app, self.max_bytes, self.deadline = app, max_bytes, deadline

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope["path"] not in JSON_PATHS or scope["method"] != "POST":
            return await self.app(scope, receive, send)
        headers = Headers(scope=scope)
        media_type = headers.get("content-type", "").split(";")[0].strip().lower()
        if media_type != "application/json":
            return await _error(415, "Content-Type must be application/json")(scope, receive, send)
        declared = headers.get("content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.max_bytes):
            status = 413 if declared.isdigit() else 400
            return await _error(status, f"body larger than {self.max_bytes} bytes" if status == 413
                                else "Content-Length must be a number")(scope, receive, send)
        body = bytearray()
        with anyio.move_on_after(self.deadline) as deadline:
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":
                    return
                body += message.get("body", b"")
                if len(body) > self.max_bytes:
                    return await _error(413, f"body larger than {self.max_bytes} bytes")(scope, receive, send)
                if not message.get("more_body"):
                    break
        if deadline.cancelled_caught:
            return await _error(408, f"body not received within {self.deadline:g} s")(scope, receive, send)
        replayed = False

        async def replay():
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": bytes(body), "more_body": False}

        await self.app(scope, replay, send)


class HeadAndOptions:
    """ASGI middleware for the two methods HTTP defines on every resource: `HEAD` is answered as
    `GET` without the body; `OPTIONS` (other than a CORS preflight, which CORSMiddleware answers
    first) is 204 with the path's `Allow` header, or 404 for a path that does not exist."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope["method"] not in ("HEAD", "OPTIONS"):
            return await self.app(scope, receive, send)
        if scope["method"] == "HEAD":
            async def headers_only(message):
                if message["type"] == "http.response.body":
                    message = {**message, "body": b""}
                await send(message)

            return await self.app({**scope, "method": "GET"}, receive, headers_only)
        allowed = allowed_methods(scope["app"], scope)
        if not allowed:
            return await _error(404, f"no such path {scope['path'][:100]!r}")(scope, receive, send)
        await Response(status_code=204, headers={"Allow": ", ".join(sorted(allowed))})(scope, receive, send)


def allowed_methods(app, scope) -> set[str]:
    """The methods the app answers at `scope`'s path (HEAD with GET, OPTIONS everywhere); empty: no such path."""
    from starlette.routing import Match, Mount

    allowed = set()
    for route in app.router.routes:
        match, _ = route.matches({**scope, "method": "GET"})
        if match != Match.NONE:
            methods = {"GET"} if isinstance(route, Mount) else getattr(route, "methods", None)
            allowed |= set(methods or {"GET", "POST", "DELETE"})   # the MCP endpoint takes all three
    if "GET" in allowed:
        allowed.add("HEAD")
    return allowed | {"OPTIONS"} if allowed else set()


_BAD_REQUEST = {400: {"model": Error, "description": "invalid request"}}
_NOT_FOUND = {**_BAD_REQUEST, 404: {"model": Error, "description": "no such id"}}


def create_app(service: SearchService, *, cors_origins: Sequence[str] = (), mcp_host: Optional[str] = "127.0.0.1",
               worker_threads: Optional[int] = None, body_deadline: float = BODY_DEADLINE_S) -> FastAPI:
    """The application; `mcp_host` (the address served, for the MCP transport's DNS-rebinding
    check) None leaves the MCP endpoint out; `worker_threads` bounds the threads answering requests
    (default `retrieval.service.default_workers`)."""
    mcp_server = None
    if mcp_host is not None:
        from retrieval.mcp_tools import build_mcp_server

        mcp_server = build_mcp_server(service)
        mcp_routes = mcp_server.streamable_http_app(streamable_http_path="/mcp", host=mcp_host).routes

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI):
        anyio.to_thread.current_default_thread_limiter().total_tokens = worker_threads or default_workers()
        async with (mcp_server.session_manager.run() if mcp_server else contextlib.nullcontext()):
            yield

    app = FastAPI(title="thmforge theorem search", version="1", lifespan=lifespan, docs_url=None, redoc_url=None,
                  description="Read-only semantic, lexical and hybrid search over a thmforge corpus; "
                              "statements with their papers and theorem graph.")

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, exc: RequestValidationError):
        return _error(400, _validation_message(exc))

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException):
        headers = dict(getattr(exc, "headers", None) or {})
        if exc.status_code == 405:
            headers["Allow"] = ", ".join(sorted(allowed_methods(app, request.scope)))
            return _error(405, f"{request.method} is not allowed here; use {headers['Allow']}", headers)
        if exc.status_code == 404:
            return _error(404, f"no such path {request.url.path[:100]!r}")
        return _error(exc.status_code, str(exc.detail), headers)

    @app.exception_handler(UsageError)
    async def usage_error(request: Request, exc: UsageError):
        return _error(400, str(exc))

    @app.exception_handler(NotFound)
    async def not_found(request: Request, exc: NotFound):
        return _error(404, str(exc))

    @app.post("/search", response_model=SearchResponse, summary="Search theorem-like statements",
              responses={**_BAD_REQUEST,
                         413: {"model": Error, "description": f"body larger than {MAX_BODY_BYTES} bytes"},
                         415: {"model": Error, "description": "not application/json"}})
    def search(request: SearchRequest):
        return service.search(request)

    @app.get("/statements/{theorem_id:path}", response_model=Statement, responses=_NOT_FOUND,
             summary="A statement with its proof, paper, uses, used-by, restatements and citation")
    def get_statement(theorem_id: Annotated[str, Path(max_length=MAX_ID_CHARS)]):
        return service.statement(theorem_id)

    @app.get("/papers/{paper_id:path}", response_model=Paper, responses=_NOT_FOUND,
             summary="A paper with its statements and graph edges")
    def get_paper(paper_id: Annotated[str, Path(max_length=MAX_ID_CHARS)]):
        return service.paper(paper_id)

    @app.get("/health", response_model=Health, summary="liveness and corpus size")
    def health():
        return {"status": "ok", "statements": service.searcher.size}

    @app.get("/", include_in_schema=False)
    def search_page():
        return FileResponse(STATIC_DIR / "index.html")

    @app.get("/statement", include_in_schema=False)
    def statement_page():
        return FileResponse(STATIC_DIR / "statement.html")

    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
    if mcp_server:
        app.router.routes.extend(mcp_routes)
    app.openapi = _openapi_without_422(app)
    app.add_middleware(RequestLimits, deadline=body_deadline)
    app.add_middleware(HeadAndOptions)
    if cors_origins:
        app.add_middleware(CORSMiddleware, allow_origins=list(cors_origins), allow_methods=["GET", "POST"],
                           allow_headers=["Content-Type"], max_age=600)
    return app


def _openapi_without_422(app: FastAPI):
    """FastAPI documents a 422 for every operation; this app answers validation errors 400."""
    original = app.openapi

    def openapi():
        if app.openapi_schema is None:
            schema = original()
            for operations in schema["paths"].values():
                for operation in operations.values():
                    operation.get("responses", {}).pop("422", None)
            for name in ("HTTPValidationError", "ValidationError"):
                schema.get("components", {}).get("schemas", {}).pop(name, None)
        return app.openapi_schema

    return openapi
