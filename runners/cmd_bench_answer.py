"""Print the reference answer of a benchmark task for a spec you write, as JSON.

The spec is a JSON object (inline, or a file holding one) in the task's documented format (see
docs/bench_tasks.md), e.g.
    thmforge bench-answer --task queue/compound --spec '{"initial": [1], "operations": [["enqueue", 2], ["dequeue"]]}'
An invalid spec is reported with the field that is wrong (exit code 2).
"""
from __future__ import annotations

import json
import os

from schemas.errors import UsageError


def add_arguments(parser) -> None:
    parser.add_argument("--task", required=True, metavar="STRUCTURE/TASK", help="e.g. priority_queue/compound")
    parser.add_argument("--spec", required=True, metavar="FILE_OR_JSON", help="the spec: inline JSON or a file path")


def read_spec(text: str):
    if os.path.isfile(text):
        with open(text, encoding="utf-8") as handle:
            text = handle.read()
    elif not text.lstrip().startswith(("{", "[")):
        raise UsageError(f"--spec is neither a file nor JSON: {text[:80]!r}")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"--spec is not valid JSON: {exc}") from None


def run(args, beam_args) -> int:
    from transforms.bench.instances import canonical_json
    from transforms.bench.registry import get_task

    try:
        task = get_task(args.task)
    except KeyError as exc:
        raise UsageError(exc.args[0]) from None
    spec = read_spec(args.spec)
    if not isinstance(spec, dict):
        raise UsageError(f"the spec must be a JSON object, got {type(spec).__name__}")
    try:
        answer = task.solve(spec)
    except (ValueError, KeyError, TypeError, IndexError) as exc:
        # SpecError (a ValueError) carries a message naming the field; the others come from specs
        # whose shape a task did not anticipate and are reported the same way.
        raise UsageError(f"invalid spec for {task.id}: {exc}") from None
    print(canonical_json(answer))
    return 0
