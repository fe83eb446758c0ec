"""The web application: JSON API, search page, MCP endpoint, one FastAPI app over one searcher.

  POST /search                  ranked statements (the request model below is the contract)
  GET  /statements/{id}         a statement, its paper, proof, neighbourhood and citation
  GET  /papers/{id}             a paper and its statements
  GET  /health, /openapi.json   liveness; the OpenAPI document generated from the models
  GET  /, /statement            the search page and a statement's page (static files, KaTeX vendored)
  POST /mcp                     the MCP tools of `retrieval.mcp_tools` over streamable HTTP

Every malformed request is a JSON 4xx `{"error": "..."}`: the request models are strict (no
coercion, unknown fields rejected, patterns and bounds in the schema), bodies are capped and read
under a deadline, and no path reaches the engine without a validated request.
"""
from __future__ import annotations

import contextlib
import pathlib
import threading
from typing import Annotated, Literal, Optional, Sequence, get_type_hints

import anyio
import duckdb
from fastapi import FastAPI, Path, Request
from fastapi.exceptions import RequestValidationError
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import FileResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from annotated_types import Ge, Le
from pydantic import AfterValidator, BaseModel, BeforeValidator, Strict, ConfigDict, Field, StringConstraints, create_model
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException as StarletteHTTPException

from retrieval import records
from retrieval.filters import MAX_VALUE_CHARS, MAX_VALUES, make_filters
from retrieval.render import hit_record
from retrieval.search import MODES, Hit as SearchHit, Searcher
from runners.errors import UsageError
from schemas.theorems import KINDS
from transforms.sources import SOURCE_MODULES

STATIC_DIR = pathlib.Path(__file__).with_name("static")
MAX_BODY_BYTES = 64 * 1024
MAX_QUERY_CHARS = 2000
MAX_RESULTS = 100
MAX_ID_CHARS = 500
BODY_DEADLINE_S = 10.0      # a request body trickling in slower than this is answered 408
JSON_PATHS = frozenset({"/search"})


def _no_lone_surrogates(value: str) -> str:
    """Python's JSON decoder accepts "\\ud800"; nothing downstream (tokenizer, DuckDB) can encode it."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("lone surrogate characters are not allowed") from None
    return value


def _whole_number(value):
    """JSON Schema counts 2020.0 as an integer; strict validation still refuses "2020", true and 2020.5."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


# a non-blank value of printable characters (the filters' own checks, stated in the schema)
_PRINTABLE = r"^[^\x00-\x1f\x7f]*[^\s\x00-\x1f\x7f][^\x00-\x1f\x7f]*$"
FilterValue = Annotated[str, StringConstraints(min_length=1, max_length=MAX_VALUE_CHARS, pattern=_PRINTABLE),
                        AfterValidator(_no_lone_surrogates)]
Category = Annotated[str, StringConstraints(max_length=MAX_VALUE_CHARS,
                                            pattern=r"^[A-Za-z][A-Za-z0-9-]*(\.[A-Za-z0-9-]+)?$")]
PaperId = Annotated[str, StringConstraints(max_length=MAX_VALUE_CHARS, pattern=r"^[A-Za-z0-9][A-Za-z0-9._:/+-]*$")]
Year = Annotated[int, Strict(), Ge(1000), Le(9999), BeforeValidator(_whole_number)]
Kind = Literal[KINDS]                  # type: ignore[valid-type]
Source = Literal[tuple(SOURCE_MODULES)]  # type: ignore[valid-type]


def _values(item, description: str):
    return Annotated[Optional[list[item]], Field(default=None, max_length=MAX_VALUES, description=description)]


class SearchRequest(BaseModel):
    """POST /search; the same fields are the parameters of the MCP tool `theorem_search`."""

    model_config = ConfigDict(extra="forbid", strict=True)

    query: Annotated[str, StringConstraints(min_length=1, max_length=MAX_QUERY_CHARS, pattern=r"\S"),
                     AfterValidator(_no_lone_surrogates), Field(description="what to find, in words")]
    n_results: Annotated[int, Strict(), Ge(1), Le(MAX_RESULTS), BeforeValidator(_whole_number)] = 10
    mode: Literal[MODES] = "vector"    # type: ignore[valid-type]
    kinds: _values(Kind, "statement kinds") = None
    sources: _values(Source, "corpus sources") = None
    categories: _values(Category, "arXiv categories (math.AG) or archives (math)") = None
    year_from: Optional[Year] = None
    year_to: Optional[Year] = None
    authors: _values(FilterValue, "author names, case-insensitive substrings; any of them") = None
    paper_ids: _values(PaperId, "paper ids such as arxiv:2101.00001") = None

    def filters(self):
        return make_filters(kinds=self.kinds, sources=self.sources, categories=self.categories,
                            year_from=self.year_from, year_to=self.year_to, authors=self.authors,
                            paper_ids=self.paper_ids)


# a search hit as `retrieval.render.hit_record` writes it: the searcher's fields and the display name
Hit = create_model("Hit", name=(str, ...), **{field: (hint, ...) for field, hint in get_type_hints(SearchHit).items()})


class SearchResponse(BaseModel):
    results: list[Hit]
    mode: str
    n_results: int


class Error(BaseModel):
    error: str


class Health(BaseModel):
    status: Literal["ok"]
    statements: int


class StatementBrief(BaseModel):
    theorem_id: str
    paper_id: str
    kind: str
    name: str
    snippet: str


class Neighbour(StatementBrief):
    method: Optional[str] = Field(description="how the link was found: ref, name, cite, blueprint, text, ...")


class PaperSummary(BaseModel):
    paper_id: str
    title: Optional[str]
    authors: list[str]
    year: Optional[int]
    url: Optional[str]
    categories: list[str]


class Statement(BaseModel):
    theorem_id: str
    paper_id: str
    source: str
    year: Optional[int]
    kind: str
    name: str
    display_name: Optional[str]
    number: Optional[str]
    title: Optional[str]
    label: Optional[str]
    tag: Optional[str]
    section_path: list[str]
    file: Optional[str]
    line: Optional[int]
    statement_latex: Optional[str]
    statement_text: Optional[str]
    proof_latex: Optional[str]
    url: Optional[str]
    paper: Optional[PaperSummary]
    uses: list[Neighbour] = Field(description="statements this one relies on")
    used_by: list[Neighbour] = Field(description="statements that rely on this one")
    restatements: list[Neighbour] = Field(description="the same result stated elsewhere")
    citation: str


class Edge(BaseModel):
    src_theorem_id: str
    dst_theorem_id: Optional[str]
    relation: str
    method: Optional[str]


class Paper(PaperSummary):
    source: str
    source_id: Optional[str]
    version: Optional[str]
    primary_category: Optional[str]
    abstract: Optional[str]
    license: Optional[str]
    doi: Optional[str]
    statements: list[StatementBrief]
    edges: list[Edge]


class NotFound(Exception):
    pass


class SearchService:
    """The searcher behind the app and the MCP tools, safe to call from many threads.

    Lookups use a DuckDB cursor per thread and run concurrently. A search holds the encoder only
    while embedding its query and the searcher's connection only while ranking (its in-memory
    tables and indexes are local to that one connection), so one request's embedding overlaps
    another's ranking."""

    def __init__(self, searcher: Searcher):
        self.searcher = searcher
        self._encoder_lock = threading.Lock()
        self._engine_lock = threading.Lock()
        self._local = threading.local()

    def _cursor(self) -> duckdb.DuckDBPyConnection:
        cursor = getattr(self._local, "cursor", None)
        if cursor is None:
            cursor = self._local.cursor = self.searcher.catalog.con.cursor()
        return cursor

    def search(self, request: SearchRequest) -> dict:
        if request.year_from is not None and request.year_to is not None and request.year_from > request.year_to:
            return {"results": [], "mode": request.mode, "n_results": 0}   # schema-valid: an empty range, no hits
        filters = request.filters()
        query = request.query.strip()
        vector = None
        if request.mode != "lexical":
            with self._encoder_lock:
                vector = self.searcher.embed_query(query)
        with self._engine_lock:
            hits = self.searcher.hits(self.searcher.ranking(query, request.n_results, filters, request.mode,
                                                            vector=vector))
        return {"results": [hit_record(h) for h in hits], "mode": request.mode, "n_results": len(hits)}

    def statement(self, theorem_id: str) -> dict:
        found = records.statement(self._cursor(), theorem_id)
        if found is None:
            raise NotFound(f"no statement {theorem_id[:200]!r}")
        return found

    def paper(self, paper_id: str) -> dict:
        found = records.paper(self._cursor(), paper_id)
        if found is None:
            raise NotFound(f"no paper {paper_id[:200]!r}")
        return found

    def neighbours(self, theorem_id: str) -> dict:
        self.statement(theorem_id)
        return records.neighbours(self._cursor(), theorem_id)


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
               worker_threads: int = 8, body_deadline: float = BODY_DEADLINE_S) -> FastAPI:
    """The application; `mcp_host` (the address served, for the MCP transport's DNS-rebinding
    check) None leaves the MCP endpoint out."""
    mcp_server = None
    if mcp_host is not None:
        from retrieval.mcp_tools import build_mcp_server

        mcp_server = build_mcp_server(service)
        mcp_routes = mcp_server.streamable_http_app(streamable_http_path="/mcp", host=mcp_host).routes

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI):
        anyio.to_thread.current_default_thread_limiter().total_tokens = worker_threads   # the bounded pool
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
