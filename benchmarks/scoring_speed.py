"""Time to score the default release (4,140 instances) x 3 trials; target under 30 s on 2 cores.

The release is built by `thmforge build-bench`'s pipeline (seed 0) into a temporary directory and
read back from its `instances.jsonl`. The three trials are built from the ground truth so every scoring path runs: trial 0 is the oracle
re-spelled (fenced, indented JSON), trial 1 the heuristic policy's answer (benchmarks/
heuristic_policy.py), trial 2 the truth with one systematic corruption (a list element off by
one, a tree's root children swapped, nested lists reversed), which makes tree edit distance and
element edit distance do real work. Prints the scorer alone, the whole `eval-bench` pipeline
(Beam FnApiRunner, Parquet, report with plots), and as a baseline in the same run the cost of
string equality over the raw responses (the naive scorer this replaces).

    .venv/bin/python benchmarks/scoring_speed.py [--per-cell 30]
"""
from __future__ import annotations

import argparse
import json
import pathlib
import statistics
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.heuristic_policy import respond  # noqa: E402
from pipelines import eval_bench  # noqa: E402
from pipelines import bench  # noqa: E402
from schemas import SCORES  # noqa: E402
from transforms.scoring.metrics import structural  # noqa: E402
from transforms.scoring.score import score_prediction  # noqa: E402
from transforms.scoring.tables import read_rows  # noqa: E402

TARGET_S = 30.0


def build_release(root: pathlib.Path, per_cell: int) -> tuple[list[dict], dict]:
    """The release's rows as build-bench wrote them, and its manifest."""
    manifest = bench.run(str(root), seed=0, per_cell=per_cell, beam_args=["--runner=FnApiRunner"])
    with open(root / "instances.jsonl", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle], manifest


def corrupt(answer, answer_type: str):
    """One systematic error of the kind models make, per answer shape."""
    if answer_type == "int":
        return answer + 1
    if answer_type.startswith("tree:binary") and answer:
        return [answer[0], answer[2], answer[1]]
    if answer_type == "tree:nary" and answer and len(answer[1]) > 1:
        return [answer[0], list(reversed(answer[1]))]
    if isinstance(answer, list) and answer and all(isinstance(x, int) for x in answer):
        return answer[:-1] + [answer[-1] + 1]
    if isinstance(answer, list):
        return list(reversed(answer))
    return answer


def predictions(rows: list[dict]) -> list[dict]:
    out = []
    for row in rows:
        answer = json.loads(row["answer"])
        responses = (
            "```json\n" + json.dumps({"final_answer": answer}, indent=2) + "\n```",
            respond({"messages": [{"role": "user", "content": row["prompt"]}]}),
            json.dumps({"final_answer": corrupt(answer, row["answer_type"])}),
        )
        out += [{"instance_id": row["instance_id"], "model": "speed", "trial": t, "response": r}
                for t, r in enumerate(responses)]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-cell", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp)
        rows, manifest = build_release(root / "release", args.per_cell)
        by_id = {r["instance_id"]: r for r in rows}
        preds = predictions(rows)
        print(f"release: {len(rows)} instances, content hash {manifest.get('content_hash')}; "
              f"predictions: {len(preds)}")

        started = time.perf_counter()
        naive = sum(p["response"] == by_id[p["instance_id"]]["answer"] for p in preds)
        baseline_s = time.perf_counter() - started

        started = time.perf_counter()
        scores = [score_prediction(by_id[p["instance_id"]], p) for p in preds]
        scorer_s = time.perf_counter() - started

        with open(root / "predictions.jsonl", "w") as handle:
            handle.writelines(json.dumps(p) + "\n" for p in preds)
        structural.cache_clear()  # no head start from the scorer run above
        started = time.perf_counter()
        result = eval_bench.run(str(root / "release"), str(root / "predictions.jsonl"), str(root / "eval"),
                                ["--runner=FnApiRunner"])
        pipeline_s = time.perf_counter() - started
        oracle = read_rows(root / "eval" / "scores", SCORES)

    for trial, label in enumerate(("oracle (re-spelled)", "heuristic policy", "corrupted truth")):
        mine = [s for s in scores if s["trial"] == trial]
        print(f"  trial {trial} {label:20s} exact {statistics.fmean(s['exact'] for s in mine):.3f}  "
              f"partial {statistics.fmean(s['partial'] for s in mine):.3f}  "
              f"structural {statistics.fmean(s['structural'] for s in mine):.3f}")
    oracle = [r for r in oracle if r["trial"] == 0]
    perfect = sum(r["exact"] == r["partial"] == r["structural"] == 1.0 for r in oracle)
    print(f"oracle through eval-bench: {perfect} of {len(oracle)} instances score exactly 1.0 "
          f"(exact, partial and structural)")
    print(f"baseline string equality: {baseline_s:.3f} s ({naive} equal)")
    print(f"scorer (parse, canonicalize, exact/partial/structural): {scorer_s:.2f} s "
          f"= {len(preds) / scorer_s:,.0f} predictions/s ({scorer_s / baseline_s:,.0f}x the baseline)")
    print(f"eval-bench pipeline end to end ({result['scored']} scored, report written): {pipeline_s:.2f} s "
          f"(target < {TARGET_S:.0f} s: {'met' if pipeline_s < TARGET_S else 'MISSED'})")


if __name__ == "__main__":
    main()
