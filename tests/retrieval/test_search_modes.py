"""Search modes, filters and model checks over a small corpus with real embeddings."""
import json

import duckdb
import pytest

from retrieval.catalog import open_catalog
from retrieval.filters import make_filters, parse_year_range, where_sql
from retrieval.search import Searcher, fuse, materialize, snippet
from schemas.errors import UsageError

from query_corpus import STATEMENTS, write_corpus


@pytest.fixture(scope="module")
def searcher(corpus_dir):
    return Searcher(open_catalog(str(corpus_dir)))


@pytest.mark.parametrize("representation", ["description", "statement"])
def test_own_text_is_top1_in_vector_mode(corpus_dir, representation):
    searcher = Searcher(open_catalog(str(corpus_dir)), representation=representation)
    for _, _, _, label, text in STATEMENTS:
        hits = searcher.search(text, k=3)
        assert hits[0].label == label
        assert hits[0].score == pytest.approx(1.0, abs=1e-4)
        assert hits[0].score >= hits[1].score >= hits[2].score


def test_hit_fields_join_the_paper(searcher):
    hit = searcher.search("compact subset of a Hausdorff space is closed", k=1)[0]
    assert (hit.label, hit.kind, hit.number, hit.paper_id) == ("prop:hausdorff", "proposition", "2.3", "arxiv:1901.00002")
    assert hit.paper_title == "Notes on point-set topology" and hit.authors == ["Felix Hausdorff"]
    assert hit.year == 2019 and hit.url == "https://arxiv.org/abs/1901.00002"
    assert hit.name == "Proposition 2.3" and hit.rank == 1
    assert hit.snippet.startswith("A compact subset")


def test_lexical_ranks_by_bm25(searcher):
    hits = searcher.search("Hausdorff space closed", k=5, mode="lexical")
    assert hits[0].label == "prop:hausdorff"
    assert all(a.score >= b.score for a, b in zip(hits, hits[1:]))
    assert searcher.search("zzzz qqqq", k=5, mode="lexical") == []
    assert searcher.search("the of and", k=5, mode="lexical") == []   # stopwords only


def test_lexical_matches_inflections(searcher):
    labels = [h.label for h in searcher.search("subgroups normality kernels", k=3, mode="lexical")]
    assert labels[0] == "lem:kernel"


def test_hybrid_fuses_both_rankings(searcher):
    hits = searcher.search("kernel of a homomorphism is normal", k=5, mode="hybrid")
    assert hits[0].label == "lem:kernel"
    assert len({h.theorem_id for h in hits}) == len(hits)


def test_fuse_is_reciprocal_rank_fusion():
    fused = fuse([[1, 2, 3], [3, 1]], k=60)
    assert [d for d, _ in fused] == [1, 3, 2]
    assert fused[0][1] == pytest.approx(1 / 61 + 1 / 62)
    weighted = fuse([[1, 2, 3], [3, 1]], k=60, weights=(1.0, 0.01))
    assert [d for d, _ in weighted] == [1, 2, 3]
    assert weighted[2][1] == pytest.approx(1 / 63 + 0.01 / 61)


@pytest.mark.parametrize("mode", ["vector", "lexical", "hybrid"])
def test_filters_hold_for_every_result(searcher, mode):
    cases = [
        (make_filters(kinds=["lemma"]), lambda h: h.kind == "lemma"),
        (make_filters(sources=["latex-project"]), lambda h: h.source == "latex-project"),
        (make_filters(year_from=2016, year_to=2020), lambda h: 2016 <= h.year <= 2020),
        (make_filters(categories=["math"]), lambda h: h.paper_id.startswith("arxiv:")),
        (make_filters(categories=["math.GN"]), lambda h: h.paper_id == "arxiv:1901.00002"),
        (make_filters(authors=["o'riemann", "NOETHER"]), lambda h: h.paper_id in ("arxiv:2101.00001", "latex-project:algebra-notes")),
        (make_filters(paper_ids=["latex-project:algebra-notes"]), lambda h: h.paper_id == "latex-project:algebra-notes"),
    ]
    for filters, holds in cases:
        hits = searcher.search("compact sequence group subgroup series", k=20, filters=filters, mode=mode)
        assert hits, filters
        assert all(holds(h) for h in hits), filters
    assert searcher.search("group", k=5, filters=make_filters(year_from=2030), mode=mode) == []


def test_filter_values_are_bound_never_spliced():
    sql, params = where_sql(make_filters(authors=["x') OR true --"], kinds=["lemma"]))
    assert "OR true" not in sql and params == [["lemma"], "x') or true --"]


@pytest.mark.parametrize("kwargs, message", [
    (dict(kinds=["theorem'; DROP TABLE theorems; --"]), "kind"),
    (dict(sources=["arxiv OR 1=1"]), "source"),
    (dict(categories=["math.AG'--"]), "category"),
    (dict(paper_ids=["x' OR '1'='1"]), "paper_id"),
    (dict(authors=["a\x00b"]), "control"),
    (dict(authors=["x" * 500]), "longer"),
    (dict(kinds="theorem"), "list"),
    (dict(year_from=2020, year_to=2010), "empty"),
    (dict(year_from="2020"), "year"),
    (dict(kinds=["lemma"] * 51), "at most"),
])
def test_bad_filters_are_usage_errors(kwargs, message):
    with pytest.raises(UsageError, match=message):
        make_filters(**kwargs)


def test_year_ranges():
    assert parse_year_range("2015:2020") == (2015, 2020)
    assert parse_year_range("2015:") == (2015, None)
    assert parse_year_range(":2020") == (None, 2020)
    assert parse_year_range("2018") == (2018, 2018)
    for bad in ("20x", "1:2", "2020:abc", "2015-2020"):
        with pytest.raises(UsageError):
            parse_year_range(bad)


def test_query_model_must_match_corpus(corpus_dir):
    with pytest.raises(UsageError, match="differs from the corpus"):
        Searcher(open_catalog(str(corpus_dir)), query_model="intfloat/e5-small").search("x")
    # the packaged model under its other names is the same model
    Searcher(open_catalog(str(corpus_dir)), query_model="all-MiniLM-L6-v2").search("group", k=1)


def test_dimension_mismatch_is_an_error(tmp_path, encoder, corpus_dir):
    root = write_corpus(tmp_path, encoder)
    manifest = json.loads((root / "manifest.json").read_text())
    manifest["embedding"]["dim"] = 768
    (root / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(UsageError):
        Searcher(open_catalog(str(root))).search("group")


def test_corpus_without_embeddings_allows_lexical_only(tmp_path, encoder):
    root = write_corpus(tmp_path, encoder)
    (root / "manifest.json").write_text(json.dumps({"embedding": None}))
    searcher = Searcher(open_catalog(str(root)))
    with pytest.raises(UsageError, match="no embeddings"):
        searcher.search("group", mode="vector")
    assert searcher.search("finite group subgroup order", k=1, mode="lexical")[0].label == "thm:lagrange"


def test_directory_without_theorems_gives_no_results(tmp_path):
    (tmp_path / "papers").mkdir()
    searcher = Searcher(open_catalog(str(tmp_path)))
    assert searcher.size == 0
    assert searcher.search("anything", mode="lexical") == []


def test_not_an_output_directory(tmp_path):
    with pytest.raises(UsageError, match="not a thmforge output"):
        open_catalog(str(tmp_path))
    with pytest.raises(UsageError, match="no such directory"):
        open_catalog(str(tmp_path / "missing"))


def test_reranker_orders_the_shortlist_by_its_scores(corpus_dir):
    from retrieval.rerank import CrossEncoderReranker

    # No cross-encoder checkpoint is installed: a CrossEncoder over the packaged MiniLM (fresh
    # scoring head) exercises the mechanics, not the quality.
    reranker = CrossEncoderReranker("all-MiniLM-L6-v2")
    plain = Searcher(open_catalog(str(corpus_dir)))
    reranked = Searcher(open_catalog(str(corpus_dir)), reranker=reranker, rerank_depth=6)
    query = "compact sets"
    shortlist = {h.theorem_id for h in plain.search(query, k=6)}
    hits = reranked.search(query, k=4)
    assert len(hits) == 4 and {h.theorem_id for h in hits} <= shortlist
    texts = {h.theorem_id: h.snippet for h in hits}
    expected = reranker.score(query, [texts[h.theorem_id] for h in hits])
    assert [h.score for h in hits] == pytest.approx(sorted(expected, reverse=True), abs=1e-5)


def test_unloadable_reranker_is_a_usage_error(tmp_path):
    from retrieval.rerank import CrossEncoderReranker

    with pytest.raises(UsageError, match="cannot load cross-encoder"):
        CrossEncoderReranker(str(tmp_path / "no-model"))


def test_snippet_cuts_at_a_word():
    text = "word " * 100
    cut = snippet(text, 50)
    assert len(cut) <= 52 and cut.endswith(" …") and not cut[:-2].endswith(" ")
    assert snippet("  short\n text ") == "short text"


def test_recall_at_k():
    from retrieval.vector_index import recall_at_k

    assert recall_at_k([[1, 2, 3], [4, 5, 6]], [[3, 2, 9], [4, 5, 6]], 3) == pytest.approx((2 / 3 + 1) / 2)


def test_exact_search_matches_numpy_cosine(corpus_dir):
    import numpy as np

    searcher = Searcher(open_catalog(str(corpus_dir)))
    rows = searcher.con.execute("SELECT theorem_id, embedding FROM theorems WHERE embedding IS NOT NULL").fetchall()
    ids, matrix = [r[0] for r in rows], np.array([r[1] for r in rows], dtype=np.float64)
    query = "every continuous function on a compact set is bounded"
    q = np.array(searcher.embed_query(query), dtype=np.float64)
    cosine = matrix @ q / (np.linalg.norm(matrix, axis=1) * np.linalg.norm(q))
    order = np.argsort(-cosine, kind="stable")[:5]
    hits = searcher.search(query, k=5)
    assert [h.theorem_id for h in hits] == [ids[i] for i in order]
    assert [h.score for h in hits] == pytest.approx(cosine[order].tolist(), abs=1e-5)


def test_prepare_builds_every_index_up_front(corpus_dir):
    searcher = Searcher(open_catalog(str(corpus_dir)))
    searcher.prepare()
    tables = {r[0] for r in searcher.con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
    views = {r[0] for r in searcher.con.execute("SELECT view_name FROM duckdb_views()").fetchall()}
    registered = searcher.con.execute("SELECT count(*) FROM vectors_embedding").fetchall()[0][0]
    assert registered == len(STATEMENTS)
    assert "docs" in tables and "terms" in tables        # the fts index of fts_main_search_corpus
    assert "theorems" in views


def test_a_theorem_stored_twice_gets_one_vector_per_row(tmp_path, encoder):
    import shutil

    root = write_corpus(tmp_path, encoder)
    for path in list((root / "theorems").rglob("*.parquet")):
        shutil.copy(path, path.with_name("copy-" + path.name))      # every theorem id now stored twice
    searcher = Searcher(open_catalog(str(root)))
    hits = searcher.search("closed and bounded subsets of euclidean space", k=6)
    assert searcher.size == 2 * len(STATEMENTS)
    assert searcher._vectors.rows == 2 * len(STATEMENTS)
    assert len({(h.theorem_id, h.rank) for h in hits}) == 6
    assert hits[0].theorem_id == hits[1].theorem_id and hits[0].score == pytest.approx(hits[1].score)


def test_search_table_takes_paper_fields_once_a_paper_and_defaults_without_one():
    """materialize computes authors_key and category_keys per paper; a statement whose paper is
    missing gets empty ones, not NULL."""
    con = duckdb.connect()
    con.execute("""CREATE TABLE papers AS SELECT * FROM (VALUES
        ('p1', 's1', 'u1', 'Paper one', ['Ada Lovelace', 'Emmy Noether'], ['math.AG', 'math.NT']),
        ('p1', 's2', 'u2', 'Duplicate', ['Nobody'], ['cs.DS'])) v(paper_id, source_id, url, title, authors, categories)""")
    con.execute("""CREATE TABLE theorems AS SELECT * FROM (VALUES
        ('p1#1', 'p1', 'arxiv', 2020, 'lemma', NULL, '1', NULL, NULL, NULL, 'A statement.', 'A statement.', NULL, NULL::VARCHAR),
        ('p9#1', 'p9', 'arxiv', 2021, 'theorem', 'Theorem', '2', 'T', 'l', 't', 'Another.', NULL, 'u9', 'x'))
        v(theorem_id, paper_id, source, year, kind, display_name, number, title, label, tag, statement_text,
          description, url, statement_latex)""")
    assert materialize(con) == 2
    rows = con.execute("SELECT theorem_id, url, paper_title, authors, authors_key, category_keys, lexical_text "
                       "FROM search_corpus ORDER BY theorem_id").fetchall()
    assert rows[0][:5] == ('p1#1', 'u1', 'Paper one', ['Ada Lovelace', 'Emmy Noether'], 'ada lovelace | emmy noether')
    assert sorted(rows[0][5]) == ['math', 'math.AG', 'math.NT'] and rows[0][6] == 'A statement. Paper one'
    assert rows[1][1:6] == ('u9', None, [], '', [])
