"""`DescribeStatements`: theorem rows in, described rows and failure records out.

    rows, failures = theorem_rows | DescribeStatements(config)

LLM describers run as: key each row -> join with the cache (CoGroupByKey) -> rows whose key is
cached get the cached text; each missing key becomes one request (identical statements are asked
about once) -> RunInference with the describer's handler -> every waiting row gets the answer or a
null description plus a failure record -> new answers are flushed to cache shards as they arrive.
Every input row comes out exactly once.
"""
from __future__ import annotations

from typing import Iterable, Optional

import apache_beam as beam
from apache_beam.metrics import Metrics

from transforms.describe.cache import WriteCacheShards, cache_files, cache_glob, pick_entry
from transforms.describe.config import DescribeConfig
from transforms.describe.records import (NAMESPACE, DescribeRequest, description_key, effective_context, failure_record,
                                         output_row, statement_body, statement_hash, statement_heading)
from transforms.describe.text import text_description
from transforms.progress import Progress

FAILED = "failed"
MISSING = "missing"
NEW_ENTRIES = "new_entries"


def row_key(row: dict, config: DescribeConfig) -> str:
    context, _ = effective_context(config.context, row, config.context_chars)
    return description_key(statement_hash(row), context, config.template_id, config.model_id)


def _by_theorem_id(rows: Iterable[dict]) -> list[dict]:
    return sorted(rows, key=lambda r: (str(r.get("theorem_id")), str(r.get("paper_id"))))


def described_rows(rows: list[dict], config: DescribeConfig, context: str, description: Optional[str],
                   input_tokens: Optional[int], output_tokens: Optional[int]) -> list[dict]:
    """Rows (sorted) with their description columns; tokens are booked on the first row only."""
    out = []
    for index, row in enumerate(rows):
        found = description is not None
        out.append(output_row(
            row, description=description,
            description_model=config.model_id if found else None,
            description_template=config.template_id if found else None,
            description_context=context if found else None,
            description_input_tokens=(input_tokens if index == 0 else 0) if input_tokens is not None else None,
            description_output_tokens=(output_tokens if index == 0 else 0) if output_tokens is not None else None,
        ))
    return out


class _TextDescribe(beam.DoFn):
    def __init__(self, config: DescribeConfig):
        self.config = config
        self.described = Metrics.counter(NAMESPACE, "described")
        self.failed = Metrics.counter(NAMESPACE, "failed")

    def process(self, row: dict):
        description = text_description(row)
        yield from described_rows([row], self.config, "body", description, None, None)
        if description is None:
            self.failed.inc()
            yield beam.pvalue.TaggedOutput(FAILED, failure_record(row, "empty-statement", "statement has no text"))
        else:
            self.described.inc()


class _SplitByCache(beam.DoFn):
    """(key, {rows, cache}) -> cached rows (main), one request per missing key, or failures."""

    def __init__(self, config: DescribeConfig):
        self.config = config
        self.cache_hits = Metrics.counter(NAMESPACE, "cache_hits")
        self.duplicates = Metrics.counter(NAMESPACE, "duplicate_statements")
        self.failed = Metrics.counter(NAMESPACE, "failed")

    def process(self, element):
        key, grouped = element
        rows = _by_theorem_id(grouped["rows"])
        if rows:                                         # else: a cache entry nobody asked for
            yield from self._split(key, rows, grouped["cache"])

    def _split(self, key, rows, cache_entries):
        self.duplicates.inc(len(rows) - 1)
        first = rows[0]
        context, context_text = effective_context(self.config.context, first, self.config.context_chars)
        entry = pick_entry(cache_entries)
        body = statement_body(first)
        if entry is not None:
            self.cache_hits.inc(len(rows))
            yield from described_rows(rows, self.config, context, entry["description"],
                                      entry.get("input_tokens"), entry.get("output_tokens"))
        elif not body:
            self.failed.inc(len(rows))
            yield from described_rows(rows, self.config, context, None, None, None)
            for row in rows:
                yield beam.pvalue.TaggedOutput(FAILED, failure_record(row, "empty-statement", "statement has no text"))
        else:
            yield beam.pvalue.TaggedOutput(MISSING, DescribeRequest(
                key=key, statement_hash=statement_hash(first), heading=statement_heading(first), statement=body,
                context=context, context_text=context_text, rows=tuple(rows)))


class _ApplyOutcome(beam.DoFn):
    """PredictionResult(request, outcome) -> rows, failure records and the new cache entry."""

    def __init__(self, config: DescribeConfig):
        self.config = config
        self.described = Metrics.counter(NAMESPACE, "described")
        self.failed = Metrics.counter(NAMESPACE, "failed")

    def setup(self):
        self.progress = Progress("describing", unit="statements", enabled=self.config.progress)
        self.failed_rows = 0

    def teardown(self):
        self.progress.close()

    def process(self, result):
        request: DescribeRequest = result.example
        outcome = result.inference
        rows = list(request.rows)
        self.failed_rows += len(rows) if outcome.description is None else 0
        self.progress.advance(len(rows), note=f"{self.failed_rows} failed" if self.failed_rows else "")
        yield from described_rows(rows, self.config, request.context, outcome.description,
                                  outcome.input_tokens, outcome.output_tokens)
        if outcome.description is None:
            self.failed.inc(len(rows))
            for row in rows:
                yield beam.pvalue.TaggedOutput(FAILED, failure_record(row, outcome.error_class, outcome.message))
        else:
            self.described.inc(len(rows))
            yield beam.pvalue.TaggedOutput(NEW_ENTRIES, {
                "key": request.key, "statement_hash": request.statement_hash, "context": request.context,
                "template": self.config.template_id, "model": self.config.model_id,
                "description": outcome.description, "input_tokens": outcome.input_tokens,
                "output_tokens": outcome.output_tokens,
            })


class DescribeStatements(beam.PTransform):
    """Describe theorem rows; returns `(rows, failures)` (failures in `schemas.FAILURES` columns)."""

    def __init__(self, config: DescribeConfig):
        super().__init__()
        self.config = config

    def expand(self, rows):
        config = self.config
        if not config.uses_llm:
            out = rows | "TextDescribe" >> beam.ParDo(_TextDescribe(config)).with_outputs(FAILED, main="rows")
            return out.rows, out[FAILED]
        # Beam's RunInference imports torch (~3 CPU-s, ~200 MB): loaded only when a model runs
        from apache_beam.ml.inference.base import RunInference

        from transforms.describe.handlers import model_handler

        keyed = rows | "KeyByStatement" >> beam.Map(lambda row: (row_key(row, config), row))
        if cache_files(config.cache_dir):
            cached = (rows.pipeline
                      | "ReadCache" >> beam.io.ReadFromParquet(cache_glob(config.cache_dir))
                      | "KeyCache" >> beam.Map(lambda entry: (entry["key"], entry)))
        else:
            cached = rows.pipeline | "NoCache" >> beam.Create([])
        split = ({"rows": keyed, "cache": cached}
                 | "JoinCache" >> beam.CoGroupByKey()
                 | "SplitByCache" >> beam.ParDo(_SplitByCache(config)).with_outputs(MISSING, FAILED, main="rows"))
        applied = (split[MISSING]
                   | "Describe" >> RunInference(model_handler(config))
                   | "ApplyOutcome" >> beam.ParDo(_ApplyOutcome(config)).with_outputs(NEW_ENTRIES, FAILED,
                                                                                      main="rows"))
        _ = applied[NEW_ENTRIES] | "WriteCache" >> beam.ParDo(
            WriteCacheShards(config.cache_dir, flush_every=config.cache_flush_every))
        described = (split.rows, applied.rows) | "MergeRows" >> beam.Flatten()
        failures = (split[FAILED], applied[FAILED]) | "MergeFailures" >> beam.Flatten()
        return described, failures
