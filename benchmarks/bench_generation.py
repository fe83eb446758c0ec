"""Time to generate benchmark releases, against a plain loop measured in the same run.

    .venv/bin/python benchmarks/bench_generation.py [--large-per-cell 1000] [--preset local]

Prints, for the default release (4,140 instances; target under 60 s) and for --per-cell N:
wall seconds and CPU-seconds of the whole `build-bench` pipeline (Beam, Parquet, JSONL, HF dataset,
manifest; CPU-seconds compare runs on a loaded machine), instances per second, and the ratio against the baseline: the same instances built by a plain
Python loop over `build_instance`, without Beam or any writing.
"""
from __future__ import annotations

import argparse
import os
import pathlib
import shutil
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from pipelines import bench  # noqa: E402
from runners.presets import apply_preset  # noqa: E402
from transforms.bench.instances import build_instance  # noqa: E402
from transforms.bench.registry import get_task  # noqa: E402
from transforms.bench.release import DEFAULT_PER_CELL, release_cells  # noqa: E402


def loop_seconds(per_cell: int, seed: int) -> tuple[int, float]:
    start, built = time.perf_counter(), 0
    for cell in release_cells(per_cell=per_cell):
        task = get_task(cell.task_id)
        for index in range(cell.count):
            build_instance(task, cell.difficulty, index, seed, cell.variant)
            built += 1
    return built, time.perf_counter() - start


def pipeline_seconds(per_cell: int, seed: int, preset: str) -> tuple[int, float, float, str]:
    output = tempfile.mkdtemp(prefix="bench-generation-")
    try:
        start, cpu = time.perf_counter(), time.process_time()
        manifest = bench.run(output, seed=seed, per_cell=per_cell, beam_args=apply_preset(preset, []))
        return (manifest["counts"]["total"], time.perf_counter() - start, time.process_time() - cpu,
                manifest["content_hash"])
    finally:
        shutil.rmtree(output)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--large-per-cell", type=int, default=1000)
    parser.add_argument("--preset", default="local")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print(f"machine: {os.cpu_count()} cores; preset {args.preset}")
    for per_cell in (DEFAULT_PER_CELL, args.large_per_cell):
        built, loop_s = loop_seconds(per_cell, args.seed)
        total, pipe_s, pipe_cpu, content_hash = pipeline_seconds(per_cell, args.seed, args.preset)
        assert total == built, (total, built)
        label = "default release" if per_cell == DEFAULT_PER_CELL else f"--per-cell {per_cell}"
        print(f"{label}: {total} instances; pipeline {pipe_s:.1f} s, {pipe_cpu:.1f} CPU-s in this process "
              f"({total / pipe_s:,.0f} instances/s); "
              f"baseline loop {loop_s:.1f} s ({built / loop_s:,.0f} instances/s); pipeline/loop {pipe_s / loop_s:.2f}x; "
              f"{content_hash[:19]}")
        if per_cell == DEFAULT_PER_CELL:
            print(f"  default release target < 60 s: {'met' if pipe_s < 60 else 'MISSED'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
