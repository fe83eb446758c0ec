"""`local-parallel` against `local`: wall time and CPU of the same build-corpus job.

    .venv/bin/python benchmarks/runner_speedup.py [--shared ../shared/corpora] [--no-embed]
    .venv/bin/python benchmarks/runner_speedup.py --copies 1,4,12,36 [--repeat 2]

The first form runs both presets once on the shared corpora. --copies builds inputs the way
`bundle_memory.py --end-to-end` does (N copies of the shared 2101 bundle, 2.79 MB of LaTeX each,
ids renumbered, one bundle per copy; 36 copies are about 100 MB) and runs
`build-corpus --embed-model none` with each preset, interleaved (local, local-parallel, local, ...)
`--repeat` times per size. It prints, per size and preset, the median wall time and CPU seconds
(the job and its worker processes) with their spread, the one-minute load average at each run's
start, and the speed-up of the medians: on a shared machine a figure means little without them.
"""
from __future__ import annotations

import argparse
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
THMFORGE = str(pathlib.Path(sys.executable).with_name("thmforge"))
PRESETS = ("local", "local-parallel")


def corpora(shared: pathlib.Path) -> dict[str, list[str]]:
    books = sorted(str(p) for p in (shared / "books").iterdir() if p.is_dir())
    return {
        "arxiv bundles": ["--input", *sorted(str(p) for p in (shared / "arxiv").glob("*.tar")),
                          "--metadata", str(shared / "arxiv" / "arxiv-metadata-oai-snapshot.json")],
        "books (latex-project)": ["--source", "latex-project", "--input", *books],
    }


def timed_build(args: list[str], preset: str, embed: bool) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the job and the worker processes it waited for)."""
    with tempfile.TemporaryDirectory() as out:
        cmd = [THMFORGE, "build-corpus", *args, "--output", out, "--preset", preset, "--no-progress"]
        if not embed:
            cmd += ["--embed-model", "none"]
        started = time.perf_counter()
        pid = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).pid
        _, status, usage = os.wait4(pid, 0)
        wall = time.perf_counter() - started
    if status:
        raise SystemExit(f"build-corpus --preset {preset} failed (status {status}): rerun it by hand to see why")
    return wall, usage.ru_utime + usage.ru_stime


def _spread(values: list[float]) -> str:
    return f"{statistics.median(values):7.1f} ({min(values):.1f}-{max(values):.1f})"


def by_size(copies: list[int], repeat: int) -> None:
    from benchmarks.bundle_memory import build_copies

    print(f"{'copies':>6} {'LaTeX MB':>8} {'bundles MB':>10} {'preset':15} {'wall s median (range)':>22} "
          f"{'CPU s median (range)':>21} {'load at start':>14}")
    for count in copies:
        with tempfile.TemporaryDirectory(prefix="thmforge-speedup-") as scratch:
            folder = pathlib.Path(scratch)
            latex_mb = build_copies(folder, count) * count
            bundles = sorted(folder.glob("*.tar"))
            bundle_mb = sum(p.stat().st_size for p in bundles) / 1e6
            runs: dict[str, list[tuple[float, float, float]]] = {p: [] for p in PRESETS}
            for _ in range(repeat):
                for preset in PRESETS:
                    load = os.getloadavg()[0]
                    wall, cpu = timed_build(["--input", *map(str, bundles)], preset, embed=False)
                    runs[preset].append((wall, cpu, load))
        for preset in PRESETS:
            walls, cpus, loads = zip(*runs[preset])
            print(f"{count:6d} {latex_mb:8.1f} {bundle_mb:10.1f} {preset:15} {_spread(list(walls)):>22} "
                  f"{_spread(list(cpus)):>21} {' '.join(f'{x:.1f}' for x in loads):>14}")
        local, parallel = (statistics.median(r[0] for r in runs[p]) for p in PRESETS)
        print(f"{'':6} {'':8} {'':10} {'speed-up':15} {local / parallel:21.2f}x (wall, local / local-parallel)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shared", type=pathlib.Path, default=REPO.parent / "shared" / "corpora")
    parser.add_argument("--no-embed", action="store_true")
    parser.add_argument("--copies", default="", help="comma-separated copy counts of the 2101 bundle (see above)")
    parser.add_argument("--repeat", type=int, default=2, help="runs of each preset per size, interleaved")
    args = parser.parse_args()
    if args.copies:
        by_size([int(n) for n in args.copies.split(",")], args.repeat)
        return
    print(f"{'corpus':24} {'local s':>9} {'local-parallel s':>17} {'speed-up':>9}")
    for name, corpus_args in corpora(args.shared).items():
        local, _ = timed_build(corpus_args, "local", not args.no_embed)
        parallel, _ = timed_build(corpus_args, "local-parallel", not args.no_embed)
        print(f"{name:24} {local:9.1f} {parallel:17.1f} {local / parallel:8.2f}x")


if __name__ == "__main__":
    main()
