"""Theorem search over an open catalog: exact vector, lexical BM25, hybrid (RRF), optional reranking.

The theorems joined with their papers are materialized once into an in-memory DuckDB table
(`search_corpus`), so repeated queries (serve, eval) scan memory rather than re-reading Parquet.
Vector search is exact by default: the cosine with every stored embedding (`retrieval.vectors`
holds them, normalized and split for speed), ordered with LIMIT k. Lexical search is BM25 from
DuckDB's fts extension; `approximate=N` answers vector queries from an HNSW index (vss) instead.
"""
from __future__ import annotations

import dataclasses
import functools
from typing import Optional, Sequence

import duckdb
import numpy as np

from retrieval import approx, lexical, vectors
from retrieval.catalog import Catalog
from retrieval.filters import Filters, where_sql
from schemas.errors import UsageError

MODES = ("vector", "lexical", "hybrid")
REPRESENTATIONS = {"description": "embedding", "statement": "statement_embedding"}
RRF_K = 60                 # reciprocal-rank fusion constant (Cormack et al.)
FUSION_DEPTH = 100         # candidates taken from each ranking before fusing or reranking
SNIPPET_CHARS = 240


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

    @property
    def name(self) -> str:
        """"Theorem 2.3 (Title)": display name with number, or tag, and title when present."""
        head = " ".join(x for x in (self.display_name or self.kind.capitalize(), self.number or self.tag) if x)
        return f"{head} ({self.title})" if self.title else head


_HIT_COLUMNS = ("theorem_id", "paper_id", "source", "kind", "display_name", "number", "title", "label",
                "tag", "paper_title", "authors", "year", "url", "snippet_text")


def snippet(text: Optional[str], limit: int = SNIPPET_CHARS) -> str:
    text = " ".join((text or "").split())
    if len(text) <= limit:
        return text
    cut = text.rfind(" ", 0, limit)
    return text[: cut if cut > limit // 2 else limit] + " …"


def materialize(con: duckdb.DuckDBPyConnection) -> int:
    """Build `search_corpus` (theorems joined with papers, one dense `doc` id each); its row count.
    Embeddings stay out of it: `Searcher` loads one representation's vectors when a query needs them."""
    con.execute("""
        CREATE OR REPLACE TEMP TABLE search_corpus AS
        WITH p AS (
            SELECT * FROM papers QUALIFY row_number() OVER (PARTITION BY paper_id ORDER BY source_id) = 1
        )
        SELECT (row_number() OVER (ORDER BY t.theorem_id, t.paper_id, t.source) - 1)::INTEGER AS doc,
               t.theorem_id, t.paper_id, t.source, t.year, t.kind, t.display_name, t.number, t.title,
               t.label, t.tag, t.statement_text, t.description,
               coalesce(t.url, p.url) AS url, p.title AS paper_title, coalesce(p.authors, []) AS authors,
               lower(array_to_string(coalesce(p.authors, []), ' | ')) AS authors_key,
               list_distinct(list_concat(coalesce(p.categories, []),
                             list_transform(coalesce(p.categories, []), lambda c: split_part(c, '.', 1)))) AS category_keys,
               coalesce(t.statement_text, t.statement_latex, '') AS snippet_text,
               -- the text describer's description already holds title and statement: index it once
               CASE WHEN contains(t.description, t.statement_text) THEN concat_ws(' ', t.description, p.title)
                    ELSE concat_ws(' ', t.title, t.statement_text, t.description, p.title) END AS lexical_text
        FROM theorems t LEFT JOIN p USING (paper_id)
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


@functools.lru_cache(maxsize=4)
def _encoder_for(config):
    """One loaded model per configuration and process (searchers over the same corpus share it)."""
    from transforms.embed.encoder import Encoder

    return Encoder(config)


class Searcher:
    """Searches one catalog; the query encoder and the lexical index are built on first use."""

    def __init__(self, catalog: Catalog, *, query_model: Optional[str] = None,
                 representation: str = "description", reranker=None, rerank_depth: int = 50,
                 approximate: Optional[int] = None, lexical_weight: float = 1.0):
        if representation not in REPRESENTATIONS:
            raise UsageError(f"representation: choose one of {', '.join(REPRESENTATIONS)}")
        self.catalog = catalog
        self.con = catalog.con
        self.column = REPRESENTATIONS[representation]
        self.representation = representation
        self.query_model = query_model
        self.reranker = reranker
        self.rerank_depth = rerank_depth
        self.approximate = approximate      # shortlist taken from the HNSW index; None: exact search
        self.lexical_weight = lexical_weight  # weight of the BM25 ranking in hybrid fusion (vector: 1)
        self._vectors: Optional[vectors.VectorTable] = None    # exact search's table
        self._vector_index: Optional[str] = None                # the table vector queries read
        self._encoder = None
        self._lexical_ready = False
        try:
            self.size = materialize(self.con)
        except duckdb.Error as exc:
            raise UsageError(f"{catalog.root}: cannot read theorems ({exc})") from None

    # --- query embedding -------------------------------------------------------------------
    @property
    def encoder(self):
        if self._encoder is None:
            self._encoder = self._load_encoder()
        return self._encoder

    def _load_encoder(self):
        info = self.catalog.embedding
        if info is None:
            raise UsageError("this corpus has no embeddings (manifest.json has no 'embedding'); use --mode lexical")
        from transforms.embed.encoder import EncoderConfig, resolve_model_path

        if self.query_model and resolve_model_path(self.query_model) != resolve_model_path(info.model):
            raise UsageError(f"query model {self.query_model!r} differs from the corpus's model {info.model!r}: "
                             "its vectors would not be comparable")
        try:
            encoder = _encoder_for(EncoderConfig(model=info.model, query_prompt=info.query_prompt,
                                                 document_prompt=info.document_prompt, normalize=info.normalize))
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
            return [(int(d), float(s)) for d, s in self.con.execute(sql, params).fetchall()]
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

    def _build_vector_index(self) -> str:
        """The table vector queries scan (exact) or probe (HNSW), built on first use; its name."""
        if self._vector_index is None:
            docs, matrix = self._unit_vectors()
            if self.approximate:
                approx.build_index(self.con, f"hnsw_{self.column}", docs, matrix)
                self._vector_index = f"hnsw_{self.column}"
            else:
                self._vectors = vectors.register(self.con, f"vectors_{self.column}", docs, matrix)
                self._vector_index = self._vectors.name
        return self._vector_index

    def _build_lexical_index(self) -> None:
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
                self._build_vector_index()
        self._build_lexical_index()

    def _restrict(self, filters: Filters, alias: str) -> tuple[str, list]:
        """A condition keeping `alias.doc` to rows that pass the filters ("true" without filters)."""
        where, params = where_sql(filters)
        if where == "true":
            return where, params
        return f"{alias}.doc IN (SELECT c.doc FROM search_corpus c WHERE {where})", params

    def vector_ranking(self, query: str, k: int, filters: Filters, vector: Optional[list[float]] = None):
        vector = vector if vector is not None else self.embed_query(query)
        if not self.size:
            return []
        if self.approximate:
            return self._approximate_ranking(vector, k, filters)
        self._build_vector_index()
        restrict, params = self._restrict(filters, "v")
        try:
            query_parts = self._vectors.query_params(vector)
        except ValueError as exc:
            raise UsageError(f"search failed: {exc}") from None
        return self._run(self._vectors.topk_sql(k, restrict), query_parts + params)

    def _approximate_ranking(self, vector: list[float], k: int, filters: Filters):
        """The `approximate` nearest rows by the HNSW index, filtered, best k."""
        table = self._build_vector_index()
        shortlist = max(int(self.approximate), k)
        restrict, params = self._restrict(filters, "s")
        query = vectors.unit(vector).tolist()
        sql = (f"SELECT s.doc, s.score FROM ({approx.shortlist_sql(table, len(query), shortlist)}) s "
               f"WHERE {restrict} ORDER BY s.score DESC, s.doc LIMIT {int(k)}")
        return self._run(sql, [query] + params)

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
        texts = dict(self.con.execute(
            "SELECT doc, coalesce(description, snippet_text) FROM search_corpus WHERE list_contains(?, doc)",
            [docs]).fetchall())
        scores = self.reranker.score(query, [texts[d] for d in docs])
        return sorted(zip(docs, scores), key=lambda item: -item[1])

    # --- results -----------------------------------------------------------------------------
    def hits(self, ranked) -> list[Hit]:
        if not ranked:
            return []
        docs = [d for d, _ in ranked]
        rows = self.con.execute(
            f"SELECT doc, {', '.join(_HIT_COLUMNS)} FROM search_corpus WHERE list_contains(?, doc)", [docs]
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
