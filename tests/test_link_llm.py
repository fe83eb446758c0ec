"""`thmforge link --llm-endpoint`: proofs' dependencies proposed by a real chat server on loopback."""
import json
import re

import duckdb

from benchmarks.chat_server import ChatServer, FaultPlan
from runners.cli import main
from transforms import link_llm

PAPER = r"""\documentclass{article}
\newtheorem{lemma}{Lemma}
\newtheorem{theorem}{Theorem}
\title{Orbits}
\date{2020}
\begin{document}
\begin{lemma}\label{lem:index} The index of a stabiliser equals the size of the orbit. \end{lemma}
\begin{lemma}\label{lem:bound} Every orbit of a $p$-group on a finite set has size a power of $p$. \end{lemma}
\begin{theorem}\label{thm:fixed} A $p$-group acting on a set of size prime to $p$ has a fixed point. \end{theorem}
\begin{proof} By the orbit-stabiliser formula, the set is a union of orbits whose sizes are powers of $p$.
One of them has size one. \end{proof}
\end{document}
"""


def answer(request: dict) -> str:
    """The "model": the lemmas by the words the proof uses, one unknown statement, one invented quote."""
    prompt = request["messages"][-1]["content"]
    ids = dict(re.findall(r"^(S\d+): Lemma (\d+)", prompt, re.M))
    ids = {number: key for key, number in ids.items()}
    if "Proof:" not in prompt or not ids:
        return json.dumps({"uses": []})
    return json.dumps({"uses": [
        {"id": ids["1"], "evidence": "the orbit-stabiliser   formula"},
        {"id": ids["2"], "evidence": "whose sizes are powers of $p$"},
        {"id": "S99", "evidence": "One of them"},
        {"id": ids["2"], "evidence": "words the proof never says"},
    ]})


def _build(tmp_path):
    folder = tmp_path / "orbits"
    folder.mkdir()
    (folder / "orbits.tex").write_text(PAPER)
    out = tmp_path / "out"
    assert main(["build-corpus", "--source", "latex-project", "--input", str(folder), "--embed-model", "none",
                 "--no-progress", "--output", str(out)]) == 0
    return out


def _llm_edges(out):
    if not list(out.glob("edges/**/*.parquet")):
        return []
    return duckdb.sql(f"""
        SELECT s.label, d.label, e.relation, e.location, e.evidence
        FROM read_parquet('{out}/edges/**/*.parquet', hive_partitioning = true) e
        JOIN read_parquet('{out}/theorems/**/*.parquet', hive_partitioning = true) s ON s.theorem_id = e.src_theorem_id
        JOIN read_parquet('{out}/theorems/**/*.parquet', hive_partitioning = true) d ON d.theorem_id = e.dst_theorem_id
        WHERE e.method = 'llm' ORDER BY ALL""").fetchall()


def test_proposals_with_evidence_in_the_proof_become_llm_edges(tmp_path, capsys):
    out = _build(tmp_path)
    with ChatServer(respond=answer) as server:
        assert main(["link", str(out), "--llm-endpoint", server.url, "--llm-model", "loopback-chat"]) == 0
        assert len(server.requests) == 1          # one new statement with a proof and earlier statements
    assert _llm_edges(out) == [
        ("thm:fixed", "lem:bound", "uses", "proof", "whose sizes are powers of $p$"),
        ("thm:fixed", "lem:index", "uses", "proof", "the orbit-stabiliser formula"),
    ]
    record = json.loads((out / "manifest.json").read_text())["link"]["llm"]
    assert (record["asked"], record["proposed"], record["kept"], record["rejected"], record["edges_written"]) == \
        (1, 4, 2, 2, 2)
    assert "2 uses edges written" in capsys.readouterr().err
    with ChatServer(respond=answer) as server:    # incremental: nothing new, nothing asked, edges kept
        assert main(["link", str(out), "--llm-endpoint", server.url, "--llm-model", "loopback-chat"]) == 0
        assert len(server.requests) == 0
    assert len(_llm_edges(out)) == 2


def test_an_endpoint_that_keeps_failing_is_counted_and_the_exit_code_says_so(tmp_path, capsys):
    out = _build(tmp_path)
    with ChatServer(respond=answer, faults=FaultPlan(rate_500=1.0)) as server:
        assert main(["link", str(out), "--llm-endpoint", server.url, "--llm-model", "m",
                     "--llm-max-attempts", "2"]) == 1
        assert len(server.requests) == 2
    assert _llm_edges(out) == []
    assert json.loads((out / "manifest.json").read_text())["link"]["llm"]["failed"] == 1
    assert "1 failed" in capsys.readouterr().err


SECOND = r"""\begin{theorem}\label{thm:count} Every orbit has size dividing the order of the group. \end{theorem}
\begin{proof} By counting cosets, the orbit-stabiliser formula gives it. \end{proof}
\end{document}
"""


def refuse_counting(request: dict) -> str:
    """A server that fails (500) the request for the proof "By counting cosets" and answers the rest."""
    if "Proof: By counting" in request["messages"][-1]["content"]:
        raise RuntimeError("injected failure")
    return answer(request)


def test_a_failed_request_is_asked_again_next_run_and_only_it(tmp_path, capsys):
    folder = tmp_path / "orbits"
    folder.mkdir()
    (folder / "orbits.tex").write_text(PAPER.replace("\\end{document}\n", SECOND))
    out = tmp_path / "out"
    assert main(["build-corpus", "--source", "latex-project", "--input", str(folder), "--embed-model", "none",
                 "--no-progress", "--output", str(out)]) == 0
    ask = ["link", str(out), "--llm-model", "m", "--llm-max-attempts", "1", "--llm-endpoint"]
    with ChatServer(respond=refuse_counting) as server:
        assert main([*ask, server.url]) == 1
        assert len(server.requests) == 2
    record = json.loads((out / "manifest.json").read_text())["link"]
    assert (record["llm"]["failed"], record["llm"]["to_retry"], record["statements_compared"]) == (1, 1, 4)
    assert {(s, d) for s, d, *_ in _llm_edges(out)} == {("thm:fixed", "lem:bound"), ("thm:fixed", "lem:index")}
    with ChatServer(respond=answer) as server:    # only the failed proof is asked; nothing compared again
        assert main([*ask, server.url]) == 0
        assert [r["messages"][-1]["content"].count("Proof: By counting") for r in server.requests] == [1]
    record = json.loads((out / "manifest.json").read_text())["link"]
    assert (record["llm"].get("failed", 0), record["llm"]["to_retry"], record["statements_compared"]) == (0, 0, 0)
    assert {(s, d) for s, d, *_ in _llm_edges(out)} == {
        ("thm:fixed", "lem:bound"), ("thm:fixed", "lem:index"), ("thm:count", "lem:index")}
    with ChatServer(respond=answer) as server:    # all settled: nothing asked
        assert main([*ask, server.url]) == 0
        assert server.requests == []
    assert len(_llm_edges(out)) == 3
    assert "asked again next run" in capsys.readouterr().err


def test_without_an_endpoint_no_llm_is_asked(tmp_path):
    out = _build(tmp_path)
    assert main(["link", str(out)]) == 0
    assert "llm" not in json.loads((out / "manifest.json").read_text())["link"]


def test_unreadable_answers_and_endpoint_without_model():
    assert link_llm.proposals("```json\n{\"uses\": []}\n```") == []
    assert link_llm.proposals("I think S1.") is None and link_llm.proposals("[1, 2]") is None
    assert main(["link", "/nonexistent", "--llm-endpoint", "http://127.0.0.1:9/v1"]) == 2
