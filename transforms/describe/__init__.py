"""The describe stage: a short natural-language description per statement (text, OpenAI-compatible, vLLM).

    config = DescribeConfig.from_options(options)          # options include DescribeOptions
    rows, failures = theorem_rows | DescribeStatements(config)
    # after the run: config.manifest({**summarize(rows, failures), **totals_from_metrics(result)})

The names are imported on first use, so `transforms.describe.options` (the command-line arguments)
loads without Beam.
"""
import importlib

_EXPORTS = {
    "DESCRIBERS": "transforms.describe.options", "DescribeConfig": "transforms.describe.config",
    "DescribeOptions": "transforms.describe.config", "ABSTRACT_KEY": "transforms.describe.records",
    "INTRODUCTION_KEY": "transforms.describe.records", "TRANSIENT_KEYS": "transforms.describe.records",
    "summarize": "transforms.describe.summary", "totals_from_metrics": "transforms.describe.summary",
    "DescribeStatements": "transforms.describe.transform",
}
__all__ = list(_EXPORTS)


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_EXPORTS[name]), name)
