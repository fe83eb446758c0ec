"""The storage protocol end to end: outputs checked before work, a commit killed at every step is
never seen half-done, a killed build-corpus resumes with only its unfinished inputs, and a corpus
written to a non-local Beam filesystem equals the local one byte for byte."""
import os
import shutil
import signal
import subprocess
import sys
import time

import pyarrow.parquet as pq
import pytest

from retrieval.catalog import open_catalog
from runners.cli import main
from schemas import EDGES, FAILURES, PAPERS, THEOREMS
from tests.conftest import REPO, SAMPLES
from tests.memory_filesystem import MemoryFileSystem
from tests.write import commit_helpers
from transforms.write import files
from transforms.write import manifest as manifests

BUNDLES = sorted(str(p) for p in (SAMPLES / "arxiv").glob("arXiv_src_*.tar"))
METADATA = str(SAMPLES / "arxiv" / "arxiv-metadata-oai-snapshot.json")
G1, G2 = "/in/arXiv_src_2101_001.tar", "/in/arXiv_src_2102_001.tar"


def build_args(output: str, *extra: str) -> list[str]:
    return ["build-corpus", "--input", *BUNDLES, "--metadata", METADATA, "--output", output,
            "--embed-model", "none", "--no-progress", *extra]


def table_bytes(output: str) -> dict[str, bytes]:
    """The committed generation's files, by path relative to the output, read through the storage layer."""
    manifest = manifests.read_manifest(output)
    return {files.relative(path, output): files.read_bytes(path)
            for name in (PAPERS.name, THEOREMS.name, FAILURES.name, EDGES.name)
            for path in manifests.committed_files(output, name, manifest)}


# ------------------------------------------------------------------------------ output checks

@pytest.mark.parametrize("where", ["under-a-file", "proc"])
def test_an_unwritable_output_fails_in_one_line_before_any_work(tmp_path, capsys, where):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    output = str(blocker / "out") if where == "under-a-file" else "/proc/thmforge-out"
    assert main(build_args(output)) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "cannot write there" in err and "Traceback" not in err
    assert not os.path.exists(os.path.join(output, "_staging"))


# ------------------------------------------------------------------------- atomic commit

def _paper(pid, bundle, n):
    return {"paper_id": pid, "source": "arxiv", "status": "ok", "n_statements": n, "bundle": bundle,
            "has_metadata": True}


def _theorem(pid, ordinal, bundle, year):
    return {"theorem_id": f"{pid}#{ordinal}", "paper_id": pid, "source": "arxiv", "year": year, "ordinal": ordinal,
            "kind": "lemma", "statement_latex": f"{pid} {ordinal}", "bundle": bundle}


def _generation(version: int) -> dict:
    """Both inputs' rows; version 2 has more papers and moves a paper to another year."""
    papers, theorems = [], []
    for bundle in (G1, G2):
        for n in range(2 + version):
            pid = f"arxiv:{os.path.basename(bundle)[10:14]}.{n}"
            papers.append(_paper(pid, bundle, 2))
            theorems += [_theorem(pid, 0, bundle, 2020 + version), _theorem(pid, 1, bundle, 2021)]
    return {PAPERS: papers, THEOREMS: theorems}


def _visible(output: str):
    """What a thmforge reader sees: sorted papers and theorems through the catalog's views."""
    catalog = open_catalog(output)
    try:
        return (catalog.con.execute("SELECT paper_id FROM papers ORDER BY ALL").fetchall(),
                catalog.con.execute("SELECT theorem_id, year FROM theorems ORDER BY ALL").fetchall())
    finally:
        catalog.con.close()


KILLER = """
import os, signal, sys
sys.path[:0] = [{repo!r}]
from apache_beam.io.filesystems import FileSystems
from tests.write import commit_helpers

budget = [int(sys.argv[2])]
for name in ("create", "rename", "delete"):
    original = getattr(FileSystems, name)
    def counted(*args, _original=original, **kwargs):
        budget[0] -= 1
        if budget[0] < 0:
            os.kill(os.getpid(), signal.SIGKILL)
        return _original(*args, **kwargs)
    setattr(FileSystems, name, staticmethod(counted))
commit_helpers.commit(sys.argv[1], ["arXiv_src_2101_001", "arXiv_src_2102_001"])
"""


@pytest.mark.slow
def test_a_commit_killed_at_any_step_shows_readers_the_old_or_the_new_generation(tmp_path):
    template = str(tmp_path / "template")
    commit_helpers.stage(template, _generation(1))
    commit_helpers.commit(template, ["arXiv_src_2101_001", "arXiv_src_2102_001"])
    old = _visible(template)
    commit_helpers.stage(template, _generation(2))
    script = tmp_path / "killer.py"
    script.write_text(KILLER.format(repo=str(REPO)))
    new_output = str(tmp_path / "uninterrupted")
    shutil.copytree(template, new_output)
    commit_helpers.commit(new_output, ["arXiv_src_2101_001", "arXiv_src_2102_001"])
    new = _visible(new_output)
    assert new != old and len(new[0]) == 8 and len(old[0]) == 6
    seen, step = [], 0
    while True:                  # kill before the first, second, ... file operation of the commit
        output = str(tmp_path / f"killed-{step}")
        shutil.copytree(template, output)
        proc = subprocess.run([sys.executable, str(script), output, str(step)], capture_output=True)
        visible = _visible(output)
        assert visible in (old, new), f"a reader saw a mixed corpus after a kill at step {step}"
        seen.append(visible == new)
        resumed = manifests.finish_interrupted_commit(output)      # what the next run does first
        after = _visible(output)
        assert after == (new if resumed is not None or visible == new else old)
        if after == new:                 # the same bytes as an uninterrupted commit, and no leftovers
            assert table_bytes(output) == table_bytes(new_output)
            on_disk = {files.relative(p, output) for p in files.list_files(output, ".parquet")}
            assert on_disk == set(table_bytes(output))
        if proc.returncode == 0:
            break
        assert proc.returncode == -signal.SIGKILL, proc.stderr.decode()
        step += 1
    moves = 6                    # 2 papers files, 4 theorems files (2 inputs x 2 years)
    assert step > moves and False in seen and True in seen      # kills before, during and after the moves
    assert sorted(os.listdir(new_output)) == ["manifest.json", "papers", "theorems"]   # no staging, no temporaries


# ------------------------------------------------------------------------------------ resume

@pytest.fixture(scope="module")
def clean_run(tmp_path_factory):
    output = str(tmp_path_factory.mktemp("clean") / "out")
    assert main(build_args(output)) == 0
    return output


@pytest.mark.slow
def test_a_killed_build_resumes_with_only_its_unfinished_inputs_and_ends_byte_identical(clean_run, tmp_path):
    output = str(tmp_path / "killed")
    done = os.path.join(output, "_staging", "_done")
    proc = subprocess.Popen([sys.executable, "-m", "runners.cli", *build_args(output, "--inputs-per-wave", "1")],
                            cwd=REPO, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 240
        while not (os.path.isdir(done) and os.listdir(done)) and proc.poll() is None:
            assert time.monotonic() < deadline, "no input finished"
            time.sleep(0.02)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    finished = len(os.listdir(done))
    assert 1 <= finished < len(BUNDLES), "the kill came after every input had finished"
    assert not os.path.exists(os.path.join(output, "manifest.json"))          # nothing was committed
    assert main(build_args(output, "--inputs-per-wave", "1")) == 0
    resume = manifests.read_manifest(output)["resume"]
    assert resume["inputs_finished_earlier"] == finished
    assert resume["inputs_processed"] == len(BUNDLES) - finished            # only the unfinished inputs redone
    assert table_bytes(output) == table_bytes(clean_run)                   # waves of 1 or of all: same bytes
    assert not os.path.exists(os.path.join(output, "_staging"))
    before = {path: os.stat(os.path.join(output, path)).st_ino for path in table_bytes(output)}
    assert main(build_args(output)) == 0                                    # a rerun of a finished run
    assert table_bytes(output) == table_bytes(clean_run)
    assert {path: os.stat(os.path.join(output, path)).st_ino for path in table_bytes(output)} == before


# ------------------------------------------------------------------------- other filesystems

@pytest.fixture
def memory():
    MemoryFileSystem.objects.clear()
    yield MemoryFileSystem.objects
    MemoryFileSystem.objects.clear()


@pytest.mark.slow
def test_a_corpus_on_an_object_store_equals_the_local_corpus(clean_run, memory):
    output = "mem://bucket/corpus"
    assert main(build_args(output, "--direct_running_mode=in_memory")) == 0
    assert table_bytes(output) == table_bytes(clean_run)
    written = sorted(files.relative(path, output) for path in memory)
    assert written == sorted([*table_bytes(output), "manifest.json"])       # no staging, no probe left
    manifest = manifests.read_manifest(output)
    assert manifest["counts"] == manifests.read_manifest(clean_run)["counts"]



def test_a_corpus_written_before_a_column_existed_reads_that_column_as_null(tmp_path):
    output = str(tmp_path / "older")
    commit_helpers.stage(output, _generation(1))
    commit_helpers.commit(output, ["arXiv_src_2101_001", "arXiv_src_2102_001"])
    theorem_files = files.list_files(files.join(output, THEOREMS.name), ".parquet")
    for path in theorem_files:                      # as an older thmforge wrote them: no proof_text column
        pq.write_table(pq.read_table(path).drop_columns(["proof_text"]), path)
    catalog = open_catalog(output)
    try:
        assert catalog.con.execute("SELECT count(*), count(proof_text) FROM theorems").fetchone() == (12, 0)
        assert catalog.con.execute("SELECT count(*) FROM papers").fetchone() == (6,)
    finally:
        catalog.con.close()
