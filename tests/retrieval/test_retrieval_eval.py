"""Hit@k / MRR metrics, the queries file format and evaluation over the small corpus."""
import json

import pytest

from retrieval.catalog import open_catalog
from retrieval.evaluate import evaluate, first_rank, metrics, parse_queries, resolve_gold, write_ranks
from retrieval.search import Searcher
from schemas.errors import UsageError

from query_corpus import STATEMENTS


def test_metrics_by_hand():
    out = metrics([1, 3, None, 15, 25])
    assert out == {"hit@1": 0.2, "hit@10": 0.4, "hit@20": 0.6, "mrr@20": round((1 + 1 / 3 + 1 / 15) / 5, 4)}
    assert metrics([]) == {"hit@1": 0.0, "hit@10": 0.0, "hit@20": 0.0, "mrr@20": 0.0}
    assert first_rank(["a", "b", "c"], {"c", "b"}) == 2 and first_rank(["a"], {"z"}) is None


@pytest.mark.parametrize("line, message", [
    ("not json", "not JSON"),
    ('["query"]', "object"),
    ('{"query": ""}', "non-empty"),
    ('{"query": "x"}', "no gold"),
    ('{"query": "x", "labels": [1]}', "list of non-empty strings"),
])
def test_bad_query_lines(line, message):
    with pytest.raises(UsageError, match=message):
        parse_queries([line], "q.jsonl")
    with pytest.raises(UsageError, match="no queries"):
        parse_queries(["", "  "], "q.jsonl")


def test_gold_by_label_scoped_to_papers(corpus_dir):
    searcher = Searcher(open_catalog(str(corpus_dir)))
    q = parse_queries(['{"query": "x", "labels": ["lem:kernel", "thm:heine"], "paper_ids": ["latex-project:algebra-notes"]}'])[0]
    ids, papers = resolve_gold(searcher, q)
    assert len(ids) == 1 and next(iter(ids)).startswith("latex-project:algebra-notes#")
    assert papers == {"latex-project:algebra-notes"}
    q = parse_queries(['{"query": "x", "labels": ["thm:heine"]}'])[0]
    assert resolve_gold(searcher, q)[1] == {"arxiv:1901.00002"}


def test_evaluate_modes(corpus_dir, tmp_path):
    searcher = Searcher(open_catalog(str(corpus_dir)))
    lines = [json.dumps({"query": text, "labels": [label]}) for _, _, _, label, text in STATEMENTS]
    lines.append(json.dumps({"query": "a statement that is not there", "labels": ["no-such-label"]}))
    queries = parse_queries(lines)
    results, unresolved = evaluate(searcher, queries, ["vector", "lexical", "hybrid"], k=20)
    assert unresolved == 1
    by_mode = {r.mode: r for r in results}
    expected = round(len(STATEMENTS) / len(queries), 4)
    assert by_mode["vector"].theorem["hit@1"] == expected      # own text: always top-1 but the missing one
    assert by_mode["vector"].paper["hit@1"] == expected
    assert by_mode["lexical"].theorem["hit@10"] == expected
    assert all(0 <= r.theorem["mrr@20"] <= r.theorem["hit@20"] for r in results)
    out = tmp_path / "ranks" / "ranks.jsonl"
    write_ranks(str(out), results)
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 3 * len(queries)
    assert rows[0]["theorem_rank"] == 1 and rows[-1]["theorem_rank"] is None and rows[-1]["gold"] == []
