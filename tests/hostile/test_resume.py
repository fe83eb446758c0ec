"""Idempotence and resume: reruns replace, incremental runs only add, a killed run is redone cleanly.

Tables are compared row by row through DuckDB and files by content hash, so "the same result"
means the same bytes, not just the same counts.
"""
import glob
import hashlib
import os
import shutil
import signal
import subprocess
import sys
import time

import duckdb
import pytest

import hostile_cases as hc
from runners.cli import main
from schemas import FAILURES, PAPERS, THEOREMS

pytestmark = pytest.mark.slow
THMFORGE = os.path.join(os.path.dirname(sys.executable), "thmforge")
MONTHS = ("2205", "2206")


def month_bundle(yymm: str) -> bytes:
    """A month of papers: ok ones, a failing one, a PDF-only one, and two slow single-line papers."""
    members = {f"{yymm}/{yymm}.00001.gz": hc.gz(hc.GOOD),
               f"{yymm}/{yymm}.00002.gz": hc.gz(hc.paper_tex(theorem=f"Month {yymm} has a result.").encode()),
               f"{yymm}/{yymm}.00003.gz": b"",
               f"{yymm}/{yymm}.00004.pdf": b"%PDF-1.4\n%%EOF\n"}
    for n in (5, 6):
        members[f"{yymm}/{yymm}.{n:05d}.gz"] = hc.gz(hc.single_line_tex((2 << 20) + n))
    return hc.bundle_bytes(members)


def inputs(root, months) -> list[str]:
    """The months' bundles, always at the same paths (the bundle path is a column of every table)."""
    folder = root / "in"
    folder.mkdir(exist_ok=True)
    paths = []
    for yymm in months:
        path = folder / f"arXiv_src_{yymm}_001.tar"
        if not path.exists():
            path.write_bytes(month_bundle(yymm))
        paths.append(str(path))
    return paths


def build(bundles: list[str], out: str, *beam_args: str) -> None:
    assert main(["build-corpus", "--input", *bundles, "--output", out, "--embed-model", "none", "--no-progress",
                 *beam_args]) == 0


def tables(out: str) -> dict[str, list[tuple]]:
    con = duckdb.connect()
    got = {}
    for table in (PAPERS, THEOREMS, FAILURES):
        con.execute(table.view_sql(out))
        got[table.name] = con.execute(f"SELECT * FROM {table.name} ORDER BY ALL").fetchall()
    return got


def table_files(out: str) -> dict[str, tuple[str, int, int]]:
    """Relative path -> (content hash, inode, mtime) of every committed Parquet file."""
    found = {}
    for path in sorted(glob.glob(os.path.join(out, "*", "**", "*.parquet"), recursive=True)):
        stat = os.stat(path)
        with open(path, "rb") as handle:
            found[os.path.relpath(path, out)] = (hashlib.sha256(handle.read()).hexdigest(), stat.st_ino, stat.st_mtime_ns)
    return found


def hashes(files: dict) -> dict[str, str]:
    return {path: info[0] for path, info in files.items()}


@pytest.fixture(scope="module")
def clean(tmp_path_factory):
    """Uninterrupted runs, once: month A alone and both months, each into a fresh output."""
    root = tmp_path_factory.mktemp("resume")
    runs = {}
    for months in (MONTHS[:1], MONTHS):
        out = str(root / ("clean-" + "-".join(months)))
        build(inputs(root, months), out)
        runs[months] = (out, tables(out), table_files(out))
    return root, runs


def test_clean_run_has_one_row_per_paper_and_no_duplicates(clean):
    _, runs = clean
    _, got, _ = runs[MONTHS]
    assert len(got["papers"]) == 12
    assert len({r[0] for r in got["papers"]}) == 12
    con = duckdb.connect()
    con.execute(THEOREMS.view_sql(runs[MONTHS][0]))
    assert con.execute("SELECT count(*) - count(DISTINCT theorem_id) FROM theorems").fetchone() == (0,)


def test_rerun_into_the_same_output_gives_identical_tables_and_bytes(clean):
    root, runs = clean
    out, first_tables, first_files = runs[MONTHS]
    rerun = str(root / "rerun")
    shutil.copytree(out, rerun)
    build(inputs(root, MONTHS), rerun)
    assert tables(rerun) == first_tables
    assert hashes(table_files(rerun)) == hashes(first_files)


def test_incremental_run_adds_partitions_and_leaves_old_files_alone(clean):
    root, runs = clean
    out = str(root / "incremental")
    build(inputs(root, MONTHS[:1]), out)
    before = table_files(out)
    time.sleep(0.01)
    build(inputs(root, MONTHS[1:]), out)
    after = table_files(out)
    assert {path: after[path] for path in before} == before            # same bytes, inode and mtime
    added = sorted(set(after) - set(before))
    assert added and all(f"arXiv_src_{MONTHS[1]}_001" in path for path in added)
    assert tables(out) == runs[MONTHS][1]
    assert hashes(after) == hashes(runs[MONTHS][2])


def test_two_worker_processes_write_the_same_bytes_as_one_process(clean):
    root, runs = clean
    out = str(root / "parallel")
    build(inputs(root, MONTHS), out, "--preset", "local-parallel", "--direct_num_workers=2")
    assert tables(out) == runs[MONTHS][1]
    assert hashes(table_files(out)) == hashes(runs[MONTHS][2])


def worker_processes(pid: int) -> list[int]:
    """Beam SDK worker processes (python, not their shell wrappers) below `pid`."""
    found, frontier = [], [pid]
    while frontier:
        parent = frontier.pop()
        for tasks in glob.glob(f"/proc/{parent}/task/*/children"):
            try:
                children = [int(c) for c in open(tasks).read().split()]
            except OSError:
                continue
            frontier.extend(children)
            for child in children:
                try:
                    cmdline = open(f"/proc/{child}/cmdline", "rb").read().split(b"\0")
                except OSError:
                    continue
                if b"sdk_worker_main" in b" ".join(cmdline) and not cmdline[0].endswith(b"sh"):
                    found.append(child)
    return found


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="finds worker processes through /proc")
def test_killed_worker_leaves_old_output_untouched_and_rerun_equals_clean_run(clean):
    root, runs = clean
    out = str(root / "killed")
    build(inputs(root, MONTHS[:1]), out)
    committed = table_files(out)
    proc = subprocess.Popen([THMFORGE, "build-corpus", "--input", *inputs(root, MONTHS), "--output", out,
                             "--embed-model", "none", "--no-progress", "--preset", "local-parallel",
                             "--direct_num_workers=2"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 240
        while not glob.glob(os.path.join(out, "_staging", "_inputs", "*.json")) and proc.poll() is None:
            assert time.monotonic() < deadline, "the run never started staging"
            time.sleep(0.02)
        workers = worker_processes(proc.pid)
        assert workers, "no SDK worker process found"
        os.kill(workers[0], signal.SIGKILL)
        try:             # the runner usually fails at once; when the worker died idle it may wait instead
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            pass
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode != 0, "the run survived the loss of a worker"
    assert table_files(out) == committed                                # nothing half-written became visible
    build(inputs(root, MONTHS), out)
    assert tables(out) == runs[MONTHS][1]
    assert hashes(table_files(out)) == hashes(runs[MONTHS][2])
    assert not os.path.exists(os.path.join(out, "_staging"))
