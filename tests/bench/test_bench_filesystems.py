"""build-bench on a non-local Beam filesystem: an in-process object store registered for `mem://`
that, like GCS, has no directories. The release written there is the local release byte for byte,
and a failed run leaves the previous release untouched."""
import pathlib

import pytest

from pipelines import bench
from tests.memory_filesystem import MemoryFileSystem

pytestmark = pytest.mark.slow
IN_MEMORY = ["--runner=FnApiRunner", "--direct_running_mode=in_memory"]  # workers share this process
SUITES = ("code", "natural", "spatial")
ROOT = "mem://bucket/release"


def _local_files(root: pathlib.Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def _memory_files(root: str) -> dict[str, bytes]:
    return {path[len(root) + 1:]: data for path, data in MemoryFileSystem.objects.items()
            if path.startswith(root + "/")}


@pytest.fixture
def memory():
    MemoryFileSystem.objects.clear()
    yield MemoryFileSystem.objects
    MemoryFileSystem.objects.clear()


def test_release_on_an_object_store_equals_the_local_release(memory, tmp_path):
    stale = f"{ROOT}/hf/old-split/data-00000-of-00001.arrow"
    memory[stale] = b"from an older release"
    memory[f"{ROOT}/{bench.STAGING}/instances/suite=code/category=Linear/part-00009.parquet"] = b"crashed run"
    local = bench.run(str(tmp_path), seed=4, per_cell=1, suites=SUITES, beam_args=IN_MEMORY)
    remote = bench.run(ROOT, seed=4, per_cell=1, suites=SUITES, beam_args=IN_MEMORY)
    assert remote == local
    expected = _local_files(tmp_path)
    assert {"instances.jsonl", "manifest.json", "hf/README.md", "hf/dataset_dict.json"} <= set(expected)
    assert sum(name.endswith(".parquet") for name in expected) > 3
    assert _memory_files(ROOT) == expected  # no staging left, stale files replaced


def test_a_failed_run_leaves_the_previous_release_untouched(memory, monkeypatch):
    bench.run(ROOT, seed=4, per_cell=1, suites=("code",), beam_args=IN_MEMORY)
    previous = _memory_files(ROOT)

    def broken_card(manifest):
        raise RuntimeError("disk full")

    monkeypatch.setattr(bench, "dataset_card", broken_card)
    with pytest.raises(RuntimeError, match="disk full"):
        bench.run(ROOT, seed=5, per_cell=1, suites=("code", "natural"), beam_args=IN_MEMORY)
    released = {name: data for name, data in _memory_files(ROOT).items() if not name.startswith(bench.STAGING)}
    assert released == previous
