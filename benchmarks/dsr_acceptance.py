"""import-dsr, run-bench and eval-bench end to end: an imported release and the default release in one report.

Without `--dsr-checkout`, a checkout in DSR-Bench's file formats is written first from thmforge's
own generators (every format import-dsr reads, 30 instances per file and difficulty; answers
from thmforge's reference, so the agreement figure only checks the round trip; with a real
checkout of https://github.com/dransyhe/DSR-Bench it is the real comparison). Then the default
release (seed 0) is built, both releases are asked through the loopback chat-completions server
(benchmarks/chat_server.py) answering with benchmarks/heuristic_policy.py, and one eval-bench
report covers both. Prints the import counts, the timings and where the report is.

    .venv/bin/python benchmarks/dsr_acceptance.py [--dsr-checkout PATH] [--trials 1] [--output DIR]
"""
from __future__ import annotations

import argparse
import json
import pathlib
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.chat_server import ChatServer  # noqa: E402
from benchmarks.heuristic_policy import respond  # noqa: E402
from pipelines import bench, eval_bench, import_dsr, run_bench  # noqa: E402
from transforms.bench.instances import draw_spec  # noqa: E402
from transforms.bench.registry import DIFFICULTIES, get_task  # noqa: E402

MODELS = ("heuristic-echo", "heuristic-sorted")
PER_FILE = 30
LOCAL = ["--runner=FnApiRunner", "--direct_running_mode=in_memory"]


def _specs(task_id: str, difficulty: str):
    task = get_task(task_id)
    for index in range(PER_FILE):
        yield task, draw_spec(task, difficulty, "", "dsr-format", index)[1]


ARRAY_LABELS = {"access": lambda s: f"Index: {s['index']}\n",
                "delete": lambda s: f"Element: {s['array'][s['index']]}\n",
                "insert": lambda s: f"Index: {s['index']}\nElement: {s['value']}\n",
                "reverse": lambda s: "", "search": lambda s: f"Element: {s['value']}\n"}


def _array(name: str):
    def render(difficulty: str) -> str:
        blocks = []
        for i, (task, spec) in enumerate(_specs(f"array/{name}", difficulty)):
            if name == "delete":      # DSR-Bench deletes by value: make the index the value's first occurrence
                spec = {**spec, "index": spec["array"].index(spec["array"][spec["index"]])}
            blocks.append(f"{i}\n{spec['array']}\n{ARRAY_LABELS[name](spec)}Answer: {task.solve(spec)}\n")
        return "".join(blocks)
    return render


def _stack(difficulty: str) -> str:
    blocks = []
    for task, spec in _specs("stack/compound", difficulty):
        ops = [["push", v] for v in spec["initial"]] + spec["operations"]
        blocks.append("".join(f"{' '.join(map(str, op))}\n" for op in ops)
                      + f"{task.solve({'initial': [], 'operations': ops})}\n")
    return "".join(blocks)


def _heap(difficulty: str) -> str:
    blocks = []
    for i, (task, spec) in enumerate(_specs("heap/compound", difficulty)):
        ops = [["insert", v] for v in spec["values"]] + spec["operations"]
        answer = task.solve({"kind": "min", "values": [], "operations": ops})
        blocks.append(f"Heap {i}\n" + "".join("delete\n" if op[0] == "extract" else f"insert {op[1]}\n" for op in ops)
                      + f"{answer}\n")
    return "".join(blocks)


def _queue(difficulty: str) -> str:
    blocks = []
    for task, spec in _specs("queue/compound", difficulty):
        ops = [["enqueue", v] for v in spec["initial"]] + spec["operations"]
        answer = task.solve({"initial": [], "operations": ops})
        blocks.append("".join(f"{' '.join(map(str, op))}\n" for op in ops) + f"{answer}\n")
    return "".join(blocks)


def _priority_queue(difficulty: str) -> str:
    names = {"increase_key": "raise_key", "decrease_key": "decrease_key", "insert": "insert"}
    blocks = []
    for i, (task, spec) in enumerate(_specs("priority_queue/compound_no_op", difficulty)):
        ops = [["insert", v, p] for v, p in spec["initial"]] + spec["operations"]
        lines = [f"PriorityQueue {i}"] + ["delete" if op[0] == "delete" else f"{names[op[0]]} ({op[1]}, {op[2]})"
                                          for op in ops]
        blocks.append("\n".join(lines) + f"\n{task.solve({'initial': [], 'operations': ops})}\n")
    return "".join(blocks)


def _bloom_filter(difficulty: str) -> str:
    return "".join(f"CountingBloomFilter {i} (m: {spec['m']}, k: {spec['k']})\n"
                   + "".join(f"{op[0]} {op[1]}\n" for op in spec["operations"]) + f"{task.solve(spec)}\n"
                   for i, (task, spec) in enumerate(_specs("bloom_filter/compound_clamped", difficulty)))


def _kd_heap(difficulty: str) -> str:
    return "".join(f"Heap {i}, Dimension: 2\n"
                   + "".join("delete\n" if op[0] == "extract" else f"insert ({op[1]}, {op[2]})\n"
                             for op in spec["operations"]) + f"{task.solve(spec)}\n"
                   for i, (task, spec) in enumerate(_specs("kd_heap/labelled_compound", difficulty)))


def _ball_tree(difficulty: str) -> str:
    return "".join(f"Tree {i}, M = {spec['leaf_size']}\nPoints: {spec['points']}\nTraversal: {task.solve(spec)}\n"
                   for i, (task, spec) in enumerate(_specs("ball_tree/construct", difficulty)))


def _clinic(difficulty: str) -> str:
    blocks = []
    for task, spec in _specs("bst/natural_clinic_cancel", difficulty):
        times, lines = {}, []
        for event in spec["events"]:
            if event[0] == "book":
                times[event[2]] = event[1]
                lines.append(f"insert {event[2]} {event[1]}")
            elif event[0] == "cancel":
                lines.append(f"delete {event[1]}")
        answer = [(name, times[name]) for name in task.solve(spec)]
        blocks.append("\n".join(lines) + f"\n{answer}\n")
    return "\n".join(blocks)


FILES = {
    **{f"generation/array/{name}/{name}_{{d}}.txt": _array(name) for name in ARRAY_LABELS},
    "generation/stack/compound/compound_{d}.txt": _stack,
    "generation/heap/compound/compound_{d}.txt": _heap,
    "generation/queue/compound/compound_{d}.txt": _queue,
    "generation/priority_queue/compound/compound_{d}.txt": _priority_queue,
    "generation/bloom_filter/compound/compound_{d}.txt": _bloom_filter,
    "generation/kd_heap/compound_2d/compound_{d}.txt": _kd_heap,
    "generation/ball_tree/construction/bt_construction_{d}.txt": _ball_tree,
    "natural/bst/natural-{d}.txt": _clinic,
}


def write_checkout(root: pathlib.Path) -> None:
    for pattern, render in FILES.items():
        for difficulty in DIFFICULTIES:
            path = root / pattern.format(d=difficulty)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(render(difficulty))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dsr-checkout", default=None, help="a real DSR-Bench checkout (default: a written sample)")
    parser.add_argument("--trials", type=int, default=1)
    parser.add_argument("--output", default=None, help="where the report goes (default: a temporary directory)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = pathlib.Path(tmp)
        checkout = pathlib.Path(args.dsr_checkout) if args.dsr_checkout else work / "DSR-Bench"
        if not args.dsr_checkout:
            write_checkout(checkout)
        started = time.perf_counter()
        summary = import_dsr.import_release(str(checkout), str(work / "dsr"))
        print(f"import-dsr: {summary['imported']} imported, {summary['agree']} agree, {summary['failed']} failed, "
              f"{len(summary['skipped_files'])} files skipped in {time.perf_counter() - started:.1f} s")
        for task_id, counts in sorted(summary["by_task"].items()):
            print(f"  {task_id}: {counts}")
        manifest = bench.run(str(work / "default"), seed=0, beam_args=LOCAL)
        print(f"default release: {manifest['counts']['total']} instances, {manifest['content_hash']}")
        started = time.perf_counter()
        with ChatServer(respond=respond) as server:
            for release in ("default", "dsr"):
                for model in MODELS:
                    config = run_bench.RunConfig(endpoint=server.url, model=model, trials=args.trials, concurrency=8)
                    result = run_bench.run(str(work / release), str(work / f"run-{release}"), config, LOCAL)
                    print(f"run-bench {release} {model}: {result}")
        print(f"run-bench: {time.perf_counter() - started:.1f} s")
        out = pathlib.Path(args.output) if args.output else work / "eval"
        notes = [f"Default release (seed 0, `{manifest['content_hash']}`) and an import-dsr release "
                 f"({summary['imported']} instances) asked with the heuristic policies over loopback."]
        result = eval_bench.run([str(work / "default"), str(work / "dsr")],
                                [str(work / "run-default"), str(work / "run-dsr")], str(out), LOCAL,
                                title="Heuristic policies on the default and an imported release", notes=notes)
        print(json.dumps({"scored": result["scored"], "rejected": result["rejected"], "report": result["report"],
                          "overall": [(s.model, round(s.mean["exact"], 3), s.instances, s.trials)
                                      for s in result["overall"]]}))
        if not args.output:
            print((out / "report.md").read_text()[:3000])


if __name__ == "__main__":
    main()
