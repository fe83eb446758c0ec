"""The SQL BM25 index: tokens, IDF and scores against a hand computation."""
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
        (2, 'Closed groups; the groups are abelian.'),
        (3, NULL)) t(doc, lexical_text)""")
    lexical.build_index(con)
    return con


def test_tokens_are_lowercased_stemmed_and_stopword_free(con):
    assert lexical.query_tokens(con, "The Closed SETS of Abélian groups, closing!") == ["clos", "set", "abelian", "group"]
    assert lexical.query_tokens(con, "") == []


def test_bm25_scores_match_the_formula(con):
    terms = lexical.query_tokens(con, "compact closed")
    scores = dict(con.execute(lexical.scored_docs_sql(), {"terms": terms}).fetchall())
    lengths = {0: 4, 1: 5, 2: 4, 3: 0}      # tokens left after stopwords ("every", "a", "of", "is", "the", "are")
    avgdl = sum(lengths.values()) / 4
    n = 4

    def term(tf, df, dl):
        idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
        return idf * tf * (lexical.K1 + 1) / (tf + lexical.K1 * (1 - lexical.B + lexical.B * dl / avgdl))

    assert set(scores) == {1, 2}
    assert scores[1] == pytest.approx(term(2, 1, 5) + term(1, 2, 5))
    assert scores[2] == pytest.approx(term(1, 2, 4))
