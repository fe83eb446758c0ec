"""Totals for the manifest: what the table holds (from rows) and what this run paid (from metrics)."""
from __future__ import annotations

import collections
from typing import Iterable

from apache_beam.metrics.metric import MetricsFilter

from transforms.describe.records import NAMESPACE


def summarize(rows: Iterable[dict], failures: Iterable[dict] = ()) -> dict:
    """statements = described + failed; tokens are those of the descriptions the rows carry."""
    totals = {"statements": 0, "described": 0, "failed": 0, "input_tokens": 0, "output_tokens": 0}
    for row in rows:
        totals["statements"] += 1
        totals["described" if row.get("description") is not None else "failed"] += 1
        totals["input_tokens"] += row.get("description_input_tokens") or 0
        totals["output_tokens"] += row.get("description_output_tokens") or 0
    reasons = collections.Counter(f.get("error_class") or "unknown" for f in failures)
    totals["failed_by_reason"] = dict(sorted(reasons.items()))
    return totals


def totals_from_metrics(result) -> dict:
    """What this run did (`run_*`: requests sent and tokens paid, cache hits) from a finished pipeline."""
    counters = result.metrics().query(MetricsFilter().with_namespace(NAMESPACE))["counters"]
    values = collections.Counter()
    for counter in counters:
        values[counter.key.metric.name] += counter.committed or counter.attempted or 0
    return {
        "run_requests": values["requests"], "run_cache_hits": values["cache_hits"],
        "run_rejected_answers": values["rejected_answers"], "run_throttled": values["throttled"],
        "run_input_tokens": values["input_tokens"], "run_output_tokens": values["output_tokens"],
        "run_duplicate_statements": values["duplicate_statements"],
    }
