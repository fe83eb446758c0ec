"""Fine-grained diagnostics: mean and standard deviation over trials, by any grouping.

For a group (say category = Hybrid) and a model, each trial's score is the mean over the
group's instances in that trial; the group's figure is the mean of those per-trial scores and
their population standard deviation (0 with one trial). This is the spread a rerun would show,
not the spread between instances.
"""
from __future__ import annotations

import collections
import dataclasses
import math
import re
import statistics
from typing import Any, Iterable, Mapping, Sequence

from schemas.instances import DIFFICULTIES

# The report's breakdowns: title -> the scores columns a group is keyed by. "structure/task" keys by
# both (a task name alone, like "insert", is shared by several structures); the spatial ones group
# by the instance's variant (the spatial probe's point set; imported K-D heaps' dimension).
BREAKDOWNS = {
    "suite": ("suite",), "category": ("category",), "structure": ("structure",),
    "structure/task": ("suite", "structure", "task"), "difficulty": ("difficulty",), "length": ("length",),
    "spatial dimension": ("dimension",), "point-set shape": ("shape",),
}
SPATIAL_DIMENSIONS = {"1d": 1, "2d": 2, "3d": 3, "5d": 5}
POINT_SHAPES = ("moons", "circles", "blobs")
METRICS = ("exact", "partial", "structural")
_ERROR_DETAIL = re.compile(r"(, got |: keys |(?<= is not JSON): ).*$", re.S)


@dataclasses.dataclass(frozen=True)
class GroupStats:
    model: str
    key: tuple                  # the values of the grouping columns, in `by` order
    predictions: int            # scored predictions in the group (all trials)
    trials: int
    instances: int              # distinct instances in the group
    mean: dict[str, float]
    std: dict[str, float]


def summarize(rows: Iterable[Mapping[str, Any]], by: Sequence[str] = ()) -> list[GroupStats]:
    """Stats per (model, values of `by`), sorted by model then key (difficulty in its own order)."""
    sums: dict[tuple, dict[int, list]] = collections.defaultdict(dict)
    ids: dict[tuple, set] = collections.defaultdict(set)
    for row in rows:
        if row.get("exact") is None:
            continue
        group = (row["model"], tuple(row.get(column) for column in by))
        ids[group].add(row.get("instance_id"))
        acc = sums[group].setdefault(int(row["trial"]), [0, 0.0, 0.0, 0.0])
        acc[0] += 1
        for i, metric in enumerate(METRICS, start=1):
            acc[i] += row[metric]
    stats = []
    for (model, key), per_trial in sums.items():
        means = {metric: [acc[i] / acc[0] for acc in per_trial.values()]
                 for i, metric in enumerate(METRICS, start=1)}
        stats.append(GroupStats(
            model=model, key=key, trials=len(per_trial), instances=len(ids[(model, key)]),
            predictions=sum(acc[0] for acc in per_trial.values()),
            mean={m: statistics.fmean(v) for m, v in means.items()},
            std={m: statistics.pstdev(v) for m, v in means.items()},
        ))
    return sorted(stats, key=lambda s: (s.model, tuple(sort_key(v) for v in s.key)))


def with_breakdown_columns(row: Mapping[str, Any]) -> dict:
    """The row with `dimension` and `shape` derived from its variant (None when it has neither)."""
    variant = row.get("variant")
    return {**row, "dimension": SPATIAL_DIMENSIONS.get(variant), "shape": variant if variant in POINT_SHAPES else None}


def run_labels(rows: Iterable[Mapping[str, Any]]) -> list[dict]:
    """Rows with `model` replaced by the run's label: the model, and the prompt mode too when that
    model was run in several modes (so modes sit side by side like models)."""
    rows = list(rows)
    modes: dict[str, set] = collections.defaultdict(set)
    for row in rows:
        modes[row["model"]].add(row.get("prompt_mode"))
    return [{**row, "base_model": row["model"],
             "model": f"{row['model']} [{row.get('prompt_mode') or 'unknown mode'}]"
             if len(modes[row["model"]]) > 1 else row["model"]} for row in rows]


def usage(rows: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per model: predictions, token totals, mean and 95th-percentile latency of the recorded requests."""
    by_model: dict[str, list] = collections.defaultdict(list)
    for row in rows:
        by_model[row["model"]].append(row)
    result = {}
    for model, mine in sorted(by_model.items()):
        latencies = sorted(r["latency_s"] for r in mine if r.get("latency_s") is not None)
        result[model] = {
            "predictions": len(mine),
            "with_usage": sum(1 for r in mine if r.get("input_tokens") is not None),
            "input_tokens": sum(r.get("input_tokens") or 0 for r in mine),
            "output_tokens": sum(r.get("output_tokens") or 0 for r in mine),
            "latency_mean_s": statistics.fmean(latencies) if latencies else None,
            "latency_p95_s": latencies[min(len(latencies) - 1, math.ceil(0.95 * len(latencies)) - 1)] if latencies else None,
        }
    return result


def sort_key(value: Any) -> tuple:
    """Difficulties in easy-medium-hard order, numbers numerically, text alphabetically."""
    if value in DIFFICULTIES:
        return (0, DIFFICULTIES.index(value), "")
    if isinstance(value, (int, float)):
        return (1, value, "")
    return (2, 0, "" if value is None else str(value))


def side_by_side(stats: Sequence[GroupStats]) -> tuple[list[str], list[tuple], dict[tuple, dict[str, GroupStats]]]:
    """Models, the sorted group keys, and key -> model -> stats: one table row per key."""
    models = sorted({s.model for s in stats})
    table: dict[tuple, dict[str, GroupStats]] = collections.defaultdict(dict)
    for s in stats:
        table[s.key][s.model] = s
    keys = sorted(table, key=lambda k: tuple(sort_key(v) for v in k))
    return models, keys, table


def error_counts(rows: Iterable[Mapping[str, Any]], limit: int = 10) -> dict[str, list[tuple[str, int]]]:
    """Per model, the most frequent parse errors (message up to its first colon-separated detail)."""
    counts: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for row in rows:
        error = row.get("parse_error")
        if error:
            counts[row["model"]][error_class(error)] += 1
    return {model: sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))[:limit] for model, c in sorted(counts.items())}


def error_class(message: str) -> str:
    """The stable part of an error, without the offending value (so equal kinds count together)."""
    if message.startswith("request failed:"):
        return ":".join(message.split(":", 2)[:2])
    return _ERROR_DETAIL.sub("", message)
