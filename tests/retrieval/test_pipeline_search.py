"""Search over a corpus that the real `build-corpus` pipeline wrote (embeddings included)."""
import json

import pytest

from runners.cli import main
from transforms.embed.representation import CONTEXT, representation_text

NOTES = r"""\documentclass{amsart}
\newtheorem{theorem}{Theorem}[section]
\newtheorem{lemma}[theorem]{Lemma}
\theoremstyle{definition}
\newtheorem{definition}[theorem]{Definition}
\title{Short notes on sequences and groups}
\begin{document}
\maketitle
\section{Sequences}
\begin{definition}\label{def:cauchy}
A sequence of real numbers is Cauchy if its terms eventually stay arbitrarily close to each other.
\end{definition}
\begin{theorem}[Monotone convergence]\label{thm:monotone}
Every bounded monotone sequence of real numbers converges.
\end{theorem}
\section{Groups}
\begin{lemma}\label{lem:kernel}
The kernel of a group homomorphism is a normal subgroup of its domain.
\end{lemma}
\begin{theorem}[Lagrange]\label{thm:lagrange}
The order of a subgroup of a finite group divides the order of the group.
\end{theorem}
\end{document}
"""


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tmp_path_factory.mktemp("pipeline-search")
    project = root / "short-notes"
    project.mkdir()
    (project / "notes.tex").write_text(NOTES)
    output = root / "out"
    code = main(["build-corpus", "--source", "latex-project", "--input", str(project), "--output", str(output),
                 "--embed-statements", "--preset", "local", "--no-progress"])
    assert code == 0
    return output


@pytest.mark.slow
def test_own_text_is_top1_on_pipeline_output(built, capfd):
    capfd.readouterr()
    assert main(["sql", str(built), "-c", "SELECT t.statement_text, t.description, t.title, t.display_name, t.number, "
                 "t.section_path, p.title AS paper_title FROM theorems t JOIN papers p USING (paper_id) "
                 "ORDER BY ordinal", "--format", "json"]) == 0
    rows = [json.loads(line) for line in capfd.readouterr().out.splitlines()]
    assert len(rows) == 4
    assert rows[1]["description"] == "Monotone convergence: " + rows[1]["statement_text"]   # the text describer
    embedded = representation_text(rows[1], CONTEXT, rows[1]["paper_title"])   # the default template
    assert embedded.startswith("Short notes on sequences and groups > Sequences | Theorem")
    assert "(Monotone convergence): Every bounded" in embedded
    for row in rows:
        row["embedded"] = representation_text(row, CONTEXT, row["paper_title"])
    for representation, column in (("description", "embedded"), ("statement", "statement_text")):
        for row in rows:
            assert main(["search", str(built), row[column], "-k", "1", "--format", "json",
                         "--representation", representation]) == 0
            hit = json.loads(capfd.readouterr().out)[0]
            assert hit["snippet"] == row["statement_text"] and hit["score"] == pytest.approx(1.0, abs=1e-3)


@pytest.mark.slow
def test_eval_by_labels_on_pipeline_output(built, tmp_path, capfd):
    queries = tmp_path / "q.jsonl"
    queries.write_text("\n".join(json.dumps(q) for q in [
        {"query": "a subgroup's size divides the size of a finite group", "labels": ["thm:lagrange"],
         "paper_ids": ["latex-project:short-notes"]},
        {"query": "bounded increasing sequences have limits", "labels": ["thm:monotone"]},
    ]) + "\n")
    capfd.readouterr()
    assert main(["eval-retrieval", str(built), "--queries", str(queries), "--format", "json"]) == 0
    report = json.loads(capfd.readouterr().out)
    assert report["unresolved"] == 0
    assert report["modes"]["hybrid"]["theorem"]["hit@10"] == 1.0
    assert report["modes"]["vector"]["paper"]["hit@1"] == 1.0
