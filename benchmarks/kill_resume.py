"""`kill -9` of build-corpus at random points, the commit included, with a reader polling throughout.

Each round starts from the same committed "old" corpus (some of the bundles), runs build-corpus
over all the bundles with one input per wave, and kills its process group with SIGKILL: at a random
time, as soon as the commit plan appears, or once the commit has started moving files. A reader
thread opens the output through `retrieval.catalog` (what `sql`, `search` and `serve` use) as fast
as it can and compares what it sees with the old and the new corpus. Then the same command is rerun
to completion. Prints the kills, where they landed, how often the reader saw a mixed corpus (must
be 0), the inputs each rerun redid, and whether every rerun ended byte-identical to a clean run.

    .venv/bin/python benchmarks/kill_resume.py [--kills 10] [--seed 0]
"""
from __future__ import annotations

import argparse
import os
import pathlib
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from retrieval.catalog import open_catalog  # noqa: E402
from transforms.write import files  # noqa: E402
from transforms.write import manifest as manifests  # noqa: E402

SAMPLES = REPO / "samples" / "arxiv"
BUNDLES = sorted(str(p) for p in SAMPLES.glob("arXiv_src_*.tar"))
METADATA = str(SAMPLES / "arxiv-metadata-oai-snapshot.json")
TABLES = ("papers", "theorems", "failures")


def command(output: str, bundles: list[str]) -> list[str]:
    return [sys.executable, "-m", "runners.cli", "build-corpus", "--input", *bundles, "--metadata", METADATA,
            "--output", output, "--embed-model", "none", "--no-progress", "--inputs-per-wave", "1"]


def build(output: str, bundles: list[str]) -> None:
    subprocess.run(command(output, bundles), cwd=REPO, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)


def visible(output: str):
    """What a thmforge reader sees: every paper and theorem id, sorted."""
    catalog = open_catalog(output)
    try:
        return (tuple(catalog.con.execute("SELECT paper_id, status FROM papers ORDER BY ALL").fetchall()),
                tuple(catalog.con.execute("SELECT theorem_id FROM theorems ORDER BY ALL").fetchall()))
    finally:
        catalog.con.close()


def committed_bytes(output: str) -> dict[str, bytes]:
    manifest = manifests.read_manifest(output)
    return {files.relative(path, output): files.read_bytes(path)
            for table in TABLES for path in manifests.committed_files(output, table, manifest)}


class Reader(threading.Thread):
    """Polls the output until stopped; counts reads, mixed corpora and reads that raced a removal."""

    def __init__(self, output: str, states: tuple):
        super().__init__(daemon=True)
        self.output, self.states = output, states
        self.reads = self.mixed = self.raced = 0
        self.stop = threading.Event()

    def run(self):
        while not self.stop.is_set():
            try:
                seen = visible(self.output)
            except Exception:   # UsageError, duckdb.IOException: the old generation's files removed mid-read
                self.raced += 1
                continue
            self.reads += 1
            if seen not in self.states:
                self.mixed += 1
            self.stop.wait(0.005)       # leave the run some CPU on a small machine


def kill_point(proc: subprocess.Popen, output: str, mode: str, delay: float) -> str:
    """Wait for the chosen moment, SIGKILL the run's process group; says where the kill landed."""
    plan = os.path.join(output, "_staging", "_commit.json")
    started = time.monotonic()
    while proc.poll() is None:
        elapsed = time.monotonic() - started
        if mode == "time" and elapsed >= delay:
            break
        if mode != "time" and os.path.exists(plan):
            if mode == "commit-plan":
                break
            moved = [p for p in files.list_files(output, ".parquet") if "_staging" not in p]
            if set(files.relative(p, output) for p in moved) != set(committed_bytes_names(output)):
                break
        time.sleep(0.001)
    if proc.poll() is not None:
        return "finished before the kill"
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    if os.path.exists(plan):
        return "during the commit"
    done = os.path.join(output, "_staging", "_done")
    return f"pipeline ({len(os.listdir(done)) if os.path.isdir(done) else 0} inputs finished)"


def committed_bytes_names(output: str) -> list[str]:
    try:
        manifest = manifests.read_manifest(output)
    except ValueError:
        return []
    return [f for table in TABLES for f in manifests.committed_relative(output, manifest)[table]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory(prefix="kill-resume-") as work:
        clean, old = os.path.join(work, "clean"), os.path.join(work, "old")
        started = time.monotonic()
        build(clean, BUNDLES)
        full_run_s = time.monotonic() - started
        build(old, BUNDLES[:1])
        states = (visible(old), visible(clean))
        reference = committed_bytes(clean)
        print(f"clean run {full_run_s:.1f} s; killing {args.kills} times", flush=True)
        mixed = raced = reads = 0
        redone, identical, landed = [], [], []
        for round_number in range(args.kills):
            output = os.path.join(work, f"round-{round_number}")
            shutil.copytree(old, output)
            reader = Reader(output, states)
            reader.start()
            mode = ("time", "commit-plan", "commit-move")[round_number % 3]
            proc = subprocess.Popen(command(output, BUNDLES), cwd=REPO, start_new_session=True,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            landed.append(kill_point(proc, output, mode, rng.uniform(0.5, 0.9 * full_run_s)))
            build(output, BUNDLES)
            reader.stop.set()
            reader.join()
            resume = manifests.read_manifest(output)["resume"]
            redone.append(resume["inputs_processed"])
            on_disk = {files.relative(p, output) for p in files.list_files(output, ".parquet")}
            identical.append(committed_bytes(output) == reference and on_disk == set(reference)
                             and not os.path.exists(os.path.join(output, "_staging")))
            mixed, raced, reads = mixed + reader.mixed, raced + reader.raced, reads + reader.reads
            shutil.rmtree(output)
            print(f"  round {round_number}: killed {landed[-1]}; rerun redid {redone[-1]} input(s); "
                  f"byte-identical: {identical[-1]}; reader so far: {reads} reads, {mixed} mixed", flush=True)
        print(f"inputs: {len(BUNDLES)} bundles, one per wave; uninterrupted run {full_run_s:.1f} s")
        print(f"kills: {sum(not p.startswith('finished') for p in landed)} of {args.kills} attempts "
              f"({sum(p == 'during the commit' for p in landed)} during the commit)")
        print(f"reader: {reads} reads, {mixed} saw a mixed corpus, {raced} raced the removal of old files")
        print(f"inputs redone per rerun: {redone}")
        print(f"every rerun byte-identical to a clean run: {all(identical)}")


if __name__ == "__main__":
    main()
