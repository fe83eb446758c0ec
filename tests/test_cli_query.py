"""The query commands end to end: sql, search, eval-retrieval and serve, as a user runs them."""
import json
import os
import pathlib
import re
import subprocess
import sys
import urllib.request

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).parent / "retrieval"))
from query_corpus import STATEMENTS, write_corpus  # noqa: E402

from runners.cli import main  # noqa: E402
from tests.cli_calls import run_cli  # noqa: E402


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    from transforms.embed.encoder import Encoder, EncoderConfig

    return write_corpus(tmp_path_factory.mktemp("cli-corpus"), Encoder(EncoderConfig(device="cpu")))


def test_sql_command(capfd, corpus):
    code, out, _ = run_cli(capfd, "sql", corpus, "-c", "SELECT kind, count(*) AS n FROM theorems GROUP BY kind ORDER BY n DESC, kind", "--format", "csv")
    assert code == 0
    assert out.splitlines() == ["kind,n", "theorem,7", "definition,3", "lemma,3", "corollary,1", "proposition,1"]
    code, out, _ = run_cli(capfd, "sql", corpus, "-c", "SELECT paper_id, title FROM papers ORDER BY paper_id LIMIT 1", "--format", "json")
    assert json.loads(out) == {"paper_id": "arxiv:1901.00002", "title": "Notes on point-set topology"}
    code, out, _ = run_cli(capfd, "sql", corpus, "-c", "SELECT count(*) AS n FROM theorems")
    assert code == 0 and "15" in out


@pytest.mark.parametrize("sql, message", [
    ("DROP VIEW theorems", "read-only"),
    ("COPY theorems TO 'out.csv'", "read-only"),
    ("SELECT * FROM read_csv('/etc/passwd')", "Permission"),
    ("SELECT * FROM no_such_table", "no_such_table"),
    ("SELEC 1", "syntax"),
])
def test_sql_refusals_exit_2(capfd, corpus, sql, message):
    code, out, err = run_cli(capfd, "sql", corpus, "-c", sql)
    assert code == 2 and message in err and "Traceback" not in err


def test_sql_repl_reads_statements_until_semicolon(corpus):
    script = "SELECT 40\n + 2 AS answer;\nDROP VIEW papers;\nSELECT count(*) AS n FROM papers;\n"
    proc = subprocess.run([sys.executable, "-m", "runners.cli", "sql", str(corpus), "--format", "csv"],
                          input=script, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0
    assert proc.stdout.splitlines() == ["answer", "42", "n", "3"]
    assert "read-only" in proc.stderr


def test_search_command(capfd, corpus):
    _, _, _, label, text = STATEMENTS[5]
    code, out, _ = run_cli(capfd, "search", corpus, text, "-k", "3", "--format", "json")
    assert code == 0
    hits = json.loads(out)
    assert [h["rank"] for h in hits] == [1, 2, 3] and hits[0]["label"] == label
    code, out, _ = run_cli(capfd, "search", corpus, "normal subgroup kernel", "--kind", "lemma,definition",
                           "--year", "2010:2016", "--mode", "hybrid", "--author", "Noether", "-k", "5")
    assert code == 0 and "Lemma 3.4" in out and "Theorem" not in out
    code, out, _ = run_cli(capfd, "search", corpus, "compact", "--category", "math.GN", "--mode", "lexical")
    assert code == 0 and out.count("Notes on point-set topology") >= 3 and "Algebra notes" not in out


@pytest.mark.parametrize("argv, message", [
    (["--kind", "theorem' OR '1'='1"], "kind"),
    (["--category", "math.AG; DROP VIEW theorems"], "category"),
    (["--paper", "x' UNION SELECT * FROM papers --"], "paper_id"),
    (["--year", "2020:1999"], "empty"),
    (["--year", "nineteen"], "--year"),
    (["-k", "0"], "-k"),
    (["--source", "web"], "source"),
    (["--query-model", "BAAI/bge-small-en"], "differs"),
    (["--rerank", "/nonexistent/cross-encoder"], "cross-encoder"),
])
def test_search_bad_options_exit_2(capfd, corpus, argv, message):
    code, out, err = run_cli(capfd, "search", corpus, "compact sets", *argv)
    assert code == 2 and message in err and "Traceback" not in err


def test_search_argparse_errors_exit_2(corpus):
    with pytest.raises(SystemExit) as exc:
        main(["search", str(corpus), "x", "--mode", "magic"])
    assert exc.value.code == 2
    code = main(["search", str(corpus / "nope"), "x"])
    assert code == 2


def test_eval_retrieval_command(capfd, corpus, tmp_path):
    queries = tmp_path / "q.jsonl"
    queries.write_text("\n".join(json.dumps({"query": t, "labels": [l]}) for _, _, _, l, t in STATEMENTS) + "\n")
    ranks = tmp_path / "ranks.jsonl"
    code, out, _ = run_cli(capfd, "eval-retrieval", corpus, "--queries", queries, "--format", "json",
                           "--ranks-out", ranks)
    assert code == 0
    report = json.loads(out)
    assert report["queries"] == 15 and report["unresolved"] == 0
    assert report["modes"]["vector"]["theorem"]["hit@1"] == 1.0
    assert set(report["modes"]) == {"vector", "lexical", "hybrid"}
    assert len(ranks.read_text().splitlines()) == 45
    code, out, _ = run_cli(capfd, "eval-retrieval", corpus, "--queries", queries, "--modes", "lexical")
    assert code == 0 and "lexical" in out and "hit@10 thm/paper" in out
    code, _, err = run_cli(capfd, "eval-retrieval", corpus, "--queries", tmp_path / "missing.jsonl")
    assert code == 2 and "cannot read" in err
    code, _, err = run_cli(capfd, "eval-retrieval", corpus, "--queries", queries, "--modes", "vector,bogus")
    assert code == 2 and "--modes" in err


def test_serve_command_over_loopback(corpus):
    env = dict(os.environ, HF_HUB_OFFLINE="1", PYTHONUNBUFFERED="1")
    proc = subprocess.Popen([sys.executable, "-m", "runners.cli", "serve", str(corpus), "--port", "0",
                             "--cors-origin", "https://example.org", "--threads", "3", "--embed-batch", "4"],
                            stderr=subprocess.PIPE, text=True, env=env)
    try:
        url = None
        for line in proc.stderr:
            match = re.search(r"(http://127\.0\.0\.1:\d+)/search", line)
            if match:
                url = match.group(1)
                break
        assert url, "server did not announce its address"
        body = json.dumps({"query": "every bounded monotone sequence converges", "n_results": 2}).encode()
        req = urllib.request.Request(url + "/search", data=body, headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=60) as response:
            payload = json.loads(response.read())
        assert payload["results"][0]["label"] == "thm:monotone"
        with urllib.request.urlopen(url + "/openapi.json", timeout=30) as response:
            assert json.loads(response.read())["paths"]["/search"]["post"]
        with urllib.request.urlopen(url + "/", timeout=30) as response:          # the search page
            assert b'<input id="q"' in response.read()
        req = urllib.request.Request(url + "/health", headers={"Origin": "https://example.org"})
        with urllib.request.urlopen(req, timeout=30) as response:
            assert response.headers["Access-Control-Allow-Origin"] == "https://example.org"
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_serve_rejects_bad_pool_sizes(capfd, corpus):
    for flag, value in (("--threads", "0"), ("--threads", "257"), ("--embed-batch", "0")):
        code, _, err = run_cli(capfd, "serve", corpus, flag, value)
        assert code == 2 and f"{flag}: 1 to" in err


class Terminal:
    """`thmforge sql` on a real pseudo-terminal of 80 columns: what a user at a shell sees."""

    def __init__(self, corpus, home, columns=80):
        import fcntl
        import pty
        import struct
        import termios

        self.master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
        env = {**os.environ, "HOME": str(home), "COLUMNS": str(columns), "TERM": "xterm"}
        self.proc = subprocess.Popen([sys.executable, "-m", "runners.cli", "sql", str(corpus)],
                                     stdin=slave, stdout=slave, stderr=slave, env=env, close_fds=True)
        os.close(slave)
        self.seen = b""

    def wait_for(self, text: bytes, limit_s: float = 120) -> bytes:
        """Read the terminal until `text` appears after what was already consumed (or the program ends)."""
        import select

        start = len(self.seen)
        while text not in self.seen[start:]:
            ready, _, _ = select.select([self.master], [], [], limit_s)
            assert ready, f"no {text!r} on the terminal; it shows {self.seen[-500:]!r}"
            try:
                chunk = os.read(self.master, 65536)
            except OSError:          # the program ended: the terminal closed
                chunk = b""
            if not chunk:
                break
            self.seen += chunk
        return self.seen[start:]

    def type(self, keys: str) -> None:
        os.write(self.master, keys.encode())

    def close(self) -> int:
        self.type("\x04")            # Ctrl-D at an empty prompt ends the session
        self.wait_for(b"\x00never")  # everything up to the end
        os.close(self.master)
        return self.proc.wait(timeout=60)


def table_cells(shown: bytes) -> list[str]:
    """The values of a one-column table DuckDB drew (not the echo of the typed line)."""
    rows = [line.strip("│ \r") for line in shown.decode("utf-8", "replace").splitlines() if line.startswith("│")]
    return [row for row in rows if row not in ("n", "int32")]


def test_sql_on_a_terminal_edits_lines_keeps_history_and_fits_the_width(corpus, tmp_path):
    terminal = Terminal(corpus, tmp_path)
    try:
        terminal.wait_for(b"thmforge> ")
        terminal.type("SELECT 3 AS n;\x1b[D\x1b[D\x1b[D\x1b[D\x1b[D\x1b[D\x1b[D4\r")   # left 7: before "3", type 4
        assert table_cells(terminal.wait_for(b"thmforge> ")) == ["43"]
        terminal.type("\x1b[A\r")                                                     # up: the same line again
        assert table_cells(terminal.wait_for(b"thmforge> ")) == ["43"]
        terminal.type("SELECT theorem_id, embedding FROM theorems ORDER BY theorem_id LIMIT 2;\r")
        table = terminal.wait_for(b"thmforge> ")
    finally:
        code = terminal.close()
    assert code == 0
    lines = [line for line in table.decode("utf-8", "replace").splitlines() if line.startswith(("│", "┌", "└"))]
    assert lines and all(len(line.rstrip()) <= 80 for line in lines)
    assert "(384 values)" in table.decode()
    history = (tmp_path / ".thmforge_sql_history").read_text()
    assert "SELECT 43 AS n;" in history
