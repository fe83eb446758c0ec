"""Helpers for describe tests (imported by module name): theorem rows, a prompt-driven fake model, and a pipeline runner."""
import glob
import json
import re

import apache_beam as beam
from apache_beam.options.pipeline_options import PipelineOptions
from apache_beam.runners.portability.fn_api_runner import FnApiRunner

from transforms.describe import DescribeStatements, totals_from_metrics

STATEMENTS = [
    ("Every bounded monotone sequence of real numbers converges.", None),
    ("Let $G$ be a finite group and $H \\le G$. Then $|H|$ divides $|G|$.", "Lagrange"),
    ("There are infinitely many prime numbers.", None),
    ("A continuous function on a compact set attains its maximum.", "Extreme value theorem"),
    ("Every planar graph is four colourable.", None),
    ("The harmonic series diverges.", None),
]


def make_row(i, body, title=None, paper="p1", **extra):
    row = {
        "theorem_id": f"{paper}#{i:03d}", "paper_id": f"arxiv:{paper}", "source": "arxiv", "year": 2021,
        "ordinal": i, "kind": "theorem", "env_name": "theorem", "display_name": "Theorem", "number": str(i + 1),
        "title": title, "label": None, "tag": None, "section_path": ["Intro"], "file": "main.tex", "line": 10 + i,
        "statement_latex_raw": body, "statement_latex": body, "statement_text": body.replace("$", ""),
        "slogan": None, "proof_latex": None, "content_hash": None, "url": None,
    }
    row.update(extra)
    return row


def sample_rows():
    return [make_row(i, body, title) for i, (body, title) in enumerate(STATEMENTS)]


def _statement_of(request):
    user = request["messages"][1]["content"]
    return user.split("\n\n", )[-1]


def words_answer(request):
    """A valid description made from the statement's words; misbehaves on marker words."""
    statement = _statement_of(request)
    strict = len(request["messages"]) > 2
    if "EMPTYANSWER" in statement:
        return ""
    if "ALWAYSBAD" in statement or ("BADFIRST" in statement and not strict):
        return "We have $x^2 \\leq y$ for all \\alpha."
    if "TOOLONG" in statement and not strict:
        return " ".join(f"Sentence number {n} is here." for n in range(6))
    words = [w.lower() for w in re.findall(r"[A-Za-z]{3,}", statement)][:8]
    return "A result about " + " ".join(words) + "."


def run_describe(rows, config, tmp_path, name="run"):
    """Run DescribeStatements on FnApiRunner; returns (rows, failures, metrics totals)."""
    out = tmp_path / name
    pipeline = beam.Pipeline(runner=FnApiRunner(), options=PipelineOptions([]))
    described, failures = pipeline | beam.Create(rows) | DescribeStatements(config)
    described | "RowsJson" >> beam.Map(json.dumps) | "WriteRows" >> beam.io.WriteToText(str(out / "rows"))
    failures | "FailJson" >> beam.Map(json.dumps) | "WriteFails" >> beam.io.WriteToText(str(out / "failures"))
    result = pipeline.run()
    result.wait_until_finish()

    def read(prefix):
        return [json.loads(line) for path in sorted(glob.glob(str(out / prefix) + "*"))
                for line in open(path) if line.strip()]

    return read("rows"), read("failures"), totals_from_metrics(result)


