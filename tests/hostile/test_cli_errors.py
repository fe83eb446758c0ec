"""Bad requests: every malformed option or injection attempt gets a message and exit code 2, no traceback.

Most cases call `runners.cli.main` in-process (a traceback there is an exception that fails the
test); a few run `.venv/bin/thmforge` as a user would, to check stderr for a traceback. The HTTP
search API (`thmforge serve`) is checked the same way on a loopback port: a JSON error with 400.
"""
import contextlib
import http.client
import importlib
import io
import json
import os
import subprocess
import sys

import pytest

import hostile_cases as hc
from retrieval.catalog import open_catalog
from retrieval.search import Searcher
from runners.cli import main
from tests.cli_calls import run_cli

THMFORGE = os.path.join(os.path.dirname(sys.executable), "thmforge")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """A small real corpus (two papers, no embeddings) for the query commands."""
    root = tmp_path_factory.mktemp("cli-errors")
    (root / "inputs").mkdir()
    members = {"2201/2201.00001.gz": hc.gz(hc.GOOD),
               "2201/2201.00002.gz": hc.gz(hc.paper_tex(theorem="Every compact metric space is complete.").encode())}
    (root / "inputs" / hc.BUNDLE).write_bytes(hc.bundle_bytes(members))
    out = str(root / "out")
    assert main(["build-corpus", "--input", str(root / "inputs"), "--output", out, "--embed-model", "none",
                 "--no-progress"]) == 0
    return out


def assert_usage_error(code, err, message):
    assert code == 2, err
    assert message in err and "Traceback" not in err


@pytest.mark.parametrize("extra, message", [
    ([], "--input is required"),
    (["--input", "/nonexistent/arXiv_src_2101_001.tar"], "no input matches"),
    (["--input", "/nonexistent/*.tar"], "no input matches"),
    (["--input", "IN", "--preset", "nope"], "invalid choice: 'nope'"),
    (["--input", "IN", "--source", "nope"], "invalid choice: 'nope'"),
    (["--input", "IN", "--max-files", "abc"], "invalid int value"),
    (["--input", "IN", "--max-files", "0"], "--max-files must be positive"),
    (["--input", "IN", "--max-submission-bytes", "-5"], "--max-submission-bytes must be positive"),
    (["--input", "IN", "--paper-timeout", "-1"], "--paper-timeout must be positive"),
    (["--input", "IN", "--files-per-partition", "0"], "--files-per-partition"),
    (["--input", "IN", "--metadata", "/nonexistent/meta.json"], "no such file"),
    (["--input", "IN", "--preset", "dataflow"], "needs --project"),
])
def test_build_corpus_rejects_bad_options(capfd, tmp_path, extra, message):
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / hc.BUNDLE).write_bytes(hc.bundle_bytes({"2201/2201.00001.gz": hc.gz(hc.GOOD)}))
    argv = ["build-corpus", "--output", tmp_path / "out", "--embed-model", "none"]
    argv += [str(tmp_path / "in") if a == "IN" else a for a in extra]
    code, _, err = run_cli(capfd, *argv)
    assert_usage_error(code, err, message)
    assert not (tmp_path / "out" / "papers").exists()


@pytest.mark.parametrize("extra, message", [
    (["--runner=NoSuchRunner"], "NoSuchRunner"),
    (["--embed-model", "/nonexistent/model-dir"], "/nonexistent/model-dir"),
    (["--output", "FILE"], "FILE"),
])
def test_build_corpus_rejects_bad_runner_model_or_output_before_running(capfd, tmp_path, extra, message):
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / hc.BUNDLE).write_bytes(hc.bundle_bytes({"2201/2201.00001.gz": hc.gz(hc.GOOD)}))
    (tmp_path / "FILE").write_text("not a directory")
    argv = ["build-corpus", "--input", tmp_path / "in", "--no-progress"]
    if "--embed-model" not in extra:
        argv += ["--embed-model", "none"]
    if "--output" not in extra:
        argv += ["--output", tmp_path / "out"]
    argv += [str(tmp_path / a) if a == "FILE" else a for a in extra]
    code, _, err = run_cli(capfd, *argv)
    assert_usage_error(code, err, message.replace("FILE", str(tmp_path / "FILE")))


@pytest.mark.parametrize("source", ["latex-project", "stacks", "proofwiki"])
def test_nonexistent_input_of_any_source_is_a_usage_error(capfd, tmp_path, source):
    code, _, err = run_cli(capfd, "build-corpus", "--input", "/nonexistent/input", "--source", source,
                    "--output", tmp_path / "out", "--embed-model", "none", "--no-progress")
    assert_usage_error(code, err, "/nonexistent/input")


@pytest.mark.parametrize("sql, message", [
    ("DROP VIEW theorems", "read-only"),
    ("SELECT 1; DROP VIEW theorems", "read-only"),
    ("CREATE TABLE t AS SELECT * FROM papers", "read-only"),
    ("DELETE FROM papers", "read-only"),
    ("COPY theorems TO 'stolen.csv'", "read-only"),
    ("COPY (SELECT * FROM papers) TO '/tmp/stolen.parquet' (FORMAT parquet)", "read-only"),
    ("EXPORT DATABASE '/tmp/stolen'", "read-only"),
    ("ATTACH '/tmp/other.duckdb' AS other", "read-only"),
    ("INSTALL httpfs", "read-only"),
    ("LOAD httpfs", "read-only"),
    ("SET enable_external_access = true", "read-only"),
    ("PRAGMA enable_profiling", "read-only"),
    ("CALL pragma_version()", ""),
    ("SELECT * FROM read_text('/etc/passwd')", "Permission"),
    ("SELECT * FROM read_parquet('/etc/*.parquet')", "Permission"),
    ("EXPLAIN DROP VIEW papers", "read-only"),
    ("SELECT * FROM papers WHERE paper_id = 'x' OR 1=1 --", None),
])
def test_sql_is_read_only_over_the_views(capfd, corpus, sql, message):
    code, _, err = run_cli(capfd, "sql", corpus, "-c", sql)
    assert "Traceback" not in err
    if message is None:                      # a plain query: it runs, and the views are still there
        assert code == 0
    else:
        assert code == 2 and message in err, err
    code, _, _ = run_cli(capfd, "sql", corpus, "-c", "SELECT count(*) FROM papers")
    assert code == 0
    assert not os.path.exists("stolen.csv") and not os.path.exists("/tmp/stolen.parquet")


def test_sql_writes_to_the_stdout_of_the_call(corpus):
    """Results go to the sys.stdout current at the call, not to the one of import time."""
    importlib.import_module("runners.cmd_sql")          # imported before the redirect, as in a long-lived process
    sink = io.StringIO()
    with contextlib.redirect_stdout(sink):
        assert main(["sql", corpus, "-c", "SELECT count(*) AS n FROM papers", "--format", "csv"]) == 0
    assert sink.getvalue().splitlines() == ["n", "2"]


@pytest.mark.parametrize("option, value", [
    ("--kind", "x' OR 1=1 --"),
    ("--kind", "theorem'); DROP VIEW theorems; --"),
    ("--source", "arxiv' OR '1'='1"),
    ("--category", "math' OR '1'='1"),
    ("--paper", "arxiv:1' OR 1=1 --"),
    ("--year", "2020; DROP VIEW theorems"),
    ("--year", "2020:1999"),
    ("-k", "0"),
    ("-k", "100000"),
    ("--mode", "sql"),
])
def test_search_rejects_malformed_filters(capfd, corpus, option, value):
    code, _, err = run_cli(capfd, "search", corpus, "finite group identity", "--mode", "lexical", option, value)
    assert code == 2 and "Traceback" not in err and "error" in err


@pytest.mark.parametrize("author", ["x' OR 1=1 --", "%", "_", "\\' OR ''='"])
def test_free_text_filters_are_bound_values_that_match_nothing(capfd, corpus, author):
    code = main(["search", corpus, "finite group identity", "--mode", "lexical", "--format", "json",
                 "--author", author])
    out, err = capfd.readouterr()
    assert code == 0 and "Traceback" not in err
    assert out.strip() in ("[]", "")
    code = main(["search", corpus, "finite group identity", "--mode", "lexical", "--format", "json"])
    out, _ = capfd.readouterr()
    assert code == 0 and "finite group" in out.lower()


def test_search_without_embeddings_says_use_lexical(capfd, corpus):
    code, _, err = run_cli(capfd, "search", corpus, "finite group")
    assert_usage_error(code, err, "--mode lexical")


def test_installed_command_prints_no_traceback(corpus, tmp_path):
    """The real executable, three kinds of bad request at once (each process pays the imports)."""
    runs = [
        [THMFORGE, "build-corpus", "--input", str(tmp_path / "missing.tar"), "--output", str(tmp_path / "o")],
        [THMFORGE, "sql", corpus, "-c", "DROP VIEW theorems"],
        [THMFORGE, "search", corpus, "group", "--mode", "lexical", "--kind", "x' OR 1=1 --"],
    ]
    procs = [subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for argv in runs]
    for proc in procs:
        out, err = proc.communicate(timeout=180)
        assert proc.returncode == 2, err
        assert "Traceback" not in err and err.startswith("thmforge ") and "error:" in err


@pytest.fixture(scope="module")
def server(corpus):
    """`thmforge serve`'s server on a free loopback port, over the small corpus."""
    from retrieval.http_server import running
    from retrieval.service import SearchService
    from retrieval.web import create_app

    with running(create_app(SearchService(Searcher(open_catalog(corpus))), mcp_host=None)) as base:
        yield int(base.rsplit(":", 1)[1])


def post(port: int, body: bytes, content_type: str = "application/json"):
    con = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        con.request("POST", "/search", body=body, headers={"Content-Type": content_type})
        response = con.getresponse()
        return response.status, json.loads(response.read() or b"null")
    finally:
        con.close()


@pytest.mark.parametrize("body", [
    b"not json", b"\xff\xfe{}", b"[1, 2]", b'{"query": ""}', b'{"query": "x", "drop": "table"}',
    b'{"query": "group", "mode": "lexical", "kinds": ["x\' OR 1=1 --"]}',
    b'{"query": "group", "mode": "lexical", "kinds": "theorem"}',
    b'{"query": "group", "mode": "lexical", "year_from": "2020; DROP VIEW theorems"}',
    b'{"query": "group", "mode": "lexical", "n_results": true}',
    b'{"query": "group", "mode": "lexical", "paper_ids": [{"$ne": null}]}',
    b"[" * 30_000 + b"]" * 30_000,          # 60 kB, under the body limit, deeper than json's recursion limit
])
def test_search_api_answers_bad_requests_with_a_json_error(server, body):
    status, payload = post(server, body)
    assert status == 400 and isinstance(payload, dict) and payload.get("error"), payload
    status, payload = post(server, b'{"query": "finite group identity", "mode": "lexical"}')
    assert status == 200 and payload["results"]
