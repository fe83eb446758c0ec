"""`EmbedStatements`: rows in, rows with `embedding` (and optionally `statement_embedding`) out.

    rows, failures = rows | EmbedStatements(config)

A row without any text, or whose batch failed in the model, keeps its place with a null vector
and gets a failure record; nothing is dropped.
"""
from __future__ import annotations

import apache_beam as beam
from apache_beam.metrics import Metrics

from transforms.describe.records import failure_record
from transforms.embed.config import EmbedConfig
from transforms.embed.representation import component_texts
from transforms.progress import Progress

NAMESPACE = "thmforge.embed"
STAGE = "embed"
EMPTY = "empty"


def _without_vectors(row: dict) -> dict:
    return {**row, "embedding": None, "statement_embedding": None, "embedding_model": None}


class _SplitEmpty(beam.DoFn):
    def __init__(self, template: str):
        self.template = template
        self.empty = Metrics.counter(NAMESPACE, "empty_text")

    def process(self, row: dict):
        if component_texts(row, self.template):
            yield row
        else:
            self.empty.inc()
            yield beam.pvalue.TaggedOutput(EMPTY, row)


class _AttachVectors(beam.DoFn):
    def __init__(self, config: EmbedConfig):
        self.config = config
        self.embedded = Metrics.counter(NAMESPACE, "embedded")

    def setup(self):
        self.progress = Progress("embedding", unit="statements", enabled=self.config.progress)

    def teardown(self):
        self.progress.close()

    def process(self, result):
        vector, statement_vector = result.inference
        self.embedded.inc()
        self.progress.advance()
        yield {**result.example, "embedding": vector.tolist(), "embedding_model": self.config.model,
               "statement_embedding": statement_vector.tolist() if statement_vector is not None else None}


class _FailedBatch(beam.DoFn):
    """(batch, exception info) from RunInference's dead letters -> each row, vector-less, plus a failure."""

    def __init__(self):
        self.failed = Metrics.counter(NAMESPACE, "failed")

    def process(self, element):
        batch, error = element
        message = str(error[1] if isinstance(error, tuple) and len(error) > 1 else error)[:500]
        error_class = getattr(error[0], "__name__", "inference-error") if isinstance(error, tuple) else "inference-error"
        for row in batch:
            self.failed.inc()
            yield _without_vectors(row)
            yield beam.pvalue.TaggedOutput("failures", failure_record(row, error_class, message, stage=STAGE))


class EmbedStatements(beam.PTransform):
    """Embed theorem rows; returns `(rows, failures)`. With `model=None` rows pass with null vectors."""

    def __init__(self, config: EmbedConfig):
        super().__init__()
        self.config = config

    def expand(self, rows):
        if not self.config.enabled:
            passed = rows | "NoEmbedding" >> beam.Map(_without_vectors)
            return passed, rows.pipeline | "NoEmbedFailures" >> beam.Create([])
        # Beam's RunInference imports torch (~3 CPU-s, ~200 MB): loaded only when a model runs
        from apache_beam.ml.inference.base import RunInference

        from transforms.embed.handler import SentenceTransformerRowHandler

        split = rows | "SplitEmpty" >> beam.ParDo(_SplitEmpty(self.config.template)).with_outputs(EMPTY, main="texts")
        embedded, dead = (split.texts
                          | "Embed" >> RunInference(SentenceTransformerRowHandler(self.config)).with_exception_handling())
        attached = embedded | "AttachVectors" >> beam.ParDo(_AttachVectors(self.config))
        failed = dead.failed_inferences | "FailedBatches" >> beam.ParDo(_FailedBatch()).with_outputs(
            "failures", main="rows")
        empty_rows = split[EMPTY] | "EmptyRows" >> beam.Map(_without_vectors)
        empty_failures = split[EMPTY] | "EmptyFailures" >> beam.Map(
            lambda row: failure_record(row, "empty-text", "no description or statement text to embed", stage=STAGE))
        out_rows = (attached, failed.rows, empty_rows) | "MergeRows" >> beam.Flatten()
        failures = (failed.failures, empty_failures) | "MergeFailures" >> beam.Flatten()
        return out_rows, failures
