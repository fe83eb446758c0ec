"""The describe stage: a short natural-language description per statement (text, OpenAI-compatible, vLLM).

    config = DescribeConfig.from_options(options)          # options include DescribeOptions
    rows, failures = theorem_rows | DescribeStatements(config)
    # after the run: config.manifest({**summarize(rows, failures), **totals_from_metrics(result)})
"""
from transforms.describe.config import DESCRIBERS, DescribeConfig, DescribeOptions
from transforms.describe.records import ABSTRACT_KEY, INTRODUCTION_KEY, TRANSIENT_KEYS
from transforms.describe.summary import summarize, totals_from_metrics
from transforms.describe.transform import DescribeStatements

__all__ = [
    "DESCRIBERS", "DescribeConfig", "DescribeOptions", "DescribeStatements",
    "summarize", "totals_from_metrics", "ABSTRACT_KEY", "INTRODUCTION_KEY", "TRANSIENT_KEYS",
]
