"""BM25 through DuckDB's fts extension: stemming, stopwords, accents and scores against a hand computation."""
import math

import duckdb
import pytest

from retrieval import lexical


@pytest.fixture()
def con():
    con = duckdb.connect()
    con.execute("""CREATE TEMP TABLE search_corpus AS SELECT * FROM (VALUES
        (0, 'Every bounded monotone sequence converges.'),
        (1, 'A closed subset of a compact space is compact.'),
        (2, 'Closed groups; the groups are abélian.'),
        (3, NULL)) t(doc, lexical_text)""")
    lexical.build_index(con)
    return con


def scores(con, query):
    return dict(con.execute(lexical.scored_docs_sql(), [query]).fetchall())


def test_bm25_scores_match_the_formula(con):
    lengths = {0: 4, 1: 5, 2: 4, 3: 0}      # terms left after English stopwords ("every", "a", "of", "is", ...)
    avgdl, n = sum(lengths.values()) / 4, 4

    def term(tf, df, dl):
        idf = math.log10(1 + (n - df + 0.5) / (df + 0.5))      # fts takes DuckDB's log(), base 10
        return idf * tf * (lexical.K1 + 1) / (tf + lexical.K1 * (1 - lexical.B + lexical.B * dl / avgdl))

    got = scores(con, "compact closed")
    assert set(got) == {1, 2}
    assert got[1] == pytest.approx(term(2, 1, 5) + term(1, 2, 5))
    assert got[2] == pytest.approx(term(1, 2, 4))


def test_queries_are_stemmed_lowercased_and_accent_free_like_documents(con):
    assert set(scores(con, "ABELIAN Grouping")) == {2}
    assert set(scores(con, "converging sequences")) == {0}


def test_stopword_only_and_empty_queries_match_nothing(con):
    assert scores(con, "the of and is") == {}
    assert scores(con, "") == {}


def test_rebuilding_replaces_the_index(con):
    con.execute("UPDATE search_corpus SET lexical_text = 'a compact group' WHERE doc = 0")
    lexical.build_index(con)
    assert set(scores(con, "compact")) == {0, 1}
