"""`--describe-context body+deps`: the describer's prompt holds the text of the statements a statement uses."""
import duckdb

from benchmarks.chat_server import ChatServer
from describe_helpers import words_answer
from runners.cli import main
from transforms.corpus import dependency_texts

PAPER = r"""\documentclass{article}
\usepackage{amsthm}
\newtheorem{lemma}{Lemma}[section]
\newtheorem{theorem}[lemma]{Theorem}
\begin{document}
\section{Sums}
\begin{lemma}\label{lem:pairs}
Every finite sum of even integers is even.
\end{lemma}
\begin{theorem}\label{thm:main}
The sum of the first $n$ even numbers is even.
\end{theorem}
\begin{proof}
Apply Lemma~\ref{lem:pairs}.
\end{proof}
\end{document}
"""


def test_prompt_of_a_statement_holds_the_text_of_what_it_uses(tmp_path):
    (tmp_path / "sums").mkdir()
    (tmp_path / "sums" / "sums.tex").write_text(PAPER)
    out = tmp_path / "out"
    with ChatServer(respond=words_answer) as server:
        assert main(["build-corpus", "--source", "latex-project", "--input", str(tmp_path / "sums"),
                     "--output", str(out), "--describer", "openai", "--llm-endpoint", server.url,
                     "--llm-model", "loopback", "--describe-context", "body+deps", "--embed-model", "none",
                     "--no-progress"]) == 0
        prompts = [request["messages"][-1]["content"] for request in server.requests]
    [theorem_prompt] = [p for p in prompts if "first $n$ even numbers" in p]
    [lemma_prompt] = [p for p in prompts if "first $n$ even numbers" not in p]
    assert "the statements of the same paper it uses" in theorem_prompt
    assert "Lemma 1.1: Every finite sum of even integers is even." in theorem_prompt
    assert "statements of the same paper it uses" not in lemma_prompt     # uses nothing: body only
    contexts = dict(duckdb.sql(f"SELECT label, description_context FROM read_parquet('{out}/theorems/**/*.parquet')")
                    .fetchall())
    assert contexts == {"thm:main": "body+deps", "lem:pairs": "body"}


def test_dependency_texts_only_same_document_uses_once_each():
    theorems = [{"theorem_id": "a", "display_name": "Lemma", "number": "2", "statement_text": "A holds."},
                {"theorem_id": "b", "display_name": "Theorem", "number": "3", "statement_text": "B holds."}]
    edges = [{"src_theorem_id": "b", "dst_theorem_id": "a", "relation": "uses", "method": "ref"},
             {"src_theorem_id": "b", "dst_theorem_id": "a", "relation": "uses", "method": "name"},
             {"src_theorem_id": "a", "dst_theorem_id": None, "relation": "cites", "method": "cite"},
             {"src_theorem_id": "a", "dst_theorem_id": "b", "relation": "restates", "method": "text"}]
    assert dependency_texts(theorems, edges) == {"b": "Lemma 2: A holds."}
