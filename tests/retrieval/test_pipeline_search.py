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


@pytest.mark.slow
def test_blend_template_vectors_reach_search_and_the_index(tmp_path, capfd):
    """`--embed-template blend-v1`: the stored vector is the blend of two texts; search, before and after
    `thmforge index`, finds each statement by its own plain text with the score of the blended vector
    (below 1: the stored vector is not that text's alone)."""
    import numpy as np

    from transforms.embed import Encoder, EmbedConfig
    from transforms.embed.representation import BLEND, COMPONENT_WEIGHTS, PLAIN, combine

    project = tmp_path / "short-notes"
    project.mkdir()
    (project / "notes.tex").write_text(NOTES)
    out = tmp_path / "out"
    assert main(["build-corpus", "--source", "latex-project", "--input", str(project), "--output", str(out),
                 "--embed-template", BLEND, "--preset", "local", "--no-progress"]) == 0
    assert json.loads((out / "manifest.json").read_text())["embedding"]["template"] == BLEND
    capfd.readouterr()
    assert main(["sql", str(out), "-c", "SELECT t.statement_text, t.description, t.title, t.display_name, t.number, "
                 "t.section_path, p.title AS paper_title FROM theorems t JOIN papers p USING (paper_id) "
                 "ORDER BY ordinal", "--format", "json"]) == 0
    rows = [json.loads(line) for line in capfd.readouterr().out.splitlines()]
    encoder = Encoder(EmbedConfig().encoder_config())
    plain = encoder.encode_documents([representation_text(r, PLAIN) for r in rows])
    context = encoder.encode_documents([representation_text(r, CONTEXT, r["paper_title"]) for r in rows])
    expected = np.sum(combine([plain, context], COMPONENT_WEIGHTS[BLEND]) * plain, axis=1)   # blended . plain query
    assert all(0.8 < e < 0.999 for e in expected)
    for indexed in (False, True):
        if indexed:
            assert main(["index", str(out)]) == 0
        for row, score in zip(rows, expected):
            capfd.readouterr()
            assert main(["search", str(out), representation_text(row, PLAIN), "-k", "1", "--format", "json"]) == 0
            hit = json.loads(capfd.readouterr().out)[0]
            assert hit["snippet"] == row["statement_text"] and hit["score"] == pytest.approx(score, abs=2e-3)
