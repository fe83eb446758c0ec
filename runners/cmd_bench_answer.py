"""Print the reference answer of a benchmark task for a spec you write, as JSON.

The spec is a JSON object (inline, or a file holding one) in the task's documented format (see
docs/bench_tasks.md), e.g.
    thmforge bench-answer --task queue/compound --spec '{"initial": [1], "operations": [["enqueue", 2], ["dequeue"]]}'
A spec that lacks fields is reported with every missing field and the task's spec schema; any
other invalid spec with the field that is wrong (exit code 2).
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


def _json_type(value) -> str:
    """A short type name of a JSON value: int, str, list[int], list[list[int] | str], object, ..."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float, str)):
        return type(value).__name__
    if isinstance(value, dict):
        return "object"
    if value is None:
        return "null"
    items = sorted({_json_type(v) for v in value})
    return f"list[{' | '.join(items)}]" if items else "list"


def spec_schema(task) -> tuple[dict[str, str], dict]:
    """(field -> type, an example spec) of the task, read off the specs it generates; the schema
    holds the fields every variant's spec has."""
    from transforms.bench.registry import DIFFICULTY_LENGTHS, rng_for

    length = DIFFICULTY_LENGTHS[task.difficulties[0]][0]
    examples = [task.make_spec(rng_for("spec-schema", task.id, v), length, v) for v in task.variants]
    common = set.intersection(*(set(e) for e in examples))
    return {k: _json_type(examples[0][k]) for k in sorted(common)}, examples[0]


def check_fields(task, spec: dict) -> None:
    """Every missing field at once, with the schema, instead of one failure per attempt."""
    from transforms.bench.instances import canonical_json

    schema, example = spec_schema(task)
    missing = [k for k in schema if k not in spec]
    if missing:
        fields = ", ".join(f"{k}: {t}" for k, t in schema.items())
        raise UsageError(f"the spec of {task.id} lacks {', '.join(missing)}; spec schema {{{fields}}}; "
                         f"example {canonical_json(example)}; see docs/bench_tasks.md")


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
    check_fields(task, spec)
    try:
        answer = task.solve(spec)
    except (ValueError, KeyError, TypeError, IndexError) as exc:
        # SpecError (a ValueError) carries a message naming the field; the others come from specs
        # whose shape a task did not anticipate and are reported the same way.
        raise UsageError(f"invalid spec for {task.id}: {exc}") from None
    print(canonical_json(answer))
    return 0
