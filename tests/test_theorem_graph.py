"""`thmforge graph`: a statement's neighbourhood in the edges table, built by the real corpus job."""
import json

import pytest

from runners.cli import main
from tests.test_edges import BLUEPRINT


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    root = tmp_path_factory.mktemp("graph")
    (root / "blueprint").mkdir()
    (root / "blueprint" / "print.tex").write_text(BLUEPRINT.replace("\\section{One}", "\\date{2024}\\section{One}"))
    out = root / "out"
    assert main(["build-corpus", "--source", "latex-project", "--input", str(root / "blueprint" / "print.tex"),
                 "--embed-model", "none", "--no-progress", "--output", str(out)]) == 0
    return out


def _graph(capsys, corpus, *args):
    capsys.readouterr()
    code = main(["graph", str(corpus), *args])
    return code, capsys.readouterr()


def test_uses_to_depth_two_as_json(capsys, corpus):
    code, out = _graph(capsys, corpus, "thm:b", "--depth", "2", "--format", "json")
    assert code == 0
    graph = json.loads(out.out)
    assert [(n["label"], n["depth"]) for n in graph["nodes"]] == [("thm:b", 0), ("lem:a", 1), ("def:g", 2)]
    by_id = {n["theorem_id"]: n["label"] for n in graph["nodes"]}
    assert sorted((by_id[e["src"]], by_id[e["dst"]], e["method"], e["location"]) for e in graph["edges"]) == [
        ("lem:a", "def:g", "blueprint", "proof"), ("lem:a", "def:g", "blueprint", "statement"),
        ("lem:a", "def:g", "name", "proof"), ("lem:a", "def:g", "ref", "proof"),
        ("thm:b", "lem:a", "blueprint", "statement"), ("thm:b", "lem:a", "ref", "statement")]


def test_used_by_table_and_dot(capsys, corpus):
    code, out = _graph(capsys, corpus, "def:g", "--direction", "used-by", "--depth", "1")
    assert code == 0 and "Lemma 1.2 [lem:a]" in out.out and "thm:b" not in out.out
    code, out = _graph(capsys, corpus, "lem:a", "--direction", "both", "--format", "dot")
    assert code == 0 and out.out.startswith("digraph uses {") and out.out.count(" -> ") == 6


def test_unknown_statement_is_a_usage_error(capsys, corpus):
    code, out = _graph(capsys, corpus, "no:such")
    assert code == 2 and "no statement with id or label 'no:such'" in out.err


def test_search_hits_say_how_many_statements_use_them(capsys, corpus):
    capsys.readouterr()
    assert main(["search", str(corpus), "groups exist", "--mode", "lexical", "--format", "json", "-k", "5"]) == 0
    used_by = {hit["label"]: hit["used_by"] for hit in json.loads(capsys.readouterr().out)}
    assert used_by["lem:a"] == 1 and used_by.get("thm:b", 0) == 0
    assert main(["search", str(corpus), "a group is a set", "--mode", "lexical", "-k", "1"]) == 0
    assert "used by 1 statement" in capsys.readouterr().out
