"""`thmforge link`: restatements across papers, found by the real corpus and link jobs."""
import json
import pathlib
import shutil

import duckdb
import numpy as np
import pyarrow.parquet as pq
import pytest

from runners.cli import main
from schemas import theorems_table
from transforms import link

PAPERS = pathlib.Path(__file__).parent / "fixtures" / "restatements"

def _build(out, *folders):
    args = ["build-corpus", "--source", "latex-project", "--embed-model", "none", "--no-progress", "--output", str(out)]
    for folder in folders:
        args += ["--input", str(PAPERS / folder)]
    assert main(args) == 0


def _restates(out):
    return duckdb.sql(f"""
        SELECT a.paper_id AS src_paper, e.method, a.label AS src, b.label AS dst
        FROM read_parquet('{out}/edges/**/*.parquet', hive_partitioning = true) e
        JOIN read_parquet('{out}/theorems/**/*.parquet', hive_partitioning = true) a ON a.theorem_id = e.src_theorem_id
        JOIN read_parquet('{out}/theorems/**/*.parquet', hive_partitioning = true) b ON b.theorem_id = e.dst_theorem_id
        WHERE e.relation = 'restates' ORDER BY ALL""").fetchall()


@pytest.fixture(scope="module")
def linked(tmp_path_factory):
    out = tmp_path_factory.mktemp("link") / "out"
    _build(out, "groups_notes", "symmetry_lectures")
    assert main(["link", str(out)]) == 0
    first = _restates(out)
    _build(out, "orders")
    assert main(["link", str(out)]) == 0
    return out, first


def test_the_lemma_in_two_notations_is_found(linked):
    _, first = linked
    assert first == [
        ("latex-project:groups_notes", "text", "lem:lagrange", "prop:index"),
        ("latex-project:symmetry_lectures", "text", "prop:index", "lem:lagrange"),
    ]


def test_a_third_paper_added_later_links_to_both_and_nothing_else(linked):
    out, _ = linked
    pairs = {(src, dst) for _, method, src, dst in _restates(out)}
    lagrange = {"lem:lagrange", "prop:index", "lem:divides"}
    assert pairs == {(a, b) for a in lagrange for b in lagrange if a != b}
    assert len(_restates(out)) == 6       # the first run's pair was not compared again


def test_manifest_records_thresholds_and_runs(linked):
    out, _ = linked
    record = json.loads((out / "manifest.json").read_text())["link"]
    assert record["embedding_threshold"] == 0.8 and record["text_threshold"] == 0.8
    assert record["runs"] == 2 and record["statements"] == 6 and record["statements_compared"] == 2
    assert record["edges_written"] == 4 and record["edges_total"] == 6


def test_link_refuses_a_directory_that_is_not_a_corpus(tmp_path, capsys):
    assert main(["link", str(tmp_path)]) == 2
    assert "not a build-corpus output" in capsys.readouterr().err


def test_notation_is_renamed_but_meaning_words_are_kept():
    assert link.normalized_tokens(r"Let $\mathcal{A}$ be $x \le \alpha$.") == \
        link.normalized_tokens(r"let $B$ be $y \le \beta$.")
    assert link.normalized_tokens(r"Let $x$ be even.") != link.normalized_tokens(r"Let $x$ be odd.")
    assert link.text_signature("Too short $x$.") is None


def test_embedding_pairs_keep_other_papers_above_threshold_once():
    corpus = [
        {"theorem_id": "a", "paper_id": "p", "new": True, "vector": [1.0, 0.0]},
        {"theorem_id": "b", "paper_id": "q", "new": True, "vector": [0.9, 0.1]},
        {"theorem_id": "c", "paper_id": "p", "new": False, "vector": [1.0, 0.01]},
        {"theorem_id": "d", "paper_id": "r", "new": False, "vector": [0.0, 1.0]},
    ]
    queries = [r for r in corpus if r["new"]]
    found = {(a["theorem_id"], b["theorem_id"]) for a, b, score in link.embedding_pairs(corpus, queries, 0.8)}
    assert found == {("a", "b"), ("b", "c")}
    assert all(score >= 0.8 for *_, score in link.embedding_pairs(corpus, queries, 0.8))
    assert np.allclose(np.linalg.norm(link.unit_rows([[3, 4]]), axis=1), 1)


def test_queries_scored_in_blocks_give_the_pairs_of_one_matrix():
    """The exact scan scores new statements a block at a time (memory bound); the pairs do not change."""
    rng = np.random.default_rng(5)
    centers = rng.standard_normal((8, 12))
    vectors = centers[rng.integers(0, 8, 300)] + 0.4 * rng.standard_normal((300, 12))
    corpus = [{"theorem_id": f"t{i:03d}", "paper_id": f"p{i // 4}", "new": i % 3 == 0, "vector": v.tolist()}
              for i, v in enumerate(vectors)]
    queries = [r for r in corpus if r["new"]]
    whole = [(q["theorem_id"], c["theorem_id"], s) for q, c, s in link.cosine_pairs(corpus, queries, 0.8, block=len(queries))]
    blocked = [(q["theorem_id"], c["theorem_id"], s) for q, c, s in link.cosine_pairs(corpus, queries, 0.8, block=7)]
    assert len(whole) > 100 and [p[:2] for p in blocked] == [p[:2] for p in whole]
    assert np.allclose([p[2] for p in blocked], [p[2] for p in whole], atol=1e-6)   # BLAS rounding only


def _edge_ids(out):
    return duckdb.sql(f"""
        SELECT e.src_theorem_id, e.dst_theorem_id, e.method, t.theorem_id IS NOT NULL AND d.theorem_id IS NOT NULL
        FROM read_parquet('{out}/edges/**/*.parquet', hive_partitioning = true) e
        LEFT JOIN read_parquet('{out}/theorems/**/*.parquet', hive_partitioning = true) t ON t.theorem_id = e.src_theorem_id
        LEFT JOIN read_parquet('{out}/theorems/**/*.parquet', hive_partitioning = true) d ON d.theorem_id = e.dst_theorem_id
        WHERE e.relation = 'restates' ORDER BY ALL""").fetchall()


def test_a_rebuilt_paper_leaves_no_edge_to_statements_that_are_gone(tmp_path):
    """A lemma inserted before Lagrange's renumbers the paper: every theorem id changes. The rebuild
    drops the edges of the old ids; the next link finds the restatement again under the new one."""
    notes = tmp_path / "groups_notes"
    shutil.copytree(PAPERS / "groups_notes", notes)
    out = tmp_path / "out"
    args = ["build-corpus", "--source", "latex-project", "--embed-model", "none", "--no-progress", "--output", str(out)]
    assert main([*args, "--input", str(notes), "--input", str(PAPERS / "symmetry_lectures")]) == 0
    assert main(["link", str(out)]) == 0
    before = _edge_ids(out)
    tex = notes / "groups_notes.tex"
    tex.write_text(tex.read_text().replace(r"\section{Cosets}", "\\section{Cosets}\n\\begin{lemma}\\label{lem:unit}"
                                           "Every group has exactly one identity element.\\end{lemma}"))
    assert main([*args, "--input", str(notes)]) == 0
    assert not list((out / "edges").rglob("*.parquet"))   # the rebuild's commit left no edge naming an old id
    assert main(["link", str(out)]) == 0
    after = _edge_ids(out)
    assert len(before) == len(after) == 2 and not set(before) & set(after)
    assert all(present for *_, present in after)
    assert _restates(out) == [
        ("latex-project:groups_notes", "text", "lem:lagrange", "prop:index"),
        ("latex-project:symmetry_lectures", "text", "prop:index", "lem:lagrange"),
    ]
    assert json.loads((out / "manifest.json").read_text())["link"]["stale_edges_removed"] == 0


def _clustered_corpus(root, rows=600, dim=16, clusters=40, papers_rows=5, seed=3):
    """Theorems files with vectors in tight clusters (cosines around 0.8 within a cluster), three files."""
    rng = np.random.default_rng(seed)
    centers = rng.standard_normal((clusters, dim))
    vectors = centers[rng.integers(0, clusters, rows)] + 0.45 * rng.standard_normal((rows, dim))
    table = theorems_table(dim)
    rows_out = [dict(theorem_id=f"synthetic:p{i // papers_rows}#{i}", paper_id=f"synthetic:p{i // papers_rows}",
                     source="synthetic", year=2020 + i % 3, ordinal=i % papers_rows, kind="lemma",
                     statement_text="Short.", embedding=v.astype(np.float32).tolist()) for i, v in enumerate(vectors)]
    for year in (2020, 2021, 2022):
        folder = root / "theorems" / "source=synthetic" / f"year={year}"
        folder.mkdir(parents=True)
        part = [r for r in rows_out if r["year"] == year]
        pq.write_table(table.to_arrow(part), folder / "part-00000.parquet", store_schema=False)
    (root / "manifest.json").write_text(json.dumps({"embedding": {
        "model": "synthetic", "dim": dim, "columns": ["embedding"], "normalize": True}}))
    return root


def _embedding_edges(out):
    return sorted(duckdb.sql(f"""SELECT src_theorem_id, dst_theorem_id FROM
        read_parquet('{out}/edges/**/*.parquet', hive_partitioning = true) WHERE method = 'embedding'""").fetchall())


def test_index_candidates_give_the_edges_of_the_exact_scan(tmp_path):
    indexed = _clustered_corpus(tmp_path / "indexed")
    assert main(["index", str(indexed)]) == 0
    exact = tmp_path / "exact"
    shutil.copytree(indexed, exact)
    assert main(["link", str(exact), "--embedding-search", "exact"]) == 0
    assert main(["link", str(indexed), "--embedding-search", "index"]) == 0
    found, wanted = _embedding_edges(indexed), _embedding_edges(exact)
    assert len(wanted) > 200 and found == wanted
    assert json.loads((indexed / "manifest.json").read_text())["link"]["embedding_search"] == "index:description"
    assert json.loads((exact / "manifest.json").read_text())["link"]["embedding_search"] == "exact"


def test_link_refuses_index_search_without_an_index(tmp_path, capsys):
    corpus = _clustered_corpus(tmp_path / "corpus", rows=20)
    assert main(["link", str(corpus), "--embedding-search", "index"]) == 2
    assert "no vector index covering the corpus" in capsys.readouterr().err


def test_auto_search_scans_a_corpus_below_the_crossover_and_uses_the_index_above(tmp_path, monkeypatch):
    from runners import cmd_link

    corpus = _clustered_corpus(tmp_path / "corpus", rows=120)
    assert main(["index", str(corpus)]) == 0
    assert main(["link", str(corpus)]) == 0
    assert json.loads((corpus / "manifest.json").read_text())["link"]["embedding_search"] == "exact"
    monkeypatch.setattr(cmd_link, "INDEX_FROM_ROWS", 120)
    assert main(["link", str(corpus)]) == 0
    assert json.loads((corpus / "manifest.json").read_text())["link"]["embedding_search"] == "index:description"


def test_a_shortlist_full_of_neighbours_asks_again_until_it_has_them_all(tmp_path):
    from retrieval.link_candidates import IndexNeighbours, open_neighbours

    corpus = _clustered_corpus(tmp_path / "corpus")
    assert main(["index", str(corpus)]) == 0
    found = open_neighbours(str(corpus), 0.8)
    neighbours = IndexNeighbours(found.root, found.representation, 0.8, found.rows, shortlist=4)
    located = [((str(path.relative_to(corpus)), row), np.asarray(vector, dtype=np.float32))
               for path in sorted((corpus / "theorems").rglob("*.parquet"))
               for row, vector in enumerate(pq.read_table(path).column("embedding").to_pylist())]
    matrix = link.unit_rows(v for _, v in located)
    cosines = matrix @ matrix.T
    shortlists = neighbours(matrix)
    wanted = [{located[j][0] for j in np.flatnonzero(row >= 0.8)} for row in cosines]
    assert max(map(len, wanted)) > 4 * 4          # some queries outgrow the shortlist twice over
    assert all(w <= set(s) for w, s in zip(wanted, shortlists))
