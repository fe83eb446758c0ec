"""Regenerate docs/eval_example/: run-bench + eval-bench of the heuristic policy over loopback.

The default release is built by build-bench's pipeline (seed 0); a slice of it (the first
`--per-cell` instances of every cell) is asked
through the real chat-completions protocol of benchmarks/chat_server.py, whose answers come from
benchmarks/heuristic_policy.py (two variants: `heuristic-echo` and `heuristic-sorted`), with
429s, 500s, timeouts and malformed bodies injected. Then eval-bench scores the predictions and
the report with its plots is copied to docs/eval_example/.

    .venv/bin/python benchmarks/eval_example.py [--per-cell 2] [--output docs/eval_example]
"""
from __future__ import annotations

import argparse
import json
import pathlib
import shutil
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.chat_server import ChatServer, FaultPlan  # noqa: E402
from benchmarks.heuristic_policy import respond  # noqa: E402
from pipelines import bench, eval_bench, run_bench  # noqa: E402
from transforms.scoring.report import HEATMAP, LENGTH_PLOT, RADAR  # noqa: E402
from transforms.scoring.tables import write_instances  # noqa: E402

MODELS = ("heuristic-echo", "heuristic-sorted")
FAULTS = FaultPlan(rate_429=0.04, rate_500=0.04, rate_timeout=0.01, rate_malformed=0.03,
                   retry_after_s=0.05, timeout_sleep_s=1.5, seed=11)
HEURISTIC = (
    "**The heuristic (no model was queried).** `heuristic-echo` answers from the prompt alone: "
    "a question asking for an integer gets the last integer of the instance's setup; a question "
    "asking for a list of integers gets the setup's integers in order of appearance (the input as "
    "given); every other question (names, nested lists, trees, graphs, automata) gets the empty "
    "answer of its shape (`null` or `[]`). `heuristic-sorted` is the same with lists sorted "
    "ascending. The spelling of each response varies with a hash of its prompt (plain JSON, fenced "
    "JSON after prose, Python-style quotes, a bare `Final answer:` line) and one response in twelve "
    "gives no answer, so the parser's paths and its parse errors show up. The policy is "
    "deterministic: differences between trials come only from requests that kept failing."
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-cell", type=int, default=2, help="instances per cell of the default release")
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--output", default=str(REPO / "docs" / "eval_example"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = pathlib.Path(tmp)
        manifest = bench.run(str(work / "default"), seed=0, beam_args=["--runner=FnApiRunner"])
        with open(work / "default" / "instances.jsonl", encoding="utf-8") as handle:
            rows = [row for row in map(json.loads, handle) if row["index"] < args.per_cell]
        write_instances(rows, work / "release")
        started = time.perf_counter()
        with ChatServer(respond=respond, faults=FAULTS) as server:
            for model in MODELS:
                config = run_bench.RunConfig(endpoint=server.url, model=model, trials=args.trials,
                                             concurrency=8, timeout_s=0.5, max_attempts=3,
                                             initial_backoff_s=0.02)
                result = run_bench.run(str(work / "release"), str(work / "run"), config, ["--runner=FnApiRunner"])
                print(f"{model}: {result}")
            faults = dict(sorted(server.fault_counts.items()))
            requests = server.request_count
        asked_s = time.perf_counter() - started
        notes = [
            HEURISTIC, "",
            f"**The run.** {len(rows)} instances (the first {args.per_cell} of every cell of the default "
            f"release, seed 0, content hash `{manifest['content_hash']}`) x {args.trials} trials x {len(MODELS)} policies, asked over the loopback "
            f"chat-completions server with faults injected: {requests} HTTP requests, injected {faults}; "
            f"run-bench retried with backoff (at most 3 attempts, 0.5 s timeout) in {asked_s:.1f} s. "
            "Regenerate with `.venv/bin/python benchmarks/eval_example.py`.", "",
        ]
        result = eval_bench.run(str(work / "release"), str(work / "run"), str(work / "eval"),
                                ["--runner=FnApiRunner"], title="Example evaluation: heuristic policies",
                                notes=notes, name_inputs=False)
        out = pathlib.Path(args.output)
        out.mkdir(parents=True, exist_ok=True)
        for name in ("report.md", RADAR, HEATMAP, LENGTH_PLOT):
            shutil.copy(work / "eval" / name, out / name)
    print(f"scored {result['scored']}; report in {out / 'report.md'}")


if __name__ == "__main__":
    main()
