"""The README's commands, run as written: every `thmforge` line of its bash blocks (in order, in one
working directory, so later commands reuse the corpus the first one built) and its DuckDB SQL.

Paths a newcomer replaces with their own are substituted from one table; a command that cannot run
here is listed with the reason, and a README command that is in neither list fails the test.
"""
import os
import re
import shlex
import subprocess
import sys
import time

import duckdb
import pytest

from benchmarks.chat_server import ChatServer
from tests.conftest import REPO, SAMPLES

pytestmark = pytest.mark.slow

# README text -> what runs here: placeholders for paths and services that cannot exist in CI.
# {chat} is the loopback chat server's URL; the Dataflow job is only translated (--dry_run=True):
# its bucket and project become valid names (Beam looks up a default bucket for invalid ones).
SUBSTITUTIONS = {
    "--model NAME --endpoint http://localhost:8000/v1": "--model loopback-chat --endpoint {chat}",
    "--input 's3://arxiv/src/arXiv_src_*.tar' --s3-requester-pays": f"--input '{SAMPLES}/arxiv/arXiv_src_*.tar'",
    "--metadata gs://BUCKET/arxiv-metadata-oai-snapshot.json":
        f"--metadata {SAMPLES}/arxiv/arxiv-metadata-oai-snapshot.json",
    "--output gs://BUCKET/corpus": "--output gs://BUCKET/corpus --dry_run=True",
    "BUCKET": "thmforge-ci",
    "PROJECT": "thmforge-ci",
    "'bundles/arXiv_src_21*.tar'": f"'{SAMPLES}/arxiv/arXiv_src_21*.tar'",
    "--metadata arxiv-metadata-oai-snapshot.json": f"--metadata {SAMPLES}/arxiv/arxiv-metadata-oai-snapshot.json",
    # the books (../shared/corpora/books; tests/latex/test_shared_corpora.py) replaced by sample papers
    "path/to/hott-book/hott-online.tex": f"{SAMPLES}/src/2104/2104.00001/compact.tex",
    "symmetry-book/book.tex --format-file macros.tex":
        f"{SAMPLES}/src/2103/2103.00004/main.tex --format-file {SAMPLES}/src/2103/2103.00004/macros.tex",
    "retrieval/evalsets/queries.jsonl": f"{REPO}/retrieval/evalsets/queries.jsonl",
}

# README command (its first words) -> why this test does not run it
NOT_RUN = {
    "make demo": "installs the project into .venv/ and reruns this suite's work; CI runs make test itself",
    "make test": "runs this suite",
    "thmforge build-corpus --source stacks": "needs a Stacks Project checkout; tests/sources/test_stacks.py",
    "thmforge build-corpus --source proofwiki": "needs a ProofWiki export; tests/sources/test_proofwiki.py",
    "thmforge serve": "serves until stopped; tests/test_cli_query.py::test_serve_command_over_loopback",
    "thmforge mcp": "serves an MCP client on stdin/stdout; tests/retrieval/test_mcp.py::test_mcp_over_stdio",
    "thmforge build-bench --output out/bench-big": "91 s for --per-cell 1000 (tests/bench cover --per-cell)",
    "docker ": "needs Docker and a registry",
}


def _blocks(language: str) -> list[str]:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    return re.findall(rf"^```{language}\n(.*?)^```", text, flags=re.S | re.M)


def _commands() -> list[str]:
    """Every command line of the bash blocks, continuation lines joined, spaces collapsed."""
    commands = []
    for block in _blocks("bash"):
        for line in block.replace("\\\n", " ").splitlines():
            if line.strip() and not line.lstrip().startswith("#"):
                commands.append(re.sub(r"\s+", " ", line.strip()))
    return commands


def _skip_reason(command: str) -> str | None:
    return next((reason for prefix, reason in NOT_RUN.items() if command.startswith(prefix)), None)


def test_every_readme_command_runs_as_written(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    ran = []
    with ChatServer() as chat:
        for command in _commands():
            ran += _run(command, tmp_path, env, chat.url)
    assert {"build-corpus", "sql", "search", "eval-retrieval", "build-bench", "bench-answer", "run-bench",
            "eval-bench"} <= set(ran)


def _run(command: str, cwd, env: dict, chat: str) -> list[str]:
    """Run one README command with the substitutions; the subcommand run, or none when skipped."""
    if _skip_reason(command):
        return []
    assert command.startswith("thmforge "), f"README command neither run nor listed in NOT_RUN: {command}"
    for readme_text, here in SUBSTITUTIONS.items():
        command = command.replace(readme_text, here.replace("{chat}", chat))
    argv = shlex.split(command, comments=True)
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "runners.cli", *argv[1:]], cwd=cwd, env=env,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"{command}\n{done.stderr[-3000:]}"
    assert "Traceback" not in done.stderr
    print(f"{time.monotonic() - started:6.1f} s  {command[:100]}")     # where the time goes (pytest -s)
    return [argv[1]]


def test_readme_sql_runs_in_plain_duckdb(tmp_path, monkeypatch):
    """The raw DuckDB snippet over a sample corpus at out/corpus: `year` typed as the views type it."""
    out = tmp_path / "out" / "corpus"
    done = subprocess.run([sys.executable, "-m", "runners.cli", "build-corpus", "--input",
                           *sorted(str(p) for p in (SAMPLES / "arxiv").glob("*.tar")), "--embed-model", "none",
                           "--no-progress", "--output", str(out)], cwd=tmp_path, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=600)
    assert done.returncode == 0, done.stderr
    raw, exported = _blocks("sql")
    monkeypatch.chdir(tmp_path)
    con = duckdb.connect()
    for statement in con.extract_statements(raw):
        con.execute(statement.query)
    assert con.execute("SELECT typeof(year) FROM theorems LIMIT 1").fetchone() == ("INTEGER",)
    statements = con.execute("SELECT count(*) FROM theorems").fetchone()[0]
    assert statements > 0
    # the exported DuckDB file answers the export paragraph's queries (a fresh process: test_export.py)
    done = subprocess.run([sys.executable, "-m", "runners.cli", "export", str(out), "--format", "duckdb",
                           "--output", "out/corpus.duckdb"], cwd=tmp_path, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=600)
    assert done.returncode == 0, done.stderr
    con = duckdb.connect()
    results = [con.execute(statement.query).fetchall() for statement in con.extract_statements(exported)]
    assert sum(n for _, n in results[2]) == statements
