"""Fine-grained diagnostics: mean and standard deviation over trials, by any grouping.

For a group (say category = Hybrid) and a model, each trial's score is the mean over the
group's instances in that trial; the group's figure is the mean of those per-trial scores and
their population standard deviation (0 with one trial). This is the spread a rerun would show,
not the spread between instances.
"""
from __future__ import annotations

import collections
import dataclasses
import re
import statistics
from typing import Any, Iterable, Mapping, Sequence

from schemas.instances import DIFFICULTIES

DIMENSIONS = ("suite", "category", "structure", "task", "difficulty", "length")
METRICS = ("exact", "partial", "structural")
_ERROR_DETAIL = re.compile(r"(, got |: keys |(?<= is not JSON): ).*$", re.S)


@dataclasses.dataclass(frozen=True)
class GroupStats:
    model: str
    key: tuple                  # the values of the grouping columns, in `by` order
    predictions: int            # scored predictions in the group (all trials)
    trials: int
    mean: dict[str, float]
    std: dict[str, float]


def summarize(rows: Iterable[Mapping[str, Any]], by: Sequence[str] = ()) -> list[GroupStats]:
    """Stats per (model, values of `by`), sorted by model then key (difficulty in its own order)."""
    sums: dict[tuple, dict[int, list]] = collections.defaultdict(dict)
    for row in rows:
        if row.get("exact") is None:
            continue
        group = (row["model"], tuple(row.get(column) for column in by))
        acc = sums[group].setdefault(int(row["trial"]), [0, 0.0, 0.0, 0.0])
        acc[0] += 1
        for i, metric in enumerate(METRICS, start=1):
            acc[i] += row[metric]
    stats = []
    for (model, key), per_trial in sums.items():
        means = {metric: [acc[i] / acc[0] for acc in per_trial.values()]
                 for i, metric in enumerate(METRICS, start=1)}
        stats.append(GroupStats(
            model=model, key=key, trials=len(per_trial),
            predictions=sum(acc[0] for acc in per_trial.values()),
            mean={m: statistics.fmean(v) for m, v in means.items()},
            std={m: statistics.pstdev(v) for m, v in means.items()},
        ))
    return sorted(stats, key=lambda s: (s.model, tuple(sort_key(v) for v in s.key)))


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
