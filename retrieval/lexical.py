"""BM25 over statement text, description and titles, as SQL tables inside DuckDB.

DuckDB's `fts` extension is not bundled with the 2.0.1 wheels and `INSTALL fts` needs the network,
so the inverted index is built here with plain SQL: one postings table (term, doc, tf), document
lengths and per-term IDF. Queries are tokenized by the same SQL expression as documents, so both
sides always agree on tokens and on the light suffix-stripping stemmer.
"""
from __future__ import annotations

import duckdb

K1 = 1.2
B = 0.75

STOPWORDS = (
    "a an and are as at be but by for from has have if in into is it its of on or such that the "
    "their then there these this to was we where which with let any all each every there exists "
    "exist some given our us one two"
).split()


def tokens_sql(text_expr: str) -> str:
    """SQL list of normalized tokens of `text_expr`: lower case, accents stripped, suffixes cut."""
    words = (f"string_split_regex(trim(regexp_replace(lower(strip_accents({text_expr})), "
             f"'[^a-z0-9]+', ' ', 'g')), ' ')")
    return (f"list_transform(list_filter({words}, lambda w: length(w) >= 2 AND NOT list_contains($stopwords, w)), "
            f"lambda w: CASE WHEN length(w) > 4 THEN regexp_replace(regexp_replace(w, '(ies|ied)$', 'y'), "
            f"'(ness|ing|ed|es|ly|e|s)$', '') WHEN length(w) = 4 THEN regexp_replace(w, '([^s])s$', '\\1') "
            f"ELSE w END)")


def build_index(con: duckdb.DuckDBPyConnection, corpus: str = "search_corpus") -> None:
    """Create `lex_postings`, `lex_docs` and `lex_terms` from `corpus` (columns doc and lexical_text)."""
    tokens = tokens_sql("lexical_text")
    con.execute(f"""
        CREATE OR REPLACE TEMP TABLE lex_doc_tokens AS
        SELECT doc, coalesce({tokens}, []) AS toks FROM {corpus}
    """, {"stopwords": STOPWORDS})
    con.execute("""
        CREATE OR REPLACE TEMP TABLE lex_docs AS SELECT doc, len(toks)::DOUBLE AS len FROM lex_doc_tokens
    """)
    con.execute("""
        CREATE OR REPLACE TEMP TABLE lex_postings AS
        SELECT term, doc, count(*)::DOUBLE AS tf
        FROM (SELECT doc, unnest(toks) AS term FROM lex_doc_tokens)
        GROUP BY term, doc
    """)
    con.execute("DROP TABLE lex_doc_tokens")
    con.execute("""
        CREATE OR REPLACE TEMP TABLE lex_terms AS
        WITH n AS (SELECT count(*)::DOUBLE AS n FROM lex_docs)
        SELECT term, count(*) AS df, ln(1 + (n.n - count(*) + 0.5) / (count(*) + 0.5)) AS idf
        FROM lex_postings, n GROUP BY term, n.n
    """)
    con.execute("""
        CREATE OR REPLACE TEMP TABLE lex_stats AS SELECT coalesce(avg(len), 1) AS avgdl FROM lex_docs
    """)


def query_tokens(con: duckdb.DuckDBPyConnection, text: str) -> list[str]:
    """The query's tokens, as the index sees them."""
    row = con.execute(f"SELECT {tokens_sql('$q')}", {"q": text, "stopwords": STOPWORDS}).fetchall()[0]
    return list(dict.fromkeys(row[0] or []))


def scored_docs_sql(terms_param: str = "$terms") -> str:
    """A subquery of (doc, score) by BM25 for the query's token list bound at `terms_param`."""
    return f"""
        SELECT p.doc, sum(t.idf * p.tf * ({K1} + 1) / (p.tf + {K1} * (1 - {B} + {B} * d.len / s.avgdl))) AS score
        FROM lex_terms t
        JOIN lex_postings p ON p.term = t.term
        JOIN lex_docs d ON d.doc = p.doc
        CROSS JOIN lex_stats s
        WHERE list_contains({terms_param}, t.term)
        GROUP BY p.doc
    """
