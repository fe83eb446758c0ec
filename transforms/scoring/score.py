"""One prediction against its instance's ground truth: a `schemas.SCORES` row.

A prediction whose request finally failed, or whose answer cannot be parsed or does not fit the
answer type, scores 0 on every measure with the reason in `parse_error`; nothing is dropped.
"""
from __future__ import annotations

import json
from typing import Any, Mapping

from transforms.scoring import metrics
from transforms.scoring.canonical import AnswerShapeError, canonicalize, serialize
from transforms.scoring.parse import extract_answer

INSTANCE_COLUMNS = ("suite", "category", "structure", "task", "difficulty", "length", "variant")
USAGE_COLUMNS = ("prompt_mode", "input_tokens", "output_tokens", "latency_s")      # copied from the prediction


class GroundTruthError(ValueError):
    """An instance's stored answer does not fit its own answer type (a release bug)."""


def canonical_truth(instance: Mapping[str, Any]) -> str:
    """The canonical serialization of an instance's ground truth."""
    try:
        return serialize(canonicalize(json.loads(instance["answer"]), instance["answer_type"]))
    except (TypeError, json.JSONDecodeError, AnswerShapeError) as exc:
        raise GroundTruthError(f"instance {instance.get('instance_id')}: {exc}") from exc


def score_prediction(instance: Mapping[str, Any], prediction: Mapping[str, Any],
                     truth_text: str | None = None) -> dict:
    """The scores row of `prediction` (pass `truth_text` when the truth is already canonical)."""
    row = {
        "instance_id": prediction["instance_id"],
        "model": prediction["model"],
        "trial": int(prediction["trial"]),
        **{column: instance.get(column) for column in INSTANCE_COLUMNS},
        **{column: prediction.get(column) for column in USAGE_COLUMNS},
        "exact": 0.0, "partial": 0.0, "structural": 0.0,
        "parsed_answer": None, "parse_error": None,
    }
    if prediction.get("error") and not prediction.get("response"):
        row["parse_error"] = f"request failed: {prediction['error']}"
        return row
    extraction = extract_answer(prediction.get("response"))
    if not extraction.ok:
        row["parse_error"] = extraction.error
        return row
    answer_type = instance["answer_type"]
    try:
        pred_text = serialize(canonicalize(extraction.value, answer_type))
    except AnswerShapeError as exc:
        row["parse_error"] = f"{answer_type}: {exc}"
        return row
    truth_text = truth_text if truth_text is not None else canonical_truth(instance)
    row.update(
        parsed_answer=pred_text,
        exact=metrics.exact(pred_text, truth_text),
        partial=metrics.partial(pred_text, truth_text),
        structural=metrics.structural(pred_text, truth_text, answer_type),
    )
    return row
