"""`--describer openai` end to end against the real loopback chat server."""
import pytest
from apache_beam.options.pipeline_options import PipelineOptions

from benchmarks.chat_server import ChatServer, FaultPlan
from describe_helpers import make_row, run_describe, words_answer
from transforms.describe import DescribeConfig, summarize
from transforms.describe.cache import WriteCacheShards, read_entries
from transforms.describe.records import statement_hash
from transforms.describe.transform import row_key


def llm_config(server, tmp_path, **overrides):
    args = ["--describer", "openai", "--llm-endpoint", server.url, "--llm-model", "tiny-llm",
            "--llm-concurrency", "4", "--llm-timeout", "2", "--describe-cache", str(tmp_path / "cache")]
    values = dict(initial_backoff_s=0.01, max_backoff_s=0.1, throttle_delay_s=0.01)
    values.update(overrides)
    return DescribeConfig.from_options(PipelineOptions(args), **values)


def test_describes_then_rerun_is_served_from_cache(rows, tmp_path):
    duplicate = make_row(0, rows[0]["statement_latex"], paper="p2")      # same statement, other paper
    rows = rows + [duplicate]
    with ChatServer(respond=words_answer) as server:
        config = llm_config(server, tmp_path)
        out, failures, run = run_describe(rows, config, tmp_path, "first")
        first_requests = server.request_count
        server.reset()
        again, failures_again, rerun = run_describe(rows, config, tmp_path, "second")
        assert server.request_count == 0
    assert first_requests == len(rows) - 1 == run["run_requests"]        # duplicate asked once
    assert failures == failures_again == []
    by_id = {r["theorem_id"]: r for r in out}
    assert by_id["p1#000"]["description"] == "A result about every bounded monotone sequence real numbers converges."
    assert by_id["p2#000"]["description"] == by_id["p1#000"]["description"]
    assert {r["description_model"] for r in out} == {"tiny-llm"}
    assert {r["description_template"] for r in out} == {"slogan-v1"}
    assert {r["description_context"] for r in out} == {"body"}
    assert by_id["p1#000"]["description_input_tokens"] > 50 and by_id["p2#000"]["description_input_tokens"] == 0
    assert sorted(again, key=lambda r: r["theorem_id"]) == sorted(out, key=lambda r: r["theorem_id"])
    assert rerun["run_cache_hits"] == len(rows) and rerun["run_requests"] == 0
    assert len(read_entries(config.cache_dir)) == len(rows) - 1
    totals = summarize(out, failures)
    assert totals["described"] == len(rows) and totals["input_tokens"] == run["run_input_tokens"]


def test_prompt_carries_template_and_context(rows, tmp_path):
    row = make_row(0, rows[0]["statement_latex"], _abstract="We study sequences.", _introduction="Intro text.")
    with ChatServer(respond=words_answer) as server:
        out, _, _ = run_describe([row], llm_config(server, tmp_path, context="body+abstract"), tmp_path)
        [request] = server.requests
    system, user = request["messages"]
    assert "at most four sentences" in system["content"]
    assert "abstract of the paper" in user["content"] and "We study sequences." in user["content"]
    assert "Intro text." not in user["content"]
    assert user["content"].endswith(rows[0]["statement_latex"])
    assert request["temperature"] == 0.2 and request["model"] == "tiny-llm"
    assert out[0]["description_context"] == "body+abstract" and "_abstract" not in out[0]


def test_transient_faults_are_retried_until_success(rows, tmp_path):
    plan = FaultPlan(rate_429=0.25, rate_500=0.25, rate_timeout=0.15, rate_malformed=0.15, seed=1,
                     retry_after_s=0.02, timeout_sleep_s=4.0, faulty_attempts=3)
    with ChatServer(respond=words_answer, faults=plan) as server:
        out, failures, run = run_describe(rows, llm_config(server, tmp_path, max_attempts=4), tmp_path)
        faults = dict(server.fault_counts)
    assert failures == []
    assert all(r["description"].startswith("A result about") for r in out)
    assert set(faults) == {"429", "500", "timeout", "malformed"}
    assert run["run_requests"] == len(rows) + sum(faults.values())


def test_answers_failing_validation_get_one_stricter_retry(tmp_path):
    rows = [make_row(0, "BADFIRST the sum of two even numbers is even."),
            make_row(1, "TOOLONG every tree with n vertices has n minus one edges."),
            make_row(2, "ALWAYSBAD a group of prime order is cyclic."),
            make_row(3, "EMPTYANSWER zero is even.")]
    with ChatServer(respond=words_answer) as server:
        out, failures, run = run_describe(rows, llm_config(server, tmp_path), tmp_path)
        strict_requests = [r for r in server.requests if len(r["messages"]) == 4]
    by_id = {r["theorem_id"]: r for r in out}
    assert by_id["p1#000"]["description"].startswith("A result about badfirst")
    assert by_id["p1#001"]["description"].startswith("A result about toolong")
    assert by_id["p1#002"]["description"] is None and by_id["p1#003"]["description"] is None
    reasons = {f["theorem_id"]: (f["error_class"], f["message"]) for f in failures}
    assert reasons["p1#002"][0] == "invalid-description" and "LaTeX" in reasons["p1#002"][1]
    assert reasons["p1#003"][0] == "invalid-description" and "empty" in reasons["p1#003"][1]
    assert len(strict_requests) == 4 and run["run_rejected_answers"] == 6
    stricter = sorted(r["messages"][3]["content"].split(".")[0] for r in strict_requests)
    assert stricter == ["That answer was rejected: contains LaTeX or math symbols"] * 2 + [
        "That answer was rejected: empty answer", "That answer was rejected: overlong: 6 sentences (at most 4)"]
    rows_again = rows[:1]
    with ChatServer(respond=words_answer) as server:                   # only successes are cached
        run_describe(rows + rows_again, llm_config(server, tmp_path), tmp_path, "again")
        assert server.request_count == 4                             # two failed ones, asked twice each


def test_exhausted_retries_keep_the_row_and_record_the_reason(rows, tmp_path):
    with ChatServer(respond=words_answer, faults=FaultPlan(rate_500=1.0)) as server:
        out, failures, run = run_describe(rows[:2], llm_config(server, tmp_path, max_attempts=2), tmp_path)
    assert [r["description"] for r in out] == [None, None]
    assert {f["error_class"] for f in failures} == {"server-error"}
    assert all("after 2 attempt(s)" in f["message"] for f in failures)
    assert run["run_requests"] == 4


def test_twenty_percent_errors_every_statement_accounted_for(tmp_path):
    rows = [make_row(i, f"Statement number {i} about object{i} holds.") for i in range(40)]
    plan = FaultPlan(rate_429=0.05, rate_500=0.05, rate_timeout=0.05, rate_malformed=0.05, seed=7,
                     retry_after_s=0.01, timeout_sleep_s=4.0)
    with ChatServer(respond=words_answer, faults=plan) as server:
        config = llm_config(server, tmp_path, max_attempts=2, llm_timeout_s=2, concurrency=8)
        out, failures, run = run_describe(rows, config, tmp_path)
    totals = summarize(out, failures)
    manifest = config.manifest({**totals, **run})
    assert len(out) == len(rows) == manifest["statements"]
    assert manifest["described"] + manifest["failed"] == manifest["statements"]
    assert manifest["failed"] == len(failures) == sum(manifest["failed_by_reason"].values())
    assert 0 < manifest["failed"] < 10                              # about 0.2**2 of 40
    assert all(f["message"] and f["error_class"] for f in failures)
    assert {r["theorem_id"] for r in out} == {r["theorem_id"] for r in rows}
    assert {f["theorem_id"] for f in failures} == {r["theorem_id"] for r in out if r["description"] is None}


def test_interrupted_run_resumes_from_flushed_shards(rows, tmp_path):
    cache_dir = str(tmp_path / "cache")
    with ChatServer(respond=words_answer) as server:
        config = llm_config(server, tmp_path)
        writer = WriteCacheShards(cache_dir, flush_every=2)
        writer.start_bundle()
        for row in rows[:3]:                                         # a run that died after 3 answers:
            writer.process({"key": row_key(row, config), "statement_hash": statement_hash(row),
                            "context": "body", "template": "slogan-v1", "model": "tiny-llm",
                            "description": "Cached words.", "input_tokens": 5, "output_tokens": 2})
        # no finish_bundle: only the first full shard (2 entries) reached the disk
        assert len(read_entries(cache_dir)) == 2
        out, failures, run = run_describe(rows, config, tmp_path)
        assert server.request_count == len(rows) - 2
    assert sum(r["description"] == "Cached words." for r in out) == 2
    assert run["run_cache_hits"] == 2


def test_configuration_errors_are_clear(tmp_path):
    with pytest.raises(ValueError, match="--llm-endpoint"):
        DescribeConfig(describer="openai", llm_model="m", cache_dir=str(tmp_path))
    with pytest.raises(ValueError, match="--llm-model"):
        DescribeConfig(describer="vllm", cache_dir=str(tmp_path))
    with pytest.raises(ValueError, match="unknown describe template"):
        DescribeConfig(describer="openai", llm_model="m", llm_endpoint="http://x/v1", cache_dir="c", template="nope")
    config = DescribeConfig.from_options(PipelineOptions(["--describer", "openai", "--llm-endpoint", "http://h/v1",
                                                          "--llm-model", "m", "--output", str(tmp_path / "out")]))
    assert config.cache_dir == f"{tmp_path}/out/_cache/descriptions"
