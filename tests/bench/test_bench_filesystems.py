"""build-bench on a non-local Beam filesystem: an in-process object store registered for `mem://`
that, like GCS, has no directories. The release written there is the local release byte for byte,
and a failed run leaves the previous release untouched."""
import io
import pathlib

import pytest
from apache_beam.io.filesystem import FileMetadata, FileSystem

from pipelines import bench

pytestmark = pytest.mark.slow
IN_MEMORY = ["--runner=FnApiRunner", "--direct_running_mode=in_memory"]  # workers share this process
SUITES = ("code", "natural", "spatial")
ROOT = "mem://bucket/release"


class MemoryFileSystem(FileSystem):
    """Objects in a class-level dict: Beam makes a new instance for every call."""

    objects: dict[str, bytes] = {}

    @classmethod
    def scheme(cls):
        return "mem"

    def join(self, basepath, *paths):
        return "/".join([basepath.rstrip("/"), *(p.strip("/") for p in paths)])

    def split(self, path):
        head, _, tail = path.rpartition("/")
        return head, tail

    def mkdirs(self, path):
        pass

    def has_dirs(self):
        return False

    def _list(self, dir_or_prefix):
        for path in sorted(self.objects):
            if path.startswith(dir_or_prefix):
                yield self.metadata(path)

    def create(self, path, mime_type=None, compression_type=None):
        objects = self.objects

        class Upload(io.BytesIO):
            def close(self):
                if not self.closed:
                    objects[path] = self.getvalue()
                super().close()

        return Upload()

    def open(self, path, mime_type=None, compression_type=None):
        return io.BytesIO(self.objects[path])

    def copy(self, source_file_names, destination_file_names):
        for source, destination in zip(source_file_names, destination_file_names):
            self.objects[destination] = self.objects[source]

    def rename(self, source_file_names, destination_file_names):
        for source, destination in zip(source_file_names, destination_file_names):
            self.objects[destination] = self.objects.pop(source)

    def exists(self, path):
        return path in self.objects

    def size(self, path):
        return len(self.objects[path])

    def last_updated(self, path):
        return 0.0

    def metadata(self, path):
        return FileMetadata(path, self.size(path), 0.0)

    def delete(self, paths):
        for path in paths:
            del self.objects[path]


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
