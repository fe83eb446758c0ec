"""Evaluation tables on disk: model partitions, bad prediction records, instance checks."""
import json
import posixpath

import duckdb
import pytest

from schemas import PREDICTIONS
from transforms.scoring.tables import (InputError, instance_files, iter_prediction_file, model_of_path,
                                       partition_path, preferred_prediction, prediction_files, read_rows,
                                       write_instances, write_partition)


def prediction(instance_id, trial, response="x", error=None, attempts=1):
    return {"instance_id": instance_id, "model": "Qwen/Qwen3 8B", "trial": trial, "response": response,
            "error": error, "attempts": attempts}


def test_model_names_survive_the_partition_directory(tmp_path):
    path = write_partition([prediction("b", 1), prediction("a", 0)], PREDICTIONS, tmp_path, "Qwen/Qwen3 8B")
    assert posixpath.dirname(path) == partition_path(tmp_path, PREDICTIONS, "Qwen/Qwen3 8B")
    assert model_of_path(path) == "Qwen/Qwen3 8B"
    rows = read_rows(tmp_path / "predictions", PREDICTIONS)
    assert [(r["instance_id"], r["model"]) for r in rows] == [("a", "Qwen/Qwen3 8B"), ("b", "Qwen/Qwen3 8B")]
    con = duckdb.connect()
    con.execute(PREDICTIONS.view_sql(str(tmp_path)))
    assert con.execute("SELECT DISTINCT model FROM predictions").fetchall() == [("Qwen/Qwen3 8B",)]
    assert [str(p) for p in prediction_files(tmp_path)] == [str(path)]


def test_jsonl_records_are_validated_and_rejections_say_why(tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_text("\n".join([
        json.dumps({"instance_id": "a", "model": "m", "trial": 2, "response": "{}"}),
        json.dumps({"instance_id": "a", "model": "m", "trial": "1"}),
        json.dumps({"instance_id": "a", "model": "m", "trial": 3.0, "response": "r"}),
        json.dumps({"instance_id": "a", "trial": 0, "response": "x"}),
        json.dumps({"instance_id": "a", "model": "m", "trial": -1, "response": "x"}),
        json.dumps({"instance_id": "a", "model": "m", "trial": 0, "response": 5}),
        json.dumps([1, 2]),
        "garbage",
        "",
    ]))
    results = list(iter_prediction_file(str(path)))
    accepted = [p for p, _ in results if p]
    assert [(p["trial"], p["response"]) for p in accepted] == [(2, "{}"), (1, None), (3, "r")]
    reasons = [r["reason"].split(":")[0] for _, r in results if r]
    assert reasons == ["model must be a non-empty string", "trial must be a non-negative integer",
                       "response must be a string or null", "not a JSON object", "not JSON"]
    assert [r["location"] for _, r in results if r][-1] == f"{path}:8"


def test_unreadable_parquet_is_a_rejection_not_a_crash(tmp_path):
    broken = tmp_path / "predictions" / "model=m" / "part-00000.parquet"
    broken.parent.mkdir(parents=True)
    broken.write_bytes(b"not parquet")
    ((prediction_row, rejection),) = iter_prediction_file(str(broken))
    assert prediction_row is None and rejection["reason"].startswith("unreadable Parquet")


def test_instance_files_are_checked(tmp_path):
    with pytest.raises(InputError, match="no instances/ directory"):
        instance_files(tmp_path)
    bad = tmp_path / "instances" / "suite=main" / "category=Linear" / "x.parquet"
    bad.parent.mkdir(parents=True)
    bad.write_bytes(b"nope")
    with pytest.raises(InputError, match="not a readable Parquet file"):
        instance_files(tmp_path)
    bad.unlink()
    write_instances([{"instance_id": "i", "suite": "main", "category": "Linear", "structure": "array",
                      "task": "access", "difficulty": "easy", "answer": "1", "answer_type": "int"}], tmp_path)
    assert len(instance_files(tmp_path)) == 1


def test_an_answered_row_beats_failures():
    rows = [prediction("a", 0, None, "timeout", 5), prediction("a", 0, "ok", None, 2)]
    assert preferred_prediction(rows)["response"] == "ok"
