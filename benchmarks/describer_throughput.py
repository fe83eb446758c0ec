"""Describer throughput against the loopback chat server (fixed server delay per request).

Prints requests per second at each concurrency, twice: for the handler alone (the per-element
thread pool inside one RunInference batch call) and for the whole DescribeStatements pipeline on
FnApiRunner (cache join, batching and cache writes included, pipeline start-up too). With a 200 ms
delay the ideal is concurrency x 5 requests/s.

    .venv/bin/python benchmarks/describer_throughput.py [--concurrency 1,8,32] [--delay 0.2]
"""
from __future__ import annotations

import argparse
import pathlib
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

import apache_beam as beam  # noqa: E402
from apache_beam.options.pipeline_options import PipelineOptions  # noqa: E402
from apache_beam.runners.portability.fn_api_runner import FnApiRunner  # noqa: E402

from benchmarks.chat_server import ChatServer  # noqa: E402
from transforms.describe import DescribeConfig, DescribeStatements  # noqa: E402
from transforms.describe.handlers import _remote_describer  # noqa: E402
from transforms.describe.records import DescribeRequest  # noqa: E402


def answer(request: dict) -> str:
    return "A statement about " + str(len(request["messages"][-1]["content"])) + " characters of mathematics."


def make_rows(n: int, tag: str) -> list[dict]:
    return [{"theorem_id": f"{tag}-{i}", "paper_id": "bench", "kind": "lemma", "title": None,
             "statement_latex": f"Lemma {tag} {i}: for every $n > {i}$ the group $G_{{{i}}}$ is abelian.",
             "statement_text": f"for every n > {i} the group G_{i} is abelian"} for i in range(n)]


def handler_rate(server: ChatServer, config: DescribeConfig, n: int) -> float:
    describer = _remote_describer(config, server.url)
    requests = [DescribeRequest(key=str(i), statement_hash=str(i), heading="lemma",
                                statement=f"handler statement {i} with $x^{i}$", context="body", context_text=None)
                for i in range(n)]
    start = server.request_count
    began = time.perf_counter()
    outcomes = describer.describe_batch(requests)
    elapsed = time.perf_counter() - began
    describer.caller.close()
    assert all(o.description for o in outcomes), [o.message for o in outcomes if not o.description][:3]
    return (server.request_count - start) / elapsed


def pipeline_rate(server: ChatServer, config: DescribeConfig, n: int, tag: str) -> float:
    start = server.request_count
    began = time.perf_counter()
    with beam.Pipeline(runner=FnApiRunner(), options=PipelineOptions([])) as pipeline:
        rows, failures = pipeline | beam.Create(make_rows(n, tag)) | DescribeStatements(config)
        _ = failures | beam.Map(lambda f: (_ for _ in ()).throw(RuntimeError(f"unexpected failure {f}")))
    elapsed = time.perf_counter() - began
    return (server.request_count - start) / elapsed


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--concurrency", default="1,8,32")
    parser.add_argument("--delay", type=float, default=0.2, help="server delay per request, seconds")
    parser.add_argument("--rounds", type=int, default=20, help="requests per concurrency slot")
    args = parser.parse_args(argv)
    levels = [int(c) for c in args.concurrency.split(",")]
    print(f"server delay {args.delay * 1000:.0f} ms per request; ideal rate = concurrency / delay")
    print(f"{'concurrency':>11} {'requests':>8} {'ideal/s':>8} {'handler/s':>10} {'pipeline/s':>11} {'pipeline % ideal':>16}")
    with ChatServer(respond=answer, delay_s=args.delay) as server, tempfile.TemporaryDirectory() as tmp:
        for concurrency in levels:
            n = concurrency * args.rounds
            config = DescribeConfig(describer="openai", llm_endpoint=server.url, llm_model="bench",
                                    concurrency=concurrency, llm_timeout_s=30, cache_dir=f"{tmp}/cache-{concurrency}")
            handler = handler_rate(server, config, n)
            pipeline = pipeline_rate(server, config, n, f"c{concurrency}")
            ideal = concurrency / args.delay
            print(f"{concurrency:>11} {n:>8} {ideal:>8.1f} {handler:>10.1f} {pipeline:>11.1f} {100 * pipeline / ideal:>15.0f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
