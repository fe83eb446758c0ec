"""A real `build-corpus` killed during its commit: the next run, whichever command it is, first
finishes the decided commit from its plan; a kill while the staging directory is being removed is
finished by the rerun, which exits 0 with the uninterrupted run's bytes."""
import json
import os
import shutil
import signal
import subprocess
import sys

import pytest

from runners.cli import main
from tests.conftest import REPO
from tests.hostile import hostile_cases as hc
from tests.write.test_storage import table_bytes
from transforms.write import commit as staging
from transforms.write import files
from transforms.write import manifest as manifests

# Runs build-corpus with every file operation of the commit counted (from the start of
# `finish_commit`, after the plan is written): killed before operation number argv[1], or, with
# -1, never, writing the number of operations the commit took to argv[2].
KILLER = """
import json, os, signal, sys
sys.path[:0] = [{repo!r}]
from apache_beam.io.filesystems import FileSystems
from runners.cli import main
from transforms.write import manifest

step, record = int(sys.argv[1]), sys.argv[2]
used = [None]
for name in ("create", "rename", "delete"):
    original = getattr(FileSystems, name)
    def counted(*args, _original=original, **kwargs):
        if used[0] is not None:
            if used[0] == step:
                os.kill(os.getpid(), signal.SIGKILL)
            used[0] += 1
        return _original(*args, **kwargs)
    setattr(FileSystems, name, staticmethod(counted))
finish = manifest.finish_commit
def counted_commit(*args, **kwargs):
    used[0] = 0
    finish(*args, **kwargs)
    steps = used[0]
    used[0] = None
    with open(record, "w") as handle:
        json.dump(steps, handle)
manifest.finish_commit = counted_commit
sys.exit(main(sys.argv[3:]))
"""


def _bundle(path, stem: str, n: int) -> str:
    entries = [hc.Entry(f"2201/2201.{stem}{i:02d}.gz", hc.gz(hc.paper_tex(theorem=f"Paper {stem}{i} holds.").encode()))
               for i in range(n)]
    path.write_bytes(hc.tar_bytes(entries))
    return str(path)


def _args(inputs, out) -> list[str]:
    return ["build-corpus", "--input", *inputs, "--output", str(out), "--embed-model", "none", "--no-progress"]


def _killed(tmp_path, step: int, args: list[str]) -> tuple[int, int]:
    """(exit status, operations the commit took when it was not killed)."""
    script, record = tmp_path / "killer.py", tmp_path / "steps.json"
    script.write_text(KILLER.format(repo=str(REPO)))
    if record.exists():
        record.unlink()
    proc = subprocess.run([sys.executable, str(script), str(step), str(record), *args], cwd=REPO,
                          capture_output=True)
    assert proc.returncode in (0, -signal.SIGKILL), proc.stderr.decode()[-2000:]
    return proc.returncode, (json.loads(record.read_text()) if record.exists() else -1)


def _papers(out) -> list[str]:
    return sorted(row["paper_id"] for row in staging.read_columns(manifests.committed_files(str(out), "papers"),
                                                                   ["paper_id"]))


def _leftovers(out) -> set[str]:
    """Parquet files on disk that the committed manifest does not name."""
    on_disk = {files.relative(p, str(out)) for p in files.list_files(str(out), ".parquet")}
    return on_disk - set(table_bytes(str(out)))


@pytest.fixture(scope="module")
def bundles(tmp_path_factory):
    root = tmp_path_factory.mktemp("commit-kills")
    a = _bundle(root / "arXiv_src_2201_001.tar", "001", 2)
    b = _bundle(root / "arXiv_src_2201_002.tar", "002", 2)
    c = _bundle(root / "arXiv_src_2201_003.tar", "003", 1)
    base = root / "base"
    assert main(_args([a], base)) == 0
    clean = root / "clean"
    shutil.copytree(base, clean)
    assert main(_args([a, b], clean)) == 0
    return root, a, b, c, base, clean


@pytest.mark.slow
def test_a_different_command_first_finishes_the_commit_a_killed_run_decided(bundles, tmp_path):
    root, a, b, c, base, _ = bundles
    out = tmp_path / "out"
    shutil.copytree(base, out)
    status, _ = _killed(tmp_path, 1, _args([a, b], out))        # after the first move, before the switch
    assert status == -signal.SIGKILL
    assert os.path.exists(out / "_staging" / "_commit.json")
    assert _papers(out) == _papers(base)                          # readers still see the old generation
    assert main(_args([c], out)) == 0                             # another command (other inputs)
    expected = sorted({*_papers(base), "arxiv:2201.00200", "arxiv:2201.00201", "arxiv:2201.00300"})
    assert _papers(out) == expected                               # the killed run's commit was carried out
    assert _leftovers(out) == set() and not os.path.exists(out / "_staging")
    manifest = manifests.read_manifest(str(out))
    assert set(manifest["accounting"]) == {"arXiv_src_2201_001", "arXiv_src_2201_002", "arXiv_src_2201_003"}
    assert manifest["resume"]["inputs_processed"] == 1


@pytest.mark.slow
def test_a_kill_while_the_staging_is_removed_is_finished_by_the_rerun(bundles, tmp_path):
    root, a, b, _, base, clean = bundles
    out = tmp_path / "count"
    shutil.copytree(base, out)
    status, steps = _killed(tmp_path, -1, _args([a, b], out))
    assert status == 0 and table_bytes(str(out)) == table_bytes(str(clean))
    for step in (steps - 3, steps - 2):    # before the staging's files go; before the plan and fingerprint go
        out = tmp_path / f"killed-{step}"
        shutil.copytree(base, out)
        status, _ = _killed(tmp_path, step, _args([a, b], out))
        assert status == -signal.SIGKILL
        assert manifests.read_manifest(str(out))["files"] == manifests.read_manifest(str(clean))["files"]
        assert os.path.exists(out / "_staging" / "_commit.json")   # the kill landed in the cleanup
        assert main(_args([a, b], out)) == 0
        assert table_bytes(str(out)) == table_bytes(str(clean))
        assert _leftovers(out) == set() and not os.path.exists(out / "_staging")
        resume = manifests.read_manifest(str(out))["resume"]
        assert resume["commit_finished_from_plan"] and resume["inputs_processed"] == 0   # nothing redone
