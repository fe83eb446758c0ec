"""Precision of `restates` edges on a hand-labelled sample.

    .venv/bin/python benchmarks/restates_sample.py draw CORPUS_DIR --n 40 > benchmarks/restates_sample.jsonl
    .venv/bin/python benchmarks/restates_sample.py score benchmarks/restates_sample.jsonl

`draw` picks pairs (each pair once, whatever its direction) from a linked corpus, deterministically
(ordered by a hash of the two ids), spread over the methods, and prints one JSON line per pair with
both statements' text and `"same": null`. A person then sets `same` to true (the two state the same
result) or false, by reading them. `score` prints the precision per method and overall.

`restates_sample.jsonl` beside this script: drawn from build-corpus (--embed-statements) + link
over the shared HoTT book, Rijke's HoTT introduction, CRing, SymmetryBook and Shulman's catlog
(1,556 statements; every pair found, 15, all by `embedding`), labelled by hand: 11/15 = 0.73.
"""
from __future__ import annotations

import argparse
import collections
import hashlib
import json
import pathlib
import sys

import duckdb


def draw(corpus: pathlib.Path, n: int) -> list[dict]:
    theorems = f"read_parquet('{corpus}/theorems/**/*.parquet', hive_partitioning = true, union_by_name = true)"
    rows = duckdb.sql(f"""
        SELECT e.method, a.theorem_id, a.paper_id, a.display_name, a.number, a.statement_text,
               b.theorem_id, b.paper_id, b.display_name, b.number, b.statement_text
        FROM read_parquet('{corpus}/edges/**/*.parquet', hive_partitioning = true) e
        JOIN {theorems} a ON a.theorem_id = e.src_theorem_id
        JOIN {theorems} b ON b.theorem_id = e.dst_theorem_id
        WHERE e.relation = 'restates' AND e.src_theorem_id < e.dst_theorem_id""").fetchall()
    pairs = [{"method": r[0], "a": {"theorem_id": r[1], "paper_id": r[2], "name": f"{r[3]} {r[4]}", "text": r[5]},
              "b": {"theorem_id": r[6], "paper_id": r[7], "name": f"{r[8]} {r[9]}", "text": r[10]}, "same": None}
             for r in rows]
    pairs.sort(key=lambda p: hashlib.sha256(f"{p['a']['theorem_id']}|{p['b']['theorem_id']}".encode()).hexdigest())
    by_method = collections.defaultdict(list)
    for pair in pairs:
        by_method[pair["method"]].append(pair)
    sample: list[dict] = []
    while len(sample) < n and any(by_method.values()):   # round robin over methods
        for method in sorted(by_method):
            if by_method[method] and len(sample) < n:
                sample.append(by_method[method].pop(0))
    return sample


def score(path: pathlib.Path) -> dict[str, tuple[int, int]]:
    counts: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0])
    for line in path.read_text().splitlines():
        pair = json.loads(line)
        if pair["same"] is None:
            raise SystemExit(f"{path}: unlabelled pair {pair['a']['theorem_id']} / {pair['b']['theorem_id']}")
        for key in (pair["method"], "all"):
            counts[key][0] += bool(pair["same"])
            counts[key][1] += 1
    return {k: (v[0], v[1]) for k, v in sorted(counts.items())}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    d = sub.add_parser("draw")
    d.add_argument("corpus", type=pathlib.Path)
    d.add_argument("--n", type=int, default=40)
    s = sub.add_parser("score")
    s.add_argument("labelled", type=pathlib.Path)
    args = parser.parse_args()
    if args.command == "draw":
        for pair in draw(args.corpus, args.n):
            sys.stdout.write(json.dumps(pair, ensure_ascii=False, sort_keys=True) + "\n")
    else:
        for method, (correct, total) in score(args.labelled).items():
            print(f"{method}: precision {correct}/{total} = {correct / total:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
