"""Acceptance: build-corpus on the project's sample with `--describer openai` against the loopback server,
then a rerun served entirely from the cache; descriptions land in the theorems table."""
import json
import pathlib

import duckdb
import pytest

from benchmarks.chat_server import ChatServer
from describe_helpers import words_answer
from runners.cli import main

SAMPLE = pathlib.Path(__file__).resolve().parents[2] / "samples" / "arxiv"


@pytest.mark.slow
def test_build_corpus_with_openai_describer_then_cached_rerun(tmp_path, capsys):
    bundles = sorted(str(p) for p in SAMPLE.glob("*.tar"))
    if not bundles:
        pytest.skip("no sample bundles")
    out = tmp_path / "corpus"
    with ChatServer(respond=words_answer) as server:
        argv = ["build-corpus", "--input", *bundles, "--metadata", str(SAMPLE / "arxiv-metadata-oai-snapshot.json"),
                "--output", str(out), "--describer", "openai", "--llm-endpoint", server.url, "--llm-model", "loopback",
                "--describe-context", "body+abstract", "--embed-model", "none"]
        assert main(argv) == 0
        first = server.request_count
        progress = capsys.readouterr().err
        argv.append("--no-progress")
        server.reset()
        assert main(argv) == 0
        assert server.request_count == 0
    manifest = json.loads((out / "manifest.json").read_text())
    statements = manifest["counts"]["statements"]
    assert statements > 0 and 0 < first <= statements
    assert f"thmforge: describing: {statements} statements" in progress
    assert "thmforge: extracting: " in progress and " papers (100%)" in progress
    described = manifest["describer"]
    assert described["described"] == statements and described["run_requests"] == 0
    assert described["run_cache_hits"] == statements
    rows = duckdb.sql(f"SELECT description, description_model, description_template FROM read_parquet("
                      f"'{out}/theorems/**/*.parquet')").fetchall()
    assert len(rows) == statements
    assert all(d.startswith("A result about") and m == "loopback" and t == "slogan-v1" for d, m, t in rows)
