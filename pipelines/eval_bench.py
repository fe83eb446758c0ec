"""eval-bench: predictions + instances -> scores/ (Hive Parquet by model) -> report.md with plots.

    instance files ──► rows by instance_id ─┐
                                            ├─► CoGroupByKey ─► score ─► by model ─► scores/model=M/
    prediction files ─► rows by instance_id ┘                     └─► rejected ─► rejected_predictions.jsonl

Predictions that cannot be used (bad JSONL, missing fields, an instance_id the release does not
have) are never dropped silently: they go to `rejected_predictions.jsonl` with the reason and the
place they came from. Duplicate (instance, model, prompt mode, trial) predictions keep the answered one.

Several releases (e.g. thmforge's default and an imported DSR-Bench release) and several runs
(models, prompt modes) go into one report. The instance files read are copied beside the scores
(OUTPUT/instances/), so `thmforge sql OUTPUT` joins scores to their instances.
"""
from __future__ import annotations

import hashlib
import json
import os
import posixpath
from typing import Any, Mapping, Optional, Sequence

import apache_beam as beam
from apache_beam.options.pipeline_options import PipelineOptions

from schemas import INSTANCES, SCORES
from transforms.scoring.diagnostics import summarize
from transforms.scoring.report import write_report
from transforms.scoring.score import GroundTruthError, INSTANCE_COLUMNS, canonical_truth, score_prediction
from transforms.progress import Progress
from transforms.write import files
from transforms.scoring.tables import (INSTANCE_READ_COLUMNS, file_rows, instance_files, iter_prediction_file,
                                       prediction_files, preferred_prediction, read_partitioned_file,
                                       read_rows, write_partition)

REJECTED_FILE = "rejected_predictions.jsonl"


class ScoreJoined(beam.DoFn):
    """(instance_id, {instance: [...], prediction: [...]}) -> scores rows; orphans -> `rejected`."""

    REJECTED = "rejected"

    def __init__(self, total: Optional[int] = None):
        super().__init__()
        self.total = total
        self.counters = {name: beam.metrics.Metrics.counter("eval_bench", name)
                         for name in ("scored", "unparsed", "request_failed", "orphan", "bad_ground_truth")}

    def setup(self):
        self.progress = Progress("scoring", total=self.total, unit="predictions")

    def teardown(self):
        self.progress.close()

    def process(self, element):
        self.progress.advance(len(element[1]["prediction"]))
        for row in self._rows(element):
            if isinstance(row, beam.pvalue.TaggedOutput):
                self.counters["orphan"].inc()
            elif row["exact"] is None:
                self.counters["bad_ground_truth"].inc()
            elif (row["parse_error"] or "").startswith("request failed"):
                self.counters["request_failed"].inc()
            else:
                self.counters["unparsed" if row["parse_error"] else "scored"].inc()
            yield row

    def _rows(self, element):
        instance_id, joined = element
        predictions = list(joined["prediction"])
        if not predictions:
            return
        if not joined["instance"]:
            for prediction in predictions:
                yield beam.pvalue.TaggedOutput(self.REJECTED, {
                    "location": None, "reason": "instance_id not in the release",
                    "record": json.dumps(prediction, default=str)[:500]})
            return
        instance = joined["instance"][0]
        by_trial: dict[tuple, list] = {}
        for prediction in predictions:
            key = (prediction["model"], prediction.get("prompt_mode") or "", prediction["trial"])
            by_trial.setdefault(key, []).append(prediction)
        try:
            truth = canonical_truth(instance)
        except GroundTruthError as exc:
            for model, mode, trial in sorted(by_trial):
                yield {"instance_id": instance_id, "model": model, "trial": trial, "prompt_mode": mode or None,
                       **{c: instance.get(c) for c in INSTANCE_COLUMNS},
                       "exact": None, "partial": None, "structural": None, "parsed_answer": None,
                       "parse_error": f"ground truth: {exc}"}
            return
        for key in sorted(by_trial):
            yield score_prediction(instance, preferred_prediction(by_trial[key]), truth_text=truth)


def _read_predictions(path: str):
    for prediction, rejection in iter_prediction_file(path):
        if rejection is not None:
            yield beam.pvalue.TaggedOutput(ScoreJoined.REJECTED, rejection)
        else:
            yield prediction


def _write_model_scores(element, output: str) -> tuple[str, int]:
    model, rows = element
    rows = list(rows)
    write_partition(rows, SCORES, output, model)
    return model, len(rows)


def _write_rejected(element, output: str) -> int:
    _, rejections = element
    ordered = sorted(rejections, key=lambda r: (str(r.get("location")), r["reason"], r["record"]))
    files.replace_bytes(files.join(output, REJECTED_FILE),
                        "".join(json.dumps(r, sort_keys=True) + "\n" for r in ordered).encode("utf-8"))
    return len(ordered)


class EvaluatePredictions(beam.PTransform):
    """Instance files and prediction files in; scores written per model under `output`."""

    def __init__(self, instance_paths: Sequence[str], prediction_paths: Sequence[str], output: str):
        super().__init__()
        self.instance_paths, self.prediction_paths, self.output = instance_paths, prediction_paths, output
        self.total = sum(file_rows(path) for path in prediction_paths)

    def expand(self, pipeline):
        instances = (pipeline
                     | "InstanceFiles" >> beam.Create(self.instance_paths)
                     | "ReadInstances" >> beam.FlatMap(read_partitioned_file, INSTANCES, INSTANCE_READ_COLUMNS)
                     | "InstanceById" >> beam.Map(lambda row: (row["instance_id"], row)))
        read = (pipeline
                | "PredictionFiles" >> beam.Create(self.prediction_paths)
                | "ReadPredictions" >> beam.FlatMap(_read_predictions).with_outputs(ScoreJoined.REJECTED, main="ok"))
        predictions = read.ok | "PredictionById" >> beam.Map(lambda row: (row["instance_id"], row))
        scored = ({"instance": instances, "prediction": predictions}
                  | "Join" >> beam.CoGroupByKey()
                  | "Score" >> beam.ParDo(ScoreJoined(self.total)).with_outputs(ScoreJoined.REJECTED, main="scores"))
        written = (scored.scores
                   | "ByModel" >> beam.Map(lambda row: (row["model"], row))
                   | "GroupModel" >> beam.GroupByKey()
                   | "WriteScores" >> beam.Map(_write_model_scores, self.output))
        rejected = ((read[ScoreJoined.REJECTED], scored[ScoreJoined.REJECTED])
                    | "AllRejected" >> beam.Flatten()
                    | "OneKey" >> beam.Map(lambda r: (None, r))
                    | "GroupRejected" >> beam.GroupByKey()
                    | "WriteRejected" >> beam.Map(_write_rejected, self.output))
        return written, rejected


def _as_list(value: str | Sequence[str]) -> list[str]:
    return [value] if isinstance(value, (str, os.PathLike)) else list(value)


def _absolute(path: str) -> str:
    return os.path.realpath(path) if files.is_local(path) else path


def copy_instances(instance_paths: Sequence[str], output: str) -> None:
    """The instance files beside the scores, renamed per release so that several never collide."""
    target_root = files.join(output, INSTANCES.name)
    if any(_absolute(path).startswith(_absolute(target_root).rstrip("/") + "/") for path in instance_paths):
        return                                       # scoring into the release itself: already there
    files.delete_tree(target_root)
    for path in instance_paths:
        partitions = [p for p in path.split("/") if "=" in p]
        release = _absolute(path)
        for _ in range(len(partitions) + 1):
            release = posixpath.dirname(release)
        digest = hashlib.sha256(release.encode()).hexdigest()[:8]
        target = files.join(target_root, *partitions, f"{digest}-{posixpath.basename(path)}")
        files.write_bytes(target, files.read_bytes(path))


def run(instances: str | Sequence[str], predictions: str | Sequence[str], output: str, beam_args: Sequence[str] = (),
        title: str = "Benchmark evaluation", notes: Sequence[str] = (), name_inputs: bool = True,
        prices: Mapping[str, tuple[float, float]] | None = None) -> dict[str, Any]:
    """Score, write `scores/` and `report.md`; returns counts for the command line.

    `instances` and `predictions` may each be several paths (releases, runs). `prices` maps a model
    to its (input, output) USD per million tokens for the report's cost column. `name_inputs=False`
    leaves the input paths out of the report (for reports built in a temporary directory and
    published elsewhere)."""
    instances, predictions = _as_list(instances), _as_list(predictions)
    instance_paths = [p for release in instances for p in instance_files(release)]
    prediction_paths = [p for run_output in predictions for p in prediction_files(run_output)]
    output = str(output)
    rejected_file = files.join(output, REJECTED_FILE)
    copy_instances(instance_paths, output)
    files.delete_tree(files.join(output, SCORES.name))
    files.delete([rejected_file])
    with beam.Pipeline(options=PipelineOptions(list(beam_args))) as pipeline:
        _ = pipeline | "Evaluate" >> EvaluatePredictions(instance_paths, prediction_paths, output)
    rows = read_rows(files.join(output, SCORES.name), SCORES)
    rejected = files.read_bytes(rejected_file).count(b"\n") if files.exists(rejected_file) else 0
    report_notes = list(notes)
    if name_inputs:
        report_notes.append("Instances: " + ", ".join(f"`{p}`" for p in instances) + "; predictions: "
                            + ", ".join(f"`{p}`" for p in predictions) + ".")
    report_notes.append(f"Scored predictions: {len(rows)}; rejected predictions: {rejected}"
                        + (f" (see `{REJECTED_FILE}`)." if rejected else "."))
    report = write_report(rows, output, title=title, notes=report_notes, prices=prices)
    return {"scored": len(rows), "rejected": rejected, "report": report,
            "models": sorted({r["model"] for r in rows}), "overall": summarize(rows)}
