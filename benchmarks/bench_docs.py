"""Write docs/bench_tasks.md from the task registry, so the task list and spec formats stay true.

    .venv/bin/python benchmarks/bench_docs.py [--check]

Each task's documentation is its `Task.doc` (the module docstring that states the rules and the
spec format), followed by a generated example spec and its reference answer. `--check` exits 1
when the committed file differs from what the registry gives (for CI).
"""
from __future__ import annotations

import argparse
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from transforms.bench.instances import canonical_json, draw_spec  # noqa: E402
from transforms.bench.registry import all_tasks  # noqa: E402
from transforms.bench.release import ALL_SUITES, EXTRA_SUITES, SUITES, release_cells  # noqa: E402

TARGET = pathlib.Path(__file__).resolve().parents[1] / "docs" / "bench_tasks.md"


def _example(task):
    difficulty, variant = task.cells[0]
    _, spec = draw_spec(task, difficulty, variant, "docs", 0)
    return spec, task.solve(spec), task.prompt(spec).question


def render() -> str:
    counts = {}
    for cell in release_cells():
        counts[cell.suite] = counts.get(cell.suite, 0) + cell.count
    lines = ["# Benchmark tasks", "",
             "Generated from the task registry by `benchmarks/bench_docs.py`; do not edit by hand.", "",
             "Default release: " + ", ".join(f"{s} {counts.get(s, 0)}" for s in SUITES)
             + f", total {sum(counts.values())} instances. Opt-in suites (`build-bench --suites`): "
             + ", ".join(f"{s} {sum(c.count for c in release_cells((s,)))}" for s in EXTRA_SUITES)
             + " instances at the default --per-cell.", ""]
    for suite in ALL_SUITES:
        tasks = all_tasks(suite)
        lines += [f"## Suite `{suite}`: {len(tasks)} tasks", ""]
        for task in tasks:
            _, _, question = _example(task)
            variants = f"; variants {', '.join(task.variants)}" if task.variants != ("",) else ""
            lines.append(f"- `{task.id}` ({task.category}, answer `{task.answer_type}`{variants}): e.g. \"{question}\"")
        lines.append("")
    lines += ["## Rules and spec formats", "",
              "Each section is the task module's documentation (rules, tie-breaks, spec fields, what `length` "
              "counts), then one generated spec and its reference answer. `thmforge bench-answer --task ID --spec "
              "JSON` answers any spec in these formats.", ""]
    first_shown: dict[str, str] = {}  # a module's documentation -> the task it is shown under
    for task in all_tasks():
        spec, answer, _ = _example(task)
        lines += [f"### `{task.id}`", ""]
        doc = (task.doc or "").strip()
        if doc and doc not in first_shown:
            lines += ["```text", doc, "```", ""]
            first_shown[doc] = task.id
        elif doc:
            lines += [f"Rules and spec format: see `{first_shown[doc]}`.", ""]
        lines += [f"Example spec: `{canonical_json(spec)}`", "", f"Answer: `{canonical_json(answer)}`", ""]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if the file is out of date instead of writing it")
    args = parser.parse_args()
    text = render()
    if args.check:
        current = TARGET.read_text() if TARGET.exists() else ""
        if current != text:
            print(f"{TARGET} is out of date; run benchmarks/bench_docs.py", file=sys.stderr)
            return 1
        return 0
    TARGET.write_text(text)
    print(f"wrote {TARGET} ({len(text.splitlines())} lines)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
