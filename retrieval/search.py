"""Theorem search over an open catalog: vector, lexical BM25, hybrid (RRF), optional reranking.

With a current index (`DIR/index/`, built by `thmforge index` or `build-corpus`), the search table
and its BM25 index are read from `search.duckdb` (paged from disk, not rebuilt), hits and filters
on kind, source, category and year from its sidecar files (`retrieval.sidecar`), and vector queries
go to the memory-mapped IVF-PQ index with exact re-scoring (`retrieval.vector_index`); `exact=True`
scans every stored vector instead (the recall reference). Without an index (a small corpus, or one
changed since it was indexed), the theorems joined with their papers are materialized into an
in-memory table (`search_corpus`), vector search is exact over the stored embeddings
(`retrieval.vectors`) and the BM25 index is built on first use.

A searcher may be used from many threads at once: each thread queries through its own cursor of
the searcher's connection (DuckDB runs them concurrently on one database, so every table and index
lives in that database, never in one connection's temp schema), and what is loaded on first use is
loaded once, under a lock.
"""
from __future__ import annotations

import collections
import dataclasses
import functools
import threading
from typing import Optional, Sequence

import duckdb
import numpy as np

from retrieval import extensions, lexical, sidecar, vector_index, vectors
from retrieval.catalog import Catalog, spill_directory
from retrieval.filters import Filters, where_sql
from schemas.errors import UsageError

MODES = ("vector", "lexical", "hybrid")
REPRESENTATIONS = {"description": "embedding", "statement": "statement_embedding"}
RRF_K = 60                 # reciprocal-rank fusion constant (Cormack et al.)
FUSION_DEPTH = 100         # candidates taken from each ranking before fusing or reranking
LEXICAL_WEIGHT = 0.25      # BM25's weight in hybrid fusion: best on the tuning sets (benchmarks/retrieval_quality.py)
# Queries are embedded from at most their first QUERY_TOKENS tokens (the model's own maximum where
# lower); statements keep the model's max_seq_length (256 for all-MiniLM-L6-v2). Both packaged
# models, all-MiniLM-L6-v2 and all-mpnet-base-v2, were trained on sequences cut at 128 tokens (their
# model cards), so a longer query's tail is text the model never learnt to pool, and the forward pass
# grows with length: pasted paragraphs' embedding at the 95th percentile, 40.6 CPU-ms at 256 tokens,
# is 29.8 at 128 (docs/vector_index.md; the quality cost: docs/retrieval_quality.md, "Query length").
QUERY_TOKENS = 128
SNIPPET_CHARS = 240
# DuckDB's buffer pool over an index's search.duckdb (its default, 80% of RAM, let serve keep the
# pages of the table it scanned for filters and hits: 826 MB anonymous at 10M rows, 263 at 1M);
# past the cap, pages are evicted and read again, and a large sort spills to a private directory
SEARCH_MEMORY = "512MB"
FILTER_CACHE_BYTES = 64 << 20   # bitmaps (1 bit a doc) and allowed doc ids (8 B each) of recent filters


class FilterCache:
    """What recent filters over a persisted index allow: the faiss bitmap and its count, the doc
    ids when listed; least recently used first out past `max_bytes`. A filter is a combination of
    the index's doc sets (or a scan of the search table), the same answer every time for an index
    that does not change, and a served corpus sees the same few filters again and again. Safe from
    many threads (two threads missing the same filter both compute it; the entries are read-only)."""

    def __init__(self, max_bytes: int = FILTER_CACHE_BYTES):
        self.max_bytes = max_bytes
        self._entries: collections.OrderedDict[Filters, dict] = collections.OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, filters: Filters, key: str, compute) -> np.ndarray:
        """The entry's `key` ("docs" or "bitmap") for `filters`, from `compute()` when not kept yet."""
        with self._lock:
            entry = self._entries.get(filters)
            if entry is not None:
                self._entries.move_to_end(filters)
                if key in entry:
                    return entry[key]
        value = compute()
        value.flags.writeable = False
        with self._lock:
            entry = self._entries.setdefault(filters, {})
            if key not in entry:
                entry[key] = value
                self._bytes += value.nbytes
            while self._bytes > self.max_bytes and self._entries:
                _, dropped = self._entries.popitem(last=False)
                self._bytes -= sum(v.nbytes for v in dropped.values())
        return value


@dataclasses.dataclass
class Hit:
    rank: int
    score: float
    theorem_id: str
    paper_id: str
    source: str
    kind: str
    display_name: Optional[str]
    number: Optional[str]
    title: Optional[str]
    label: Optional[str]
    tag: Optional[str]
    paper_title: Optional[str]
    authors: list[str]
    year: Optional[int]
    url: Optional[str]
    snippet: str
    used_by: int = 0          # statements with a `uses` edge to this one (the edges table)

    @property
    def name(self) -> str:
        """"Theorem 2.3 (Title)": display name with number, or tag, and title when present."""
        head = " ".join(x for x in (self.display_name or self.kind.capitalize(), self.number or self.tag) if x)
        return f"{head} ({self.title})" if self.title else head


_HIT_COLUMNS = ("theorem_id", "paper_id", "source", "kind", "display_name", "number", "title", "label",
                "tag", "paper_title", "authors", "year", "url", "snippet_text", "used_by")


def snippet(text: Optional[str], limit: int = SNIPPET_CHARS) -> str:
    text = " ".join((text or "").split())
    if len(text) <= limit:
        return text
    cut = text.rfind(" ", 0, limit)
    return text[: cut if cut > limit // 2 else limit] + " …"


def write_sidecars(con: duckdb.DuckDBPyConnection, directory, doc_count: int, suffix: str = "") -> None:
    """Write the sidecar files of `search_corpus` (`retrieval.sidecar`: the hits' display rows, the
    text cut to what the snippet needs, and the filter values' doc sets) into `directory`, each
    name + `suffix`, and their token into the table's database."""
    token = sidecar.new_token()
    columns = [sidecar.snippet_source(c, SNIPPET_CHARS) if c == "snippet_text" else c for c in _HIT_COLUMNS]
    sidecar.write_hits(con, directory / (sidecar.HITS_FILE + suffix), columns, doc_count, token)
    sidecar.write_filters(con, directory / (sidecar.FILTERS_FILE + suffix), doc_count, token)
    sidecar.keep_token(con, token)


def materialize(con: duckdb.DuckDBPyConnection, *, theorems: str = "theorems", doc: Optional[str] = None,
                persistent: bool = False) -> int:
    """Build `search_corpus` (theorems joined with papers, one `doc` id each); its row count.
    `doc` is the id expression over alias `t` (default: dense, by theorem id); `persistent` writes
    a table of the connection's database (the index's `search.duckdb`) rather than a temp table.
    Embeddings stay out of it: vectors are read only when a query needs them. `used_by` counts the
    statements that use each one, from the `edges` view when there is one."""
    has_edges = con.execute("SELECT count(*) FROM duckdb_views() WHERE view_name = 'edges'").fetchone()[0] > 0
    uses = ("SELECT dst_theorem_id AS theorem_id, count(DISTINCT src_theorem_id) AS used_by FROM edges "
            "WHERE relation = 'uses' AND dst_theorem_id IS NOT NULL AND src_theorem_id <> dst_theorem_id GROUP BY 1"
            if has_edges else "SELECT NULL::VARCHAR AS theorem_id, 0 AS used_by WHERE false")
    doc = doc or "(row_number() OVER (ORDER BY t.theorem_id, t.paper_id, t.source) - 1)::INTEGER"
    con.execute(f"""
        CREATE OR REPLACE {"TABLE" if persistent else "TEMP TABLE"} search_corpus AS
        WITH p AS (     -- what comes from the paper, computed once a paper rather than once a statement
            SELECT paper_id, url, title, coalesce(authors, []) AS authors,
                   lower(array_to_string(coalesce(authors, []), ' | ')) AS authors_key,
                   list_distinct(list_concat(coalesce(categories, []),
                                 list_transform(coalesce(categories, []), lambda c: split_part(c, '.', 1)))) AS category_keys
            FROM papers QUALIFY row_number() OVER (PARTITION BY paper_id ORDER BY source_id) = 1
        ), u AS ({uses})
        SELECT {doc} AS doc,
               t.theorem_id, t.paper_id, t.source, t.year, t.kind, t.display_name, t.number, t.title,
               t.label, t.tag, t.statement_text, t.description,
               coalesce(t.url, p.url) AS url, p.title AS paper_title, coalesce(p.authors, []) AS authors,
               coalesce(p.authors_key, '') AS authors_key, coalesce(p.category_keys, []) AS category_keys,
               coalesce(t.statement_text, t.statement_latex, '') AS snippet_text,
               coalesce(u.used_by, 0)::INTEGER AS used_by,
               -- the text describer's description already holds title and statement: index it once
               CASE WHEN contains(t.description, t.statement_text) THEN concat_ws(' ', t.description, p.title)
                    ELSE concat_ws(' ', t.title, t.statement_text, t.description, p.title) END AS lexical_text
        FROM {theorems} t LEFT JOIN p USING (paper_id) LEFT JOIN u USING (theorem_id)
        {"ORDER BY doc" if persistent else ""}
    """)
    return con.execute("SELECT count(*) FROM search_corpus").fetchall()[0][0]


def fuse(rankings: Sequence[Sequence[int]], k: int = RRF_K,
         weights: Optional[Sequence[float]] = None) -> list[tuple[int, float]]:
    """Reciprocal-rank fusion of ranked doc lists, each optionally weighted: (doc, score) best first,
    ties by first appearance."""
    scores: dict[int, float] = {}
    for ranking, weight in zip(rankings, weights or [1.0] * len(rankings)):
        for position, doc in enumerate(ranking, start=1):
            scores[doc] = scores.get(doc, 0.0) + weight / (k + position)
    return sorted(scores.items(), key=lambda item: -item[1])


@functools.cache
def _search_db_config() -> dict:
    """The configuration of every connection to an index's search.duckdb in this process (DuckDB
    refuses a second connection to an open database with another one)."""
    return {"memory_limit": SEARCH_MEMORY, "temp_directory": spill_directory()}


@functools.lru_cache(maxsize=4)
def _encoder_for(config):
    """One loaded model per configuration and process (searchers over the same corpus share it)."""
    from transforms.embed.encoder import Encoder

    return Encoder(config)


class Searcher:
    """Searches one catalog; the query encoder (and, without an index, the lexical index) on first use.
    `lean_encoder`: embed queries with `retrieval.query_encoder` (NumPy, no torch) when the model
    allows: `search`, `serve` and `mcp` (as fast as torch on one thread, 700 MB less memory).
    `query_tokens`: queries are embedded from at most this many tokens (QUERY_TOKENS)."""

    def __init__(self, catalog: Catalog, *, query_model: Optional[str] = None,
                 representation: str = "description", reranker=None, rerank_depth: int = 50,
                 exact: bool = False, lexical_weight: float = LEXICAL_WEIGHT, lean_encoder: bool = False,
                 query_tokens: int = QUERY_TOKENS):
        if representation not in REPRESENTATIONS:
            raise UsageError(f"representation: choose one of {', '.join(REPRESENTATIONS)}")
        self.catalog = catalog
        self.column = REPRESENTATIONS[representation]
        self.representation = representation
        self.query_model = query_model
        self.reranker = reranker
        self.rerank_depth = rerank_depth
        self.exact = exact
        self.lean_encoder = lean_encoder
        self.query_tokens = query_tokens
        self.lexical_weight = lexical_weight  # weight of the BM25 ranking in hybrid fusion (vector: 1)
        self._vectors: Optional[vectors.VectorTable] = None    # in-memory exact search's table
        self._index: Optional[vector_index.VectorIndex] = None
        self._encoder = None
        self._loading = threading.RLock()       # what is loaded on first use, once
        self._local = threading.local()         # each thread's cursor
        try:
            self.shards = vector_index.fresh_plan(catalog.root)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        self.filter_cache = FilterCache()
        self.hit_store: Optional[sidecar.HitStore] = None
        self.filter_index: Optional[sidecar.FilterIndex] = None
        if self.shards is not None:
            self.con = duckdb.connect(str(catalog.root / vector_index.INDEX_DIR / vector_index.SEARCH_DB),
                                      read_only=True, config=_search_db_config())
            extensions.load(self.con, "fts")
            self._lexical_ready = True      # persisted with the table by the index job
            self.size = self.con.execute("SELECT count(*) FROM search_corpus").fetchall()[0][0]
            self.hit_store, self.filter_index = sidecar.open_sidecars(
                catalog.root / vector_index.INDEX_DIR, self.con, max((s.base + s.rows for s in self.shards), default=0))
            return
        self.con = catalog.con
        self._lexical_ready = False
        catalog.ensure_views()
        try:
            self.size = materialize(self.con, persistent=True)   # in the catalog's in-memory database
        except duckdb.Error as exc:
            raise UsageError(f"{catalog.root}: cannot read theorems ({exc})") from None

    @property
    def indexed(self) -> bool:
        """Whether queries use the persisted index (else the in-memory tables)."""
        return self.shards is not None

    def cursor(self) -> duckdb.DuckDBPyConnection:
        """This thread's connection to the searcher's database (a cursor of `con`, made on first use)."""
        cursor = getattr(self._local, "cursor", None)
        if cursor is None:
            with self._loading:
                cursor = self._local.cursor = self.con.cursor()
        return cursor

    # --- query embedding -------------------------------------------------------------------
    @property
    def encoder(self):
        if self._encoder is None:
            with self._loading:
                if self._encoder is None:
                    self._encoder = self._load_encoder()
        return self._encoder

    def _load_encoder(self):
        info = self.catalog.embedding
        if info is None:
            raise UsageError("this corpus has no embeddings (manifest.json has no 'embedding'); use --mode lexical")
        from transforms.models import resolve_model_path

        if self.query_model and resolve_model_path(self.query_model) != resolve_model_path(info.model):
            raise UsageError(f"query model {self.query_model!r} differs from the corpus's model {info.model!r}: "
                             "its vectors would not be comparable")
        try:
            encoder = None
            if self.lean_encoder:
                from retrieval import query_encoder

                encoder = query_encoder.load(resolve_model_path(info.model), normalize=info.normalize,
                                             prompt=info.query_prompt, max_tokens=self.query_tokens)
            if encoder is None:
                from transforms.embed.encoder import EncoderConfig

                encoder = _encoder_for(EncoderConfig(model=info.model, query_prompt=info.query_prompt,
                                                     document_prompt=info.document_prompt, normalize=info.normalize,
                                                     max_tokens=self.query_tokens))
        except (OSError, ValueError) as exc:
            raise UsageError(f"cannot load the corpus's embedding model {info.model!r}: {exc}") from None
        if encoder.dim != info.dim:
            raise UsageError(f"model {info.model!r} gives {encoder.dim}-d vectors but the corpus stores {info.dim}-d")
        return encoder

    def embed_query(self, query: str) -> list[float]:
        return self.encoder.encode_queries([query])[0].tolist()

    # --- rankings (doc ids best first, with scores) -----------------------------------------
    def _run(self, sql: str, params) -> list[tuple[int, float]]:
        try:
            return [(int(d), float(s)) for d, s in self.cursor().execute(sql, params).fetchall()]
        except duckdb.Error as exc:
            raise UsageError(f"search failed: {exc}") from None

    def _unit_vectors(self) -> tuple[np.ndarray, np.ndarray]:
        """(docs, unit vectors) of this representation, read from the theorems view. A streaming
        join: no sort or window over the vectors (1.5 KB a row), and rows stay in any order."""
        try:
            docs, matrix = vectors.fetch_matrix(self.con, f"""
                SELECT c.doc, t.{self.column} FROM theorems t JOIN search_corpus c USING (theorem_id)
                WHERE t.{self.column} IS NOT NULL""")
        except duckdb.Error as exc:
            raise UsageError(f"stored vectors do not match the manifest's embedding record ({exc})") from None
        if not len(docs):
            raise UsageError(f"no stored vectors in column {self.column!r} for the {self.representation!r} representation")
        unique, first = np.unique(docs, return_index=True)
        if len(unique) < len(docs):         # a theorem id stored twice: keep one vector per doc
            docs, matrix = unique, matrix[first]
        return docs, vectors.normalized(matrix, in_place=True)

    def _vector_table(self) -> vectors.VectorTable:
        """The in-memory table exact search scans, loaded on first use and registered (an Arrow
        table registration belongs to one connection) on this thread's cursor."""
        if self._vectors is None:
            with self._loading:
                if self._vectors is None:
                    docs, matrix = self._unit_vectors()
                    self._vectors = vectors.register(self.con, f"vectors_{self.column}", docs, matrix)
        if getattr(self._local, "vectors", None) is not self._vectors:
            self.cursor().register(self._vectors.name, self._vectors.table)
            self._local.vectors = self._vectors
        return self._vectors

    def _vector_index(self) -> vector_index.VectorIndex:
        """The persisted index of this representation, opened (memory-mapped) on first use."""
        if self._index is not None:
            return self._index
        with self._loading:
            if self._index is None:
                try:
                    self._index = vector_index.open_index(self.catalog.root, self.representation, self.shards)
                except (RuntimeError, ValueError) as exc:
                    raise UsageError(f"cannot open the vector index: {exc}") from None
            if self._index is None:
                raise UsageError(f"the index has no current {self.representation!r} vectors: run "
                                 f"`thmforge index {self.catalog.root} --representation {self.representation}`")
        return self._index

    def _build_lexical_index(self) -> None:
        if self._lexical_ready:
            return
        with self._loading:
            if not self._lexical_ready:
                try:
                    lexical.build_index(self.con)
                except duckdb.Error as exc:
                    raise UsageError(f"cannot build the full-text index: {exc}") from None
                self._lexical_ready = True

    def prepare(self) -> None:
        """Load the query model and build every index now, so that no request pays for it."""
        if self.catalog.embedding:
            self.encoder
            if self.size:
                self._vector_index() if self.indexed else self._vector_table()
        self._build_lexical_index()

    def _restrict(self, filters: Filters, alias: str) -> tuple[str, list]:
        """A condition keeping `alias.doc` to rows that pass the filters ("true" without filters)."""
        where, params = where_sql(filters)
        if where == "true":
            return where, params
        return f"{alias}.doc IN (SELECT c.doc FROM search_corpus c WHERE {where})", params

    def _filter_bitmap(self, filters: Filters) -> Optional[np.ndarray]:
        """The selector bitmap of the docs passing `filters` from the index's filter doc sets (kept
        per filter), or None when those cannot answer them (no filters; authors or papers; no sets)."""
        if self.filter_index is None or filters == Filters() or not self.filter_index.answers(filters):
            return None
        return self.filter_cache.get(filters, "bitmap", lambda: self.filter_index.bitmap(filters))

    def _allowed_docs(self, filters: Filters) -> Optional[np.ndarray]:
        """The sorted doc ids passing `filters` (read-only), or None without filters."""
        where, params = where_sql(filters)
        if where == "true":
            return None
        bitmap = self._filter_bitmap(filters)
        if bitmap is not None:
            return self.filter_cache.get(filters, "docs", lambda: vector_index.bitmap_docs(bitmap))

        def scan() -> np.ndarray:
            try:    # in table order, which is doc order; sorted here only if not (DuckDB's sort cost more)
                rows = self.cursor().execute(f"SELECT doc FROM search_corpus c WHERE {where}", params).fetchnumpy()
            except duckdb.Error as exc:
                raise UsageError(f"search failed: {exc}") from None
            docs = np.asarray(rows["doc"], dtype=np.int64)
            return docs if np.all(docs[1:] > docs[:-1]) else np.unique(docs)

        return self.filter_cache.get(filters, "docs", scan) if self.indexed else scan()

    def vector_ranking(self, query: str, k: int, filters: Filters, vector: Optional[list[float]] = None):
        vector = vector if vector is not None else self.embed_query(query)
        if not self.size:
            return []
        if self.indexed:
            index = self._vector_index()
            if len(vector) != index.dim:
                raise UsageError(f"search failed: query has {len(vector)} dimensions, the index {index.dim}")
            query = np.asarray(vector, dtype=np.float32)
            bitmap = None if self.exact else self._filter_bitmap(filters)
            if bitmap is not None:      # the docs' ids are made from the bitmap only for an exact scan
                count = int(self.filter_cache.get(filters, "count", lambda: np.array(vector_index.bitmap_count(bitmap))))
                if index.probes(count):
                    return index.search(query, k, bitmap=bitmap, allowed_rows=count)
            allowed = self._allowed_docs(filters)
            if self.exact:
                return index.exact(query, k, allowed)
            if allowed is not None and index.probes(len(allowed)):
                bitmap = self.filter_cache.get(filters, "bitmap", lambda: index.selector_bitmap(allowed))
            return index.search(query, k, allowed, bitmap)
        table = self._vector_table()
        restrict, params = self._restrict(filters, "v")
        try:
            query_parts = table.query_params(vector)
        except ValueError as exc:
            raise UsageError(f"search failed: {exc}") from None
        return self._run(table.topk_sql(k, restrict), query_parts + params)

    def lexical_ranking(self, query: str, k: int, filters: Filters):
        self._build_lexical_index()
        restrict, params = self._restrict(filters, "s")
        sql = (f"SELECT s.doc, s.score FROM ({lexical.scored_docs_sql()}) s "
               f"WHERE {restrict} ORDER BY s.score DESC, s.doc LIMIT {int(k)}")
        return self._run(sql, [query] + params)

    def ranking(self, query: str, k: int, filters: Filters, mode: str, vector: Optional[list[float]] = None):
        """(doc, score) best first; `vector` is the query's embedding when the caller has it already."""
        if mode not in MODES:
            raise UsageError(f"mode: choose one of {', '.join(MODES)}")
        depth = max(k, self.rerank_depth if self.reranker else 0)
        if mode == "vector":
            ranked = self.vector_ranking(query, depth, filters, vector)
        elif mode == "lexical":
            ranked = self.lexical_ranking(query, depth, filters)
        else:
            fusion_depth = max(depth, FUSION_DEPTH)
            ranked = fuse([[d for d, _ in self.vector_ranking(query, fusion_depth, filters, vector)],
                           [d for d, _ in self.lexical_ranking(query, fusion_depth, filters)]],
                          weights=(1.0, self.lexical_weight))[:depth]
        if self.reranker:
            ranked = self._rerank(query, ranked[: self.rerank_depth])
        return ranked[:k]

    def _rerank(self, query: str, ranked):
        if not ranked:
            return ranked
        docs = [d for d, _ in ranked]
        texts = dict(self.cursor().execute(
            "SELECT doc, coalesce(description, snippet_text) FROM search_corpus WHERE doc = ANY(?::BIGINT[])",
            [docs]).fetchall())
        scores = self.reranker.score(query, [texts[d] for d in docs])
        return sorted(zip(docs, scores), key=lambda item: -item[1])

    # --- results -----------------------------------------------------------------------------
    def hits(self, ranked) -> list[Hit]:
        if not ranked:
            return []
        docs = [d for d, _ in ranked]
        if self.hit_store is not None:
            by_doc = self.hit_store.records(docs)
        else:
            rows = self.cursor().execute(     # `= ANY` looks up the table's ART on doc (list_contains scans)
                f"SELECT doc, {', '.join(_HIT_COLUMNS)} FROM search_corpus WHERE doc = ANY(?::BIGINT[])", [docs]
            ).fetchall()
            by_doc = {row[0]: row[1:] for row in rows}
        hits = []
        for rank, (doc, score) in enumerate(ranked, start=1):
            values = dict(zip(_HIT_COLUMNS, by_doc[doc]))
            values["snippet"] = snippet(values.pop("snippet_text"))
            values["authors"] = list(values["authors"] or [])
            hits.append(Hit(rank=rank, score=round(score, 6), **values))
        return hits

    def search(self, query: str, k: int = 10, filters: Filters = Filters(), mode: str = "vector") -> list[Hit]:
        return self.hits(self.ranking(query, k, filters, mode))
