"""`thmforge link`: restatements across papers, found by the real corpus and link jobs."""
import json
import pathlib

import duckdb
import numpy as np
import pytest

from runners.cli import main
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
    found = {(a, b) for a, b, score in link.embedding_pairs(corpus, queries, 0.8)}
    assert found == {("a", "b"), ("b", "c")}
    assert all(score >= 0.8 for *_, score in link.embedding_pairs(corpus, queries, 0.8))
    assert np.allclose(np.linalg.norm(link.unit_rows([[3, 4]]), axis=1), 1)
