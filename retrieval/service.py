"""The corpus behind the web application and the MCP tools: request and response models, and one
thread-safe service that answers searches and statement, paper and neighbourhood lookups.

The request model is strict (no coercion, unknown fields rejected, patterns and bounds in its
JSON schema), so the OpenAPI document and the MCP tool schema state exactly what is accepted.
"""
from __future__ import annotations

import concurrent.futures
import queue
import sys
import threading
from typing import Annotated, Callable, Literal, Optional, Sequence, get_type_hints

import duckdb
from annotated_types import Ge, Le
from pydantic import (AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, Strict, StringConstraints,
                      create_model)

from retrieval import records
from retrieval.filters import MAX_VALUE_CHARS, MAX_VALUES, make_filters
from retrieval.query_encoder import usable_cores
from retrieval.render import hit_record
from retrieval.search import MODES, Hit as SearchHit, Searcher
from schemas.theorems import KINDS
from transforms.sources import SOURCE_MODULES

MAX_QUERY_CHARS = 2000
MAX_RESULTS = 100
MAX_EMBED_BATCH = 32    # queries encoded in one forward pass at most


def default_workers() -> int:
    """Request threads: four per usable core (a search waits on its embedding and on DuckDB, whose
    own threads do the work), at least 8 and at most 64."""
    return max(8, min(64, 4 * usable_cores()))


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
    proof_text: Optional[str] = Field(None, description="the proof in plain text (references printed, math kept)")
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


class QueryEmbedder:
    """Embeds the queries of many threads on one encoder thread, in batches: whatever queued while
    the encoder was busy goes through it as one forward pass (up to `max_batch`; duplicates once).
    No waiting for a batch to fill: a lone query is encoded at once. The encoder itself is never
    called from two threads (a fast tokenizer refuses concurrent calls).

    A vector computed in a batch may differ from the same query's vector computed alone in the
    last bit of a float (the matrix shapes differ); `max_batch=1` makes each one alone."""

    def __init__(self, encode: Callable[[Sequence[str]], Sequence], max_batch: int = MAX_EMBED_BATCH):
        if max_batch < 1:
            raise ValueError("max_batch must be at least 1")
        self._encode = encode
        self.max_batch = max_batch
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._thread: Optional[threading.Thread] = None
        self._starting = threading.Lock()

    def submit(self, text: str) -> concurrent.futures.Future:
        """A future of `text`'s vector (a list of floats)."""
        future: concurrent.futures.Future = concurrent.futures.Future()
        self._queue.put((text, future))
        if self._thread is None:
            with self._starting:
                if self._thread is None:
                    self._thread = threading.Thread(target=self._serve, name="query-embedder", daemon=True)
                    self._thread.start()
        return future

    def embed(self, text: str) -> list[float]:
        return self.submit(text).result()

    def _serve(self) -> None:
        while True:
            batch = [self._queue.get()]
            while len(batch) < self.max_batch:
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            self._answer(batch)

    def _answer(self, batch: list) -> None:
        texts = list(dict.fromkeys(text for text, _ in batch))
        try:
            vectors = {text: vector.tolist() for text, vector in zip(texts, self._encode(texts), strict=True)}
        except Exception as exc:        # every waiting request gets the error
            if len(texts) > 1:          # one bad query fails alone, not its batch
                for item in batch:
                    self._answer([item])
                return
            for _, future in batch:
                future.set_exception(exc)
            return
        for text, future in batch:
            future.set_result(vectors[text])


class SearchService:
    """The searcher behind the app and the MCP tools, safe to call from many threads.

    Searches run concurrently: each thread ranks and reads hits through its own cursor of the
    searcher's database (`Searcher.cursor`), faiss and NumPy release the GIL, and query embeddings
    are batched across threads by a `QueryEmbedder`. Lookups use a cursor of the catalog per thread."""

    def __init__(self, searcher: Searcher, *, max_embed_batch: int = MAX_EMBED_BATCH):
        from threadpoolctl import threadpool_limits

        # one BLAS thread for the whole process: a request's products are small (re-scoring a 4%
        # filter at 100k rows is 4,434 x 384), requests run side by side on their own threads, and
        # OpenBLAS's idle threads spin: 16 ms of CPU for a 7 ms re-scoring on a loaded machine
        threadpool_limits(1, user_api="blas")
        # one DuckDB thread a query, for the same reasons: at 1M rows a request's hits cost 2.1 ms
        # of CPU on two threads and 1.3 on one, a filter's scan 2.9 and 2.2, a short BM25 query 9.1
        # and 6.2, in the same wall time on idle cores (within 0.4 ms)
        searcher.con.execute("SET threads = 1")
        self.searcher = searcher
        self.embedder = QueryEmbedder(self._encode_queries, max_embed_batch)
        self._local = threading.local()
        self._views = threading.Lock()

    def _encode_queries(self, texts: Sequence[str]):
        """On the embedder's thread. torch gets one intra-op thread there: a batch of short queries
        gains little from more, and its OpenMP threads waiting for cores that the request threads
        (DuckDB, faiss) hold made a lone query 16 times slower on a loaded 2-core machine."""
        encoder = self.searcher.encoder
        torch = sys.modules.get("torch")
        if torch is not None and torch.get_num_threads() != 1:
            torch.set_num_threads(1)
        return encoder.encode_queries(texts)

    def _cursor(self) -> duckdb.DuckDBPyConnection:
        """This thread's cursor of the catalog, whose views are bound on the first lookup: a search
        answered from the index needs none (at 10M rows, 6,800 files, they held 200 MB and were
        most of the 1.8 s of CPU that opening took)."""
        cursor = getattr(self._local, "cursor", None)
        if cursor is None:
            with self._views:
                self.searcher.catalog.ensure_views()
            cursor = self._local.cursor = self.searcher.catalog.con.cursor()
        return cursor

    def search(self, request: SearchRequest) -> dict:
        if request.year_from is not None and request.year_to is not None and request.year_from > request.year_to:
            return {"results": [], "mode": request.mode, "n_results": 0}   # schema-valid: an empty range, no hits
        filters = request.filters()
        query = request.query.strip()
        vector = self.embedder.embed(query) if request.mode != "lexical" else None
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
