"""The command line: fast `--help`, no abbreviations, honest exit codes, one-line errors."""
import glob
import json
import os
import subprocess
import sys

import pytest

from benchmarks.chat_server import ChatServer
from runners.cli import COMMANDS, build_parser
from tests.cli_calls import run_cli
from tests.conftest import REPO, SAMPLES

HEAVY = ("apache_beam", "torch", "transformers", "sentence_transformers")


def _heavy_modules_after(argv: list[str]) -> list[str]:
    """The heavy packages imported by the time `thmforge ARGV` has answered (a fresh interpreter)."""
    script = ("import json, sys\nfrom runners.cli import main\n"
              f"try:\n    main({argv!r})\nexcept SystemExit:\n    pass\n"
              f"print(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r}))))")
    done = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("argv", [["--help"], ["build-corpus", "--help"], ["run-bench", "--help"],
                                  ["search", "--help"], ["build-corpus", "--output", "x"],
                                  ["build-corpus", "--input", "x", "--max-files", "lots"],
                                  ["eval-bench", "--instances"]])
def test_help_and_argument_errors_import_no_beam_or_torch(argv):
    assert _heavy_modules_after(argv) == []


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_no_command_accepts_abbreviated_options(command):
    parser = build_parser(command)
    assert not parser.allow_abbrev
    sub = parser._subparsers._group_actions[0].choices[command]
    assert not sub.allow_abbrev


def test_a_beam_option_is_not_taken_for_a_longer_thmforge_option():
    """`--project P` is Dataflow's project, not an abbreviation of --project-name."""
    args, unknown = build_parser("build-corpus").parse_known_args(
        ["build-corpus", "--input", "x", "--project", "P", "--region", "R"])
    assert unknown == ["--project", "P", "--region", "R"] and args.project_name is None


def test_help_lists_the_exit_codes(capfd):
    code, out, _ = run_cli(capfd, "build-corpus", "--help")
    assert code == 0 and "exit codes:" in out and "130" in out


def test_bench_answer_lists_every_missing_field_with_the_schema(capfd):
    code, _, err = run_cli(capfd, "bench-answer", "--task", "bst/insert",
                       "--spec", '{"initial": [], "operations": [50, 30, 70]}')
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "lacks insert, keys" in err and "{insert: list[int], keys: list[int]}" in err


def test_bench_answer_reports_only_the_fields_that_are_missing(capfd):
    code, _, err = run_cli(capfd, "bench-answer", "--task", "queue/compound", "--spec", '{"initial": [1]}')
    assert code == 2 and "lacks operations;" in err and "initial: list[int]" in err


def test_search_on_a_directory_that_is_not_a_corpus_is_an_error(capfd, tmp_path):
    (tmp_path / "instances").mkdir()            # a benchmark release, not a corpus
    code, out, err = run_cli(capfd, "search", tmp_path, "compact spaces", "--mode", "lexical")
    assert code == 2 and "not a corpus" in err and out == ""


def test_sql_on_a_directory_that_is_not_an_output_is_an_error(capfd, tmp_path):
    code, _, err = run_cli(capfd, "sql", tmp_path, "-c", "SELECT 1")
    assert code == 2 and "not a thmforge output directory" in err


def test_flink_preset_without_a_cluster_is_one_line(capfd, tmp_path):
    code, _, err = run_cli(capfd, "build-corpus", "--input", *glob.glob(str(SAMPLES / "arxiv" / "*.tar")),
                       "--output", tmp_path / "out", "--embed-model", "none", "--preset", "flink",
                       "--flink_master=127.0.0.1:1")
    assert code == 2 and "--flink_master=127.0.0.1:1: nothing answers there" in err
    assert len(err.strip().splitlines()) == 1


@pytest.mark.slow
def test_an_embedding_model_that_is_not_installed_says_so(capfd, tmp_path):
    code, _, err = run_cli(capfd, "build-corpus", "--input", *glob.glob(str(SAMPLES / "arxiv" / "*.tar")),
                       "--output", tmp_path / "out", "--embed-model", "no-such-model", "--no-progress")
    assert code == 2 and "--embed-model no-such-model: not installed here" in err
    assert "internet connection" not in err and len(err.strip().splitlines()) == 1


@pytest.mark.slow
def test_an_unreadable_input_fails_the_run(capfd, tmp_path):
    junk = tmp_path / "arXiv_src_2101_001.tar"
    junk.write_bytes(b"not a tar archive" * 300)
    code, _, err = run_cli(capfd, "build-corpus", "--input", junk, "--output", tmp_path / "out",
                       "--embed-model", "none", "--no-progress")
    assert code == 1, err
    assert "yielded no paper: unreadable as a whole" in err
    assert "recorded failures by stage: read 1; by class: unreadable-bundle 1" in err


@pytest.mark.slow
def test_a_describer_that_fails_for_every_statement_fails_the_run(capfd, tmp_path):
    inputs = sorted(glob.glob(str(SAMPLES / "arxiv" / "*.tar")))[:1]
    with ChatServer(respond=lambda request: "$x^2 + \\alpha$") as server:      # LaTeX: always rejected
        code, _, err = run_cli(capfd, "build-corpus", "--input", *inputs, "--output", tmp_path / "out",
                           "--embed-model", "none", "--no-progress", "--describer", "openai",
                           "--llm-endpoint", server.url, "--llm-model", "loopback-chat",
                           "--llm-max-attempts", "1")
    assert code == 1, err
    assert "the openai describer failed for all" in err
    assert "statements by kind:" in err and "papers: ok " in err
