"""eval-bench end to end: oracle answers spelled differently score 1.0 on every instance of every task."""
import json
import struct

import duckdb
import pytest

from runners.cli import main
from schemas import SCORES
from transforms.bench.instances import build_instance
from transforms.bench.registry import all_tasks, get_task
from transforms.bench.release import DEFAULT_TOTAL, release_cells
from transforms.scoring.tables import write_instances

MODEL = "oracle/v1"
TRIALS = 4


def release_rows(per_cell: int = 1, seed: int = 7) -> list[dict]:
    """Instances of every registered task and cell, built by the benchmark's own generator."""
    return [build_instance(task, difficulty, index, seed, variant)
            for task in all_tasks() for difficulty, variant in task.cells for index in range(per_cell)]


def respelled(value, answer_type):
    """The same answer written differently: floats for ints, lower-case colours, pairs reversed."""
    if isinstance(value, (bool, str, float)) or value is None:
        return value
    if isinstance(value, int):
        return float(value)
    if answer_type == "tree:binary" and len(value) == 2 and isinstance(value[1], str):
        return [respelled(value[0], answer_type), value[1].lower()]
    if answer_type == "edges" and all(isinstance(e, list) and len(e) == 2 for e in value):
        return [[v, u] for u, v in reversed(value)]
    return [respelled(v, answer_type) for v in value]


def oracle_response(answer, answer_type: str, trial: int) -> str:
    if trial == 0:
        return "Working through it.\n```json\n" + json.dumps({"steps": ["..."], "final_answer": answer}, indent=3) + "\n```\nDone."
    if trial == 1:
        return repr({"final_answer": answer})
    if trial == 2:
        return "Step by step...\n**Final answer:** " + json.dumps(answer, separators=(" , ", " :  "))
    return json.dumps({"final_answer": respelled(answer, answer_type), "confidence": "high"})


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    rows = release_rows()
    return write_instances(rows, tmp_path_factory.mktemp("release")), rows


@pytest.mark.slow
def test_oracle_scores_one_everywhere_and_bad_records_are_kept(release, tmp_path, capsys):
    root, rows = release
    predictions = tmp_path / "predictions.jsonl"
    with open(predictions, "w") as handle:
        for row in rows:
            for trial in range(TRIALS):
                response = oracle_response(json.loads(row["answer"]), row["answer_type"], trial)
                handle.write(json.dumps({"instance_id": row["instance_id"], "model": MODEL, "trial": trial,
                                         "response": response}) + "\n")
        handle.write("{not json\n")
        handle.write(json.dumps({"instance_id": "no-such-instance", "model": MODEL, "trial": 0, "response": "1"}) + "\n")
        handle.write(json.dumps({"instance_id": rows[0]["instance_id"], "model": "failing", "trial": 0,
                                 "response": None, "error": "timeout after 5 attempt(s)"}) + "\n")
    out = tmp_path / "eval"
    assert main(["eval-bench", "--instances", str(root), "--predictions", str(predictions), "--output", str(out)]) == 0
    lines = len(rows) * TRIALS + 3                 # the bad line is counted in the total, never scored
    assert f"thmforge: scoring: {lines - 1}/{lines} predictions" in capsys.readouterr().err

    con = duckdb.connect()
    con.execute(SCORES.view_sql(str(out)))
    by_model = dict(con.execute("SELECT model, count(*) FROM scores GROUP BY model").fetchall())
    assert by_model == {MODEL: len(rows) * TRIALS, "failing": 1}
    wrong = con.execute(f"SELECT instance_id, trial, parse_error, parsed_answer FROM scores WHERE model = '{MODEL}' "
                        "AND (exact < 1 OR partial < 1 OR structural < 1 OR parse_error IS NOT NULL)").fetchall()
    assert wrong == []
    tasks = con.execute("SELECT count(DISTINCT structure || '/' || task) FROM scores").fetchone()[0]
    assert tasks == len({(r["structure"], r["task"]) for r in rows})
    failing = con.execute("SELECT exact, parse_error FROM scores WHERE model = 'failing'").fetchone()
    assert failing[0] == 0.0 and failing[1].startswith("request failed: timeout")

    rejected = [json.loads(line) for line in open(out / "rejected_predictions.jsonl")]
    assert sorted(r["reason"].split(":")[0] for r in rejected) == ["instance_id not in the release", "not JSON"]

    report = (out / "report.md").read_text()
    assert f"| {MODEL} | {len(rows) * TRIALS} |" in report
    for png in ("radar_category.png", "heatmap_task_difficulty.png", "accuracy_vs_length.png"):
        data = (out / png).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n"
        width, height = struct.unpack(">II", data[16:24])
        assert width > 200 and height > 200
        assert f"]({png})" in report


def test_missing_inputs_are_usage_errors(tmp_path, capsys):
    assert main(["eval-bench", "--instances", str(tmp_path), "--predictions", str(tmp_path / "x.jsonl"),
                 "--output", str(tmp_path / "out")]) == 2
    assert "no instances/ directory" in capsys.readouterr().err


@pytest.mark.slow
def test_oracle_scores_one_on_the_full_default_release(tmp_path):
    rows = [build_instance(get_task(c.task_id), c.difficulty, i, 0, c.variant)
            for c in release_cells() for i in range(c.count)]
    assert len(rows) == DEFAULT_TOTAL == 4140
    write_instances(rows, tmp_path / "release")
    with open(tmp_path / "oracle.jsonl", "w") as handle:
        for number, row in enumerate(rows):
            response = oracle_response(json.loads(row["answer"]), row["answer_type"], number % TRIALS)
            handle.write(json.dumps({"instance_id": row["instance_id"], "model": "oracle", "trial": 0,
                                     "response": response}) + "\n")
    assert main(["eval-bench", "--instances", str(tmp_path / "release"), "--predictions",
                 str(tmp_path / "oracle.jsonl"), "--output", str(tmp_path / "eval")]) == 0
    con = duckdb.connect()
    con.execute(SCORES.view_sql(str(tmp_path / "eval")))
    assert con.execute("SELECT count(*), min(exact), min(partial), min(structural), count(parse_error) "
                       "FROM scores").fetchone() == (4140, 1.0, 1.0, 1.0, 0)


def test_a_broken_ground_truth_is_reported_not_scored(tmp_path):
    base = {"suite": "main", "category": "Linear", "structure": "array", "task": "access", "difficulty": "easy",
            "length": 5, "answer_type": "list[int]"}
    write_instances([{**base, "instance_id": "good", "answer": "[1, 2]"},
                     {**base, "instance_id": "broken", "answer": "[1, \"x\"]"}], tmp_path / "release")
    with open(tmp_path / "p.jsonl", "w") as handle:
        for instance_id in ("good", "broken"):
            handle.write(json.dumps({"instance_id": instance_id, "model": "m", "trial": 0,
                                     "response": '{"final_answer": [1, 2]}'}) + "\n")
    assert main(["eval-bench", "--instances", str(tmp_path / "release"), "--predictions", str(tmp_path / "p.jsonl"),
                 "--output", str(tmp_path / "eval")]) == 0
    con = duckdb.connect()
    con.execute(SCORES.view_sql(str(tmp_path / "eval")))
    rows = dict(con.execute("SELECT instance_id, exact FROM scores").fetchall())
    assert rows == {"good": 1.0, "broken": None}
    (error,) = con.execute("SELECT parse_error FROM scores WHERE instance_id = 'broken'").fetchone()
    assert error.startswith("ground truth: instance broken: expected an integer")
    assert "| m | 2 | 2 | 1 | 0 | 1 | 1.000 ± 0.000 |" in (tmp_path / "eval" / "report.md").read_text()


def test_several_releases_and_prompt_modes_in_one_report_joinable_in_sql(tmp_path, capsys):
    rows = release_rows()
    spatial = [r for r in rows if r["suite"] == "spatial"][:14]
    main_rows = [r for r in rows if r["suite"] == "main"][:10]
    write_instances(spatial, tmp_path / "r1")
    write_instances(main_rows, tmp_path / "r2")
    for mode, right in (("stepwise", True), ("answer-only", False)):
        with open(tmp_path / f"{mode}.jsonl", "w") as handle:
            for row in spatial + main_rows:
                answer = json.loads(row["answer"]) if right else None
                handle.write(json.dumps({"instance_id": row["instance_id"], "model": "m", "trial": 0, "prompt_mode": mode,
                                         "response": json.dumps({"final_answer": answer}), "input_tokens": 100,
                                         "output_tokens": 20, "latency_s": 0.25}) + "\n")
    out = tmp_path / "eval"
    assert main(["eval-bench", "--instances", str(tmp_path / "r1"), "--instances", str(tmp_path / "r2"),
                 "--predictions", str(tmp_path / "stepwise.jsonl"), "--predictions", str(tmp_path / "answer-only.jsonl"),
                 "--output", str(out), "--price", "m=1,2"]) == 0
    report = (out / "report.md").read_text()
    assert "| m [answer-only] | 24 | 24 | 1 |" in report and "| m [stepwise] | 24 | 24 | 1 |" in report
    assert "| m [stepwise] | 24 of 24 | 2400 | 480 | 120 | 0.250 | 0.250 | 0.0034 |" in report
    assert "## By point-set shape" in report and "## By spatial dimension" in report
    capsys.readouterr()
    assert main(["sql", str(out), "--format", "csv", "-c",
                 "SELECT s.prompt_mode, i.suite, count(*) AS n, avg(s.exact) AS exact FROM scores s "
                 "JOIN instances i USING (instance_id) GROUP BY ALL ORDER BY ALL"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "prompt_mode,suite,n,exact", "answer-only,main,10,0.0", "answer-only,spatial,14,0.0",
        "stepwise,main,10,1.0", "stepwise,spatial,14,1.0"]
    con = duckdb.connect()
    con.execute(SCORES.view_sql(str(out)))
    assert con.execute("SELECT count(DISTINCT variant), count(*) FILTER (WHERE variant IS NULL) FROM scores").fetchone() == (7, 20)


@pytest.mark.slow
def test_eval_bench_writes_an_object_store_the_bytes_it_writes_locally(release, tmp_path):
    """Every output (scores, rejected records, instance copies, report and plots) goes through the
    storage layer: into the test-only `mem://` store, which has no directories, byte for byte."""
    from pipelines import eval_bench
    from tests.memory_filesystem import MemoryFileSystem

    root, rows = release
    predictions = tmp_path / "predictions.jsonl"
    with open(predictions, "w") as handle:
        for row in rows[:12]:
            for trial in range(2):
                response = oracle_response(json.loads(row["answer"]), row["answer_type"], trial)
                handle.write(json.dumps({"instance_id": row["instance_id"], "model": MODEL, "trial": trial,
                                         "response": response}) + "\n")
        handle.write("{not json\n")
    in_memory = ["--runner=FnApiRunner", "--direct_running_mode=in_memory"]
    remote = "mem://bucket/eval"
    MemoryFileSystem.objects.clear()
    MemoryFileSystem.objects[f"{remote}/scores/model=stale/part-00000.parquet"] = b"an older evaluation"
    try:
        local = eval_bench.run(str(root), str(predictions), str(tmp_path / "eval"), in_memory)
        stored = eval_bench.run(str(root), str(predictions), remote, in_memory)
        written = {path[len(remote) + 1:]: data for path, data in MemoryFileSystem.objects.items()}
    finally:
        MemoryFileSystem.objects.clear()
    expected = {str(p.relative_to(tmp_path / "eval")): p.read_bytes() for p in (tmp_path / "eval").rglob("*")
                if p.is_file()}
    assert (stored["scored"], stored["rejected"]) == (local["scored"], local["rejected"]) == (24, 1)
    assert stored["report"] == f"{remote}/report.md"
    assert {"report.md", "rejected_predictions.jsonl", "radar_category.png"} <= set(expected)
    assert any(name.startswith("instances/") for name in expected)
    assert written == expected
