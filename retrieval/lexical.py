"""BM25 through DuckDB's full-text search extension (`fts`).

One field is indexed, `lexical_text` (statement text, description, theorem title and paper title
as `retrieval.search.materialize` joins them), so a word found in both the description and the
statement it paraphrases is not scored as two independent fields. Documents and queries go
through the same Porter stemmer, English stopword list, accent stripping and lower-casing.
"""
from __future__ import annotations

import duckdb

from retrieval import extensions

K1 = 1.2
B = 0.75


def index_schema(corpus: str) -> str:
    """The schema `PRAGMA create_fts_index` fills for table `corpus` (DuckDB's naming)."""
    return f"fts_main_{corpus}"


def build_index(con: duckdb.DuckDBPyConnection, corpus: str = "search_corpus") -> None:
    """Index `corpus(doc, lexical_text)`; replaces an index built over an earlier `corpus`."""
    extensions.load(con, "fts")
    con.execute(f"PRAGMA create_fts_index('{corpus}', 'doc', 'lexical_text', stemmer = 'porter', "
                f"stopwords = 'english', strip_accents = 1, lower = 1, overwrite = 1)")


def scored_docs_sql(corpus: str = "search_corpus", query_param: str = "?") -> str:
    """A subquery of (doc, score) by BM25 for the query text bound at `query_param`: only
    documents sharing at least one term with the query."""
    return (f"SELECT doc, score FROM (SELECT doc, {index_schema(corpus)}.match_bm25(doc, {query_param}, "
            f"k := {K1}, b := {B}) AS score FROM {corpus}) WHERE score IS NOT NULL")

