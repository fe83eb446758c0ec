"""`kill -9` of build-corpus at random points spread over the run, the commit included, with a reader
polling the output throughout.

Each round starts from the same committed "old" corpus (one of the bundles), runs build-corpus over
all the bundles with one input per wave, and kills its process group with SIGKILL. Where: an
uninterrupted profile round first measures how long the pipeline takes (until the last input's
completion marker); most kills fall at stratified random times inside that span, and the rest
(`--commit-kills`) at stratified random points of the commit, from "plan written" through each
staged file moved to "manifest switched, old files being removed". The commit takes milliseconds,
so once the pipeline is done the run is advanced in slices (SIGCONT, a yield of this process,
SIGSTOP) and its files are inspected between slices: the kill lands exactly where the disk shows
the drawn point. A reader thread opens the output through `retrieval.catalog` (what `sql`,
`search` and `serve` use) as fast as it can and compares what it sees with the old and the new
corpus. Then the same command is rerun to completion. Prints where each kill landed, how often the
reader saw a mixed corpus (must be 0), the inputs each rerun redid, and whether every rerun ended
byte-identical to a clean run.

    .venv/bin/python benchmarks/kill_resume.py [--kills 10] [--commit-kills 3] [--seed 0]
"""
from __future__ import annotations

import argparse
import json
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
from transforms.write.commit import TABLE_NAMES  # noqa: E402
from transforms.write import manifest as manifests  # noqa: E402

SAMPLES = REPO / "samples" / "arxiv"
BUNDLES = sorted(str(p) for p in SAMPLES.glob("arXiv_src_*.tar"))
METADATA = str(SAMPLES / "arxiv-metadata-oai-snapshot.json")
TABLES = TABLE_NAMES          # papers, theorems, failures, edges


def command(output: str, bundles: list[str]) -> list[str]:
    return [sys.executable, "-m", "runners.cli", "build-corpus", "--input", *bundles, "--metadata", METADATA,
            "--output", output, "--embed-model", "none", "--no-progress", "--inputs-per-wave", "1"]


def build(output: str, bundles: list[str]) -> None:
    done = subprocess.run(command(output, bundles), cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          text=True)
    if done.returncode != 0:
        raise SystemExit(f"build-corpus into {output} exited {done.returncode}:\n{done.stderr[-3000:]}")


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


class Run:
    """One build-corpus process (its own process group) and what its output directory shows."""

    def __init__(self, output: str):
        self.output = output
        self.staging = os.path.join(output, "_staging")
        self.manifest = os.path.join(output, "manifest.json")
        self.manifest_before = os.stat(self.manifest).st_ino if os.path.exists(self.manifest) else None
        self.started = time.monotonic()
        self.proc = subprocess.Popen(command(output, BUNDLES), cwd=REPO, start_new_session=True,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.moves: list = []

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def alive(self) -> bool:
        return self.proc.poll() is None

    def inputs_finished(self) -> int:
        done = os.path.join(self.staging, "_done")
        try:
            return len(os.listdir(done))
        except FileNotFoundError:
            return 0

    def commit_stage(self) -> int:
        """-1 before the plan; 0 plan written; k: k staged files moved; len(moves) + 1: manifest switched."""
        plan = os.path.join(self.staging, "_commit.json")
        switched = os.path.exists(self.manifest) and os.stat(self.manifest).st_ino != self.manifest_before
        if not self.moves and os.path.exists(plan):
            self.moves = json.loads(open(plan).read())["moves"]
        if switched:
            return len(self.moves) + 1
        if not self.moves:
            return -1
        return sum(not os.path.exists(os.path.join(self.staging, relative)) for relative, _ in self.moves)

    def describe(self) -> str:
        stage = self.commit_stage()
        if stage > len(self.moves):
            return "commit: manifest switched, old files being removed"
        if stage >= 0:
            return f"commit: plan written, {stage} of {len(self.moves)} staged files moved"
        return f"pipeline at {self.elapsed():.1f} s ({self.inputs_finished()} of {len(BUNDLES)} inputs finished)"

    def signal(self, number: int) -> None:
        os.killpg(self.proc.pid, number)

    def kill(self) -> str:
        """SIGKILL the process group; where it landed (the files are inspected while it is stopped)."""
        if not self.alive():
            return "finished before the kill"
        self.signal(signal.SIGSTOP)
        where = self.describe()
        self.signal(signal.SIGKILL)
        self.proc.wait()
        return where


def kill_in_pipeline(run: Run, at: float) -> str:
    """Kill at `at` seconds into the run (earlier if the pipeline is already done)."""
    while run.alive() and run.elapsed() < at and run.inputs_finished() < len(BUNDLES):
        time.sleep(0.002)
    return run.kill()


def kill_in_commit(run: Run, target: float, slice_s: float = 0.0) -> str:
    """Kill at commit stage `target` (a fraction of plan written .. manifest switched): the run goes
    freely until the pipeline is done, then in slices, inspected between them."""
    while run.alive() and run.inputs_finished() < len(BUNDLES):
        time.sleep(0.002)
    run.signal(signal.SIGSTOP)
    while run.alive():
        stage = run.commit_stage()
        if stage >= 0 and stage >= round(target * (len(run.moves) + 1)):
            return run.kill()
        run.signal(signal.SIGCONT)
        time.sleep(slice_s)
        run.signal(signal.SIGSTOP)
    return run.kill()


def profile(output: str) -> tuple[float, float]:
    """An uninterrupted round: seconds until the last input's marker, and in all."""
    run = Run(output)
    pipeline_s = None
    while run.alive():
        if pipeline_s is None and run.inputs_finished() == len(BUNDLES):
            pipeline_s = run.elapsed()
        time.sleep(0.002)
    if run.proc.returncode != 0:
        raise SystemExit(f"the profile run failed with exit code {run.proc.returncode}")
    return pipeline_s or run.elapsed(), run.elapsed()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=10)
    parser.add_argument("--commit-kills", type=int, default=3, help="how many of the kills fall in the commit")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    in_pipeline = args.kills - args.commit_kills
    points = ([("pipeline", (i + rng.random()) / in_pipeline) for i in range(in_pipeline)]
              + [("commit", (i + rng.random()) / args.commit_kills) for i in range(args.commit_kills)])
    with tempfile.TemporaryDirectory(prefix="kill-resume-") as work:
        clean, old = os.path.join(work, "clean"), os.path.join(work, "old")
        build(clean, BUNDLES)
        build(old, BUNDLES[:1])
        states = (visible(old), visible(clean))
        reference = committed_bytes(clean)
        output = os.path.join(work, "profile")
        shutil.copytree(old, output)
        reader = Reader(output, states)
        reader.start()
        pipeline_s, full_run_s = profile(output)
        reader.stop.set()
        reader.join()
        shutil.rmtree(output)
        print(f"profile round (old corpus + all bundles, reader on): pipeline {pipeline_s:.1f} s, "
              f"whole run {full_run_s:.1f} s; {args.kills} kills", flush=True)
        mixed, raced, reads = reader.mixed, reader.raced, reader.reads
        redone, identical, landed = [], [], []
        for round_number, (where, fraction) in enumerate(points):
            output = os.path.join(work, f"round-{round_number}")
            shutil.copytree(old, output)
            reader = Reader(output, states)
            reader.start()
            run = Run(output)
            if where == "pipeline":
                landed.append(kill_in_pipeline(run, fraction * pipeline_s))
            else:
                landed.append(kill_in_commit(run, fraction))
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
            print(f"  round {round_number} ({where} point {fraction:.2f}): killed {landed[-1]}; rerun redid "
                  f"{redone[-1]} input(s); byte-identical: {identical[-1]}; reader so far: {reads} reads, "
                  f"{mixed} mixed", flush=True)
        print(f"inputs: {len(BUNDLES)} bundles, one per wave")
        print(f"kills: {sum(not p.startswith('finished') for p in landed)} of {args.kills} landed "
              f"({sum(p.startswith('commit') for p in landed)} during the commit)")
        print(f"reader: {reads} reads, {mixed} saw a mixed corpus, {raced} raced the removal of old files")
        print(f"inputs redone per rerun: {redone}")
        print(f"every rerun byte-identical to a clean run: {all(identical)}")


if __name__ == "__main__":
    main()
