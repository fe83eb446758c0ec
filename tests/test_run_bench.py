"""run-bench against a real chat-completions server on loopback that injects faults."""
import json
import threading
import time

import pyarrow.dataset as ds
import pytest

from benchmarks.chat_server import ChatServer, FaultPlan
from benchmarks.heuristic_policy import respond
from pipelines.run_bench import RunBenchError, RunConfig, answered_keys, write_chunk
from runners.cli import main
from test_eval_bench import release_rows
from transforms.bench import prompts
from transforms.llm import RateLimiter
from transforms.scoring.tables import write_instances

MODEL = "loopback/heuristic"


@pytest.fixture(scope="module")
def small_release(tmp_path_factory):
    rows = release_rows()[::6]          # every task family is still represented, ~30 instances
    return write_instances(rows, tmp_path_factory.mktemp("release")), rows


def predictions(out):
    table = ds.dataset(str(out / "predictions"), partitioning="hive").to_table()
    return table.to_pylist()


def run_bench(release, out, server, *extra):
    return main(["run-bench", "--instances", str(release), "--model", MODEL, "--endpoint", server.url,
                 "--output", str(out), "--trials", "2", "--timeout", "5", "--max-attempts", "3",
                 "--backoff", "0.01", "--concurrency", "4", *extra])


@pytest.mark.slow
def test_faults_end_in_a_prediction_or_a_recorded_failure_and_resume_asks_only_those(small_release, tmp_path):
    release, rows = small_release
    faults = FaultPlan(rate_429=0.15, rate_500=0.2, rate_timeout=0.08, rate_malformed=0.15,
                       retry_after_s=0.02, timeout_sleep_s=4.0, seed=3)
    out = tmp_path / "run"
    with ChatServer(respond=respond, faults=faults) as server:
        code = run_bench(release, out, server, "--timeout", "2")
        first_requests = server.request_count
        assert set(server.fault_counts) == {"429", "500", "timeout", "malformed"}
    first = predictions(out)
    keys = [(p["instance_id"], p["trial"]) for p in first]
    assert sorted(keys) == sorted((r["instance_id"], t) for r in rows for t in range(2))
    answered = [p for p in first if p["error"] is None]
    failed = [p for p in first if p["error"] is not None]
    assert failed and answered, "the fault plan should leave both kinds"
    assert code == 1
    for p in answered:
        assert p["response"] and p["input_tokens"] > 0 and p["attempts"] >= 1 and p["latency_s"] >= 0
        assert p["model"] == MODEL and p["prompt_mode"] == prompts.DEFAULT_MODE
    for p in failed:
        assert p["response"] is None and p["attempts"] == 3
        assert p["error"].split(" ")[0] in {"rate-limited", "server-error", "timeout", "malformed-response"}
    assert first_requests == sum(p["attempts"] for p in first)
    assert len(list((out / "predictions").rglob("*.parquet"))) == 1
    (logged,) = [json.loads(line) for line in open(out / "runs.jsonl")]
    assert logged["config"]["model"] == MODEL and logged["failed"] == len(failed)

    with ChatServer(respond=respond) as server:
        assert run_bench(release, out, server) == 0
        asked = sorted((json.loads(json.dumps(b["messages"]))[0]["content"]) for b in server.requests)
    by_id = {r["instance_id"]: r for r in rows}
    assert asked == sorted(by_id[p["instance_id"]]["prompt"] for p in failed)
    second = predictions(out)
    assert len(second) == len(first) and all(p["error"] is None for p in second)
    kept = {(p["instance_id"], p["trial"]): p["response"] for p in answered}
    assert all(p["response"] == kept[(p["instance_id"], p["trial"])]
               for p in second if (p["instance_id"], p["trial"]) in kept)

    evaluated = tmp_path / "eval"
    assert main(["eval-bench", "--instances", str(release), "--predictions", str(out), "--output", str(evaluated)]) == 0
    scores = ds.dataset(str(evaluated / "scores"), partitioning="hive").to_table()
    assert scores.num_rows == len(second)


@pytest.mark.slow
def test_concurrency_is_bounded_and_prompt_mode_is_rendered(small_release, tmp_path):
    release, rows = small_release
    with ChatServer(respond=respond, hold_until_in_flight=3) as server:    # counts in flight itself
        assert run_bench(release, tmp_path / "run", server, "--prompt-mode", "answer-only", "--concurrency", "3",
                         "--seed", "10", "--temperature", "0.7", "--max-tokens", "64", "--reasoning-effort", "low",
                         "--timeout", "60") == 0
        sent = [b["messages"][0]["content"] for b in server.requests]
        options = {(b["seed"], b["temperature"], b["max_tokens"], b["reasoning_effort"]) for b in server.requests}
    assert options == {(10, 0.7, 64, "low"), (11, 0.7, 64, "low")}
    assert server.max_in_flight == 3
    expected = [prompts.render(json.loads(r["prompt_parts"]), "answer-only") for r in rows]
    assert sorted(sent) == sorted(expected * 2)
    with pytest.raises(RunBenchError, match="prompt mode answer-only"):
        answered_keys(predictions(tmp_path / "run"), "stepwise", MODEL)


def test_rate_limiter_spaces_requests():
    limiter = RateLimiter(50.0)
    started = time.monotonic()
    threads = [threading.Thread(target=limiter.acquire) for _ in range(11)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert time.monotonic() - started >= 10 / 50 - 0.01


def test_bad_arguments_are_usage_errors(small_release, tmp_path, capsys):
    release, _ = small_release
    assert main(["run-bench", "--instances", str(release), "--model", "m", "--endpoint", "http://127.0.0.1:9/v1",
                 "--output", str(tmp_path), "--trials", "0"]) == 2
    assert "trials must be at least 1" in capsys.readouterr().err
    with pytest.raises(RunBenchError, match="unknown prompt mode"):
        RunConfig(endpoint="http://x", model="m", prompt_mode="telepathy")
    with pytest.raises(RunBenchError, match="http:// or https://"):
        RunConfig(endpoint="localhost:8000", model="m")


@pytest.mark.slow
def test_chunks_of_an_interrupted_run_are_kept_and_a_rejected_key_fails_fast(small_release, tmp_path, monkeypatch):
    release, rows = small_release
    out = tmp_path / "run"
    done = [{"instance_id": r["instance_id"], "model": MODEL, "trial": t, "prompt_mode": prompts.DEFAULT_MODE,
             "response": "earlier answer", "attempts": 1} for r in rows[:5] for t in range(2)]
    write_chunk(done, str(out), MODEL)                       # what an interrupted run leaves behind

    monkeypatch.setenv("THMFORGE_LLM_API_KEY", "wrong-key")
    with ChatServer(respond=respond, api_key="right-key") as server:
        assert run_bench(release, out, server) == 1
        assert server.request_count == 2 * (len(rows) - 5)   # one attempt each: a 401 is not retried
    rejected = [p for p in predictions(out) if p["error"]]
    assert len(rejected) == 2 * (len(rows) - 5)
    assert all(p["error"].startswith("request-rejected after 1 attempt(s)") and p["attempts"] == 1 for p in rejected)

    monkeypatch.setenv("THMFORGE_LLM_API_KEY", "right-key")
    with ChatServer(respond=respond, api_key="right-key") as server:
        assert run_bench(release, out, server) == 0
        assert server.request_count == 2 * (len(rows) - 5)
    final = predictions(out)
    assert len(final) == 2 * len(rows) and not any(p["error"] for p in final)
    assert sum(p["response"] == "earlier answer" for p in final) == 10


def test_a_subset_asks_only_its_cells_and_reports_progress(tmp_path, capsys):
    rows = release_rows(per_cell=3)
    release = write_instances([r for r in rows if r["suite"] in ("main", "spatial")], tmp_path / "release")
    out = tmp_path / "run"
    with ChatServer(respond=respond) as server:
        assert main(["run-bench", "--instances", str(release), "--model", MODEL, "--endpoint", server.url,
                     "--output", str(out), "--trials", "1", "--tasks", "bst/insert,kd_tree",
                     "--difficulties", "easy,hard", "--limit", "2"]) == 0
    # bst/insert (main) and kd_tree/construct (main) and kd_tree/spatial_construct (7 variants): 2 difficulties, 2 each
    got = sorted(p["instance_id"] for p in predictions(out))
    expected = sorted(r["instance_id"] for r in rows if r["structure"] in ("bst", "kd_tree") and r["task"] in
                      ("insert", "construct", "spatial_construct") and r["difficulty"] != "medium" and r["index"] < 2)
    assert got == expected and len(got) == (2 + 2 + 2 * 7) * 2
    assert f"run-bench {MODEL} (this worker): {len(got)}/{len(got)}" in capsys.readouterr().err
    logged = json.loads((out / "runs.jsonl").read_text().splitlines()[-1])
    assert logged["selection"]["limit"] == 2 and logged["selected_instances"] == len(got)
    assert main(["run-bench", "--instances", str(release), "--model", MODEL, "--endpoint", "http://127.0.0.1:9",
                 "--output", str(out), "--tasks", "nope/x"]) == 2
    assert "the release has no tasks nope/x" in capsys.readouterr().err


@pytest.fixture(scope="module")
def tiny_release(tmp_path_factory):
    return write_instances(release_rows()[:2], tmp_path_factory.mktemp("tiny"))


def test_flood_responses_are_recorded_as_too_large(tiny_release, tmp_path):
    with ChatServer(respond=respond, pad_response_to=50_000_000) as server:
        code = run_bench(tiny_release, tmp_path / "run", server, "--trials", "1", "--max-response-bytes", "100000",
                         "--timeout", "60")
        assert server.request_count == 2                   # too large is not retried
    rows = predictions(tmp_path / "run")
    assert code == 1 and len(rows) == 2
    assert all(r["response"] is None and r["error"].startswith("response-too-large after 1 attempt(s)")
               for r in rows)


def test_timeout_bounds_the_whole_request_against_a_trickling_endpoint(tiny_release, tmp_path):
    with ChatServer(respond=respond, trickle_s=0.5) as server:       # minutes per body, a byte each 0.5 s
        code = run_bench(tiny_release, tmp_path / "run", server, "--trials", "1", "--timeout", "1",
                         "--max-attempts", "2")
        assert server.request_count == 4
    rows = predictions(tmp_path / "run")
    assert code == 1 and all(r["error"].startswith("timeout after 2 attempt(s)") for r in rows)


def test_progress_counts_every_request_against_the_total(tiny_release, tmp_path, capsys):
    with ChatServer(respond=respond) as server:
        assert run_bench(tiny_release, tmp_path / "run", server, "--trials", "3") == 0
    assert f"thmforge: run-bench {MODEL} (this worker): 6/6 requests (100%)" in capsys.readouterr().err
