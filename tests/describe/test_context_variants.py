"""Every describer context variant end to end: build-corpus against the loopback chat server puts the
right context in the prompt, and the description written from it is what the description
representation embeds and what search finds."""
import gzip
import io
import json
import tarfile

import duckdb
import numpy as np
import pytest

from benchmarks.chat_server import ChatServer
from retrieval.catalog import open_catalog
from retrieval.filters import Filters
from retrieval.search import Searcher
from runners.cli import main
from transforms.embed.encoder import DEFAULT_MODEL, Encoder, EncoderConfig
from transforms.embed.representation import CONTEXT, representation_text

# Each context holds one word found nowhere else, so a prompt shows which context it was given.
PAPER = r"""\documentclass{article}
\usepackage{amsthm}
\newtheorem{lemma}{Lemma}[section]
\newtheorem{theorem}[lemma]{Theorem}
\title{Sums of even numbers}
\begin{document}
\section{Introduction}
We count quokkas by pairing them, which is how the main theorem is proved.
\section{Sums}
\begin{lemma}\label{lem:pairs}
Every finite sum of even integers is even, pairwise.
\end{lemma}
\begin{theorem}\label{thm:main}
The sum of the first $n$ even numbers is even.
\end{theorem}
\begin{proof}
Apply Lemma~\ref{lem:pairs}.
\end{proof}
\end{document}
"""
METADATA = {"id": "2101.00001", "submitter": "A. Author", "authors": "A. Author", "title": "Sums of even numbers",
            "categories": "math.NT", "abstract": "We explain why wombats always come in even numbers.",
            "versions": [{"version": "v1", "created": "Mon, 4 Jan 2021 10:00:00 GMT"}],
            "update_date": "2021-01-04", "authors_parsed": [["Author", "A.", ""]]}
pytestmark = pytest.mark.slow      # whole build-corpus runs, one with the embedding model
MARKERS = {"body+abstract": "wombats", "body+intro": "quokkas", "body+deps": "pairwise"}
THEOREM = "first $n$ even numbers"


def marker_answer(request):
    """A description naming every context marker in the prompt: the description shows what it was given."""
    prompt = request["messages"][-1]["content"]
    found = [word for word in MARKERS.values() if word in prompt]
    return "A result about even sums" + (" and " + " and ".join(found) if found else "") + "."


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    folder = tmp_path_factory.mktemp("arxiv")
    tar_path = folder / "arXiv_src_2101_001.tar"
    with tarfile.open(tar_path, "w") as tar:
        data = gzip.compress(PAPER.encode())
        info = tarfile.TarInfo("2101/2101.00001.gz")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    metadata = folder / "metadata.json"
    metadata.write_text(json.dumps(METADATA) + "\n")
    return tar_path, metadata


@pytest.mark.parametrize("context", ["body", "body+abstract", "body+intro", "body+deps"])
def test_prompt_holds_the_context_and_the_description_is_indexed(bundle, tmp_path, context):
    tar_path, metadata = bundle
    out = tmp_path / "corpus"
    with ChatServer(respond=marker_answer) as server:
        assert main(["build-corpus", "--input", str(tar_path), "--metadata", str(metadata), "--output", str(out),
                     "--describer", "openai", "--llm-endpoint", server.url, "--llm-model", "loopback",
                     "--describe-context", context, "--embed-model", "none", "--no-progress"]) == 0
        prompts = [request["messages"][-1]["content"] for request in server.requests]
    [theorem_prompt] = [p for p in prompts if THEOREM in p]
    for variant, word in MARKERS.items():     # its own context's word and no other's
        assert (word in theorem_prompt) == (variant == context), (variant, theorem_prompt)
    rows = duckdb.sql(f"SELECT label, description, description_context FROM read_parquet('{out}/theorems/**/*.parquet')"
                      ).fetchall()
    theorem = {label: (description, used) for label, description, used in rows}["thm:main"]
    expected = f"A result about even sums and {MARKERS[context]}." if context in MARKERS else "A result about even sums."
    assert theorem == (expected, context)
    if context == "body+intro":     # "quokkas" is only in the introduction, hence in both descriptions
        searcher = Searcher(open_catalog(str(out)))
        found = [doc for doc, _ in searcher.lexical_ranking("quokkas", 5, Filters())]
        labels = searcher.con.execute("SELECT label FROM search_corpus WHERE list_contains(?, doc)", [found]).fetchall()
        assert sorted(label for label, in labels) == ["lem:pairs", "thm:main"]


def test_context_description_is_what_the_description_representation_embeds(bundle, tmp_path):
    """With embeddings on, the stored vector is the model's vector of the context-v1 text holding the description."""
    tar_path, metadata = bundle
    out = tmp_path / "corpus"
    with ChatServer(respond=marker_answer) as server:
        assert main(["build-corpus", "--input", str(tar_path), "--metadata", str(metadata), "--output", str(out),
                     "--describer", "openai", "--llm-endpoint", server.url, "--llm-model", "loopback",
                     "--describe-context", "body+intro", "--no-progress"]) == 0
    con = open_catalog(str(out)).con
    cursor = con.execute("SELECT t.*, p.title AS paper_title FROM theorems t JOIN papers p USING (paper_id) "
                         "WHERE t.label = 'thm:main'")
    row = dict(zip([d[0] for d in cursor.description], cursor.fetchone()))
    text = representation_text(row, CONTEXT, paper_title=row["paper_title"])
    assert text == "Sums of even numbers > Sums | Theorem 2.2: A result about even sums and quokkas."
    stored = np.asarray(row["embedding"], dtype=np.float32)
    fresh = Encoder(EncoderConfig(model=DEFAULT_MODEL)).encode_documents([text])[0]
    cosine = float(stored @ fresh / (np.linalg.norm(stored) * np.linalg.norm(fresh)))
    assert cosine > 0.999
