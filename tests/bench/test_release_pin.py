"""The default release (seed 0) is pinned: a generator, prompt or rule change that alters any
instance shows up here as a changed content hash, to be reviewed and re-pinned on purpose."""
import pytest

from pipelines import bench
from transforms.bench.release import DEFAULT_COUNTS, DEFAULT_TOTAL

pytestmark = pytest.mark.slow
IN_MEMORY = ["--runner=FnApiRunner", "--direct_running_mode=in_memory"]
# Re-pin only for an intended change: build with `thmforge build-bench --seed 0 --output DIR` and
# copy `content_hash` from DIR/manifest.json (say in the commit why every default instance changed).
DEFAULT_RELEASE_SEED_0 = "sha256:8ff8fd5317b4990374e3b5d4094f2d7dbc6bf9c34f0b54917193b7426d0035f1"


def test_default_release_content_hash_is_pinned(tmp_path):
    manifest = bench.run(str(tmp_path), seed=0, beam_args=IN_MEMORY)
    assert manifest["counts"]["total"] == DEFAULT_TOTAL
    assert manifest["counts"]["by_suite"] == DEFAULT_COUNTS
    assert manifest["content_hash"] == DEFAULT_RELEASE_SEED_0
