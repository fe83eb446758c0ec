"""Automatic evaluation sets (benchmarks/build_evalsets.py) and the model-free agreement reranker."""
import json
import pathlib

from benchmarks.build_evalsets import HELD_OUT, abstract_queries, claim_sentences, latex_abstract, named_queries, \
    section_queries
from retrieval.evaluate import parse_queries
from retrieval.rerank import agreement, rerank_by_agreement

AUTO = pathlib.Path(__file__).resolve().parents[2] / "retrieval" / "evalsets" / "auto"
ABSTRACTS = AUTO.parent / "abstracts"


def row(tid, title=None, section=(), ordinal=0, text="Some statement about rings.", paper="latex-project:a",
        kind="theorem"):
    return {"theorem_id": tid, "paper_id": paper, "ordinal": ordinal, "title": title,
            "section_path": list(section), "statement_text": text, "kind": kind}


def test_named_queries_keep_only_unambiguous_titles_not_given_away_by_the_text():
    rows = [row("t1", "Hedberg's theorem"), row("t2", "Lemma"), row("t3", "Lemma", ordinal=1),
            row("t4", "Krull", text="Krull showed this."), row("t5", "$x^2$ bound"), row("t6", "Zorn")]
    queries = named_queries(rows)
    assert [(q["query"], q["theorem_ids"]) for q in queries] == [("Hedberg's theorem", ["t1"]), ("Zorn", ["t6"])]
    assert all(q["hide_title"] and q["paper_ids"] == ["latex-project:a"] for q in queries)


def test_section_queries_take_the_first_statement_of_each_section():
    rows = [row("t2", section=["Rings", "Ideals"], ordinal=2), row("t1", section=["Rings", "Ideals"], ordinal=1),
            row("t3", section=["Rings", "Modules"], ordinal=3, text="Modules over rings."),
            row("t4", section=["Fields"], ordinal=4)]
    queries = section_queries(rows)
    assert [(q["query"], q["theorem_ids"]) for q in queries] == [("Ideals", ["t1"]), ("Fields", ["t4"])]
    assert queries[0]["hide_section"] == "Ideals"


def test_committed_sets_parse_and_split_by_project():
    for path in sorted(AUTO.glob("*.jsonl")):
        lines = path.read_text(encoding="utf-8").splitlines()
        assert 0 < len(parse_queries(lines, str(path))) <= 200
        papers = {p for line in lines for p in json.loads(line)["paper_ids"]}
        assert papers <= set(HELD_OUT) if "heldout" in path.name else not papers & set(HELD_OUT)


def test_agreement_reranking_lifts_a_candidate_whose_context_matches():
    assert agreement("monotone convergence", "Sequences > Monotone convergence") == 1.0
    assert agreement("monotone convergence", "") == 0.0
    ranked = rerank_by_agreement("monotone convergence", [5, 6, 7], ["Groups", "Monotone convergence", ""], 1.0)
    assert [d for d, _ in ranked] == [6, 5, 7]
    assert [d for d, _ in rerank_by_agreement("x", [5, 6, 7], ["", "", ""], 1.0)] == [5, 6, 7]


def test_abstract_claims_go_to_the_statement_covering_most_of_their_words(tmp_path):
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "main.tex").write_text(r"""\begin{abstract}
Synthetic geometry is new. We prove that smooth schemes have finite free tangent modules.
We also show that every widget is a gadget. Authors so far: A, B.
\end{abstract}""")
    assert claim_sentences(latex_abstract(tmp_path / "p" / "main.tex")) == [
        "We prove that smooth schemes have finite free tangent modules.", "We also show that every widget is a gadget."]
    rows = [row("t1", text="Every scheme is a set."),
            row("t2", text="The tangent modules of smooth schemes are finite free.", kind="lemma"),
            row("t3", text="Tangent modules of smooth schemes are finite free modules.", kind="definition")]
    papers = [{"paper_id": "latex-project:a", "abstract": None, "bundle": "p", "main_file": "main.tex"}]
    queries = abstract_queries(rows, papers, str(tmp_path))
    # the widget claim covers no statement: dropped; a definition is never a claim's gold
    assert queries == [{"query": "We prove that smooth schemes have finite free tangent modules.",
                        "theorem_ids": ["t2"], "paper_ids": ["latex-project:a"]}]


def test_committed_abstract_sets_parse():
    paths = sorted(ABSTRACTS.glob("*/abstracts-heldout.jsonl"))
    assert [p.parent.name for p in paths] == ["arxiv", "synthetic-zariski"]
    for path in paths:
        assert parse_queries(path.read_text(encoding="utf-8").splitlines(), str(path))
