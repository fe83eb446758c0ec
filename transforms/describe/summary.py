"""Totals for the manifest: what the table holds (from rows) and what this run paid (from metrics)."""
from __future__ import annotations

import collections
from typing import Iterable

import apache_beam as beam
from apache_beam.metrics.metric import MetricsFilter

from transforms.describe.handlers import NAMESPACE


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


class _RowTotals(beam.CombineFn):
    def create_accumulator(self):
        return collections.Counter()

    def add_input(self, acc, row):
        acc["statements"] += 1
        acc["described" if row.get("description") is not None else "failed"] += 1
        acc["input_tokens"] += row.get("description_input_tokens") or 0
        acc["output_tokens"] += row.get("description_output_tokens") or 0
        return acc

    def merge_accumulators(self, accs):
        merged = collections.Counter()
        for acc in accs:
            merged.update(acc)
        return merged

    def extract_output(self, acc):
        return {k: int(acc.get(k, 0)) for k in ("statements", "described", "failed", "input_tokens", "output_tokens")}


class SummarizeDescriptions(beam.PTransform):
    """(rows, failures) -> a single dict like `summarize`, for `DescribeConfig.manifest(totals)`."""

    def expand(self, pcolls):
        rows, failures = pcolls
        row_totals = rows | "RowTotals" >> beam.CombineGlobally(_RowTotals())
        reasons = (failures
                   | "DescribeFailures" >> beam.Filter(lambda f: f.get("stage") == "describe")
                   | "Reason" >> beam.Map(lambda f: f.get("error_class") or "unknown")
                   | "CountReasons" >> beam.combiners.Count.PerElement()
                   | "AllReasons" >> beam.combiners.ToDict())
        return row_totals | "AddReasons" >> beam.Map(
            lambda totals, by_reason: {**totals, "failed_by_reason": dict(sorted(by_reason.items()))},
            beam.pvalue.AsSingleton(reasons))


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
