import hashlib
import json
import pathlib

import duckdb
import pytest

from pipelines import bench
from runners.cli import main as cli
from schemas import INSTANCES
from transforms.bench.release import release_cells

pytestmark = pytest.mark.slow
IN_MEMORY = ["--runner=FnApiRunner", "--direct_running_mode=in_memory"]
TWO_PROCESSES = ["--runner=FnApiRunner", "--direct_running_mode=multi_processing", "--direct_num_workers=2"]


def _files(root: pathlib.Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    root = tmp_path_factory.mktemp("release")
    manifest = bench.run(str(root), seed=3, per_cell=2, beam_args=IN_MEMORY)
    return root, manifest


def test_counts_per_cell_and_tables(release):
    root, manifest = release
    expected = {(c.suite, c.task_id, c.difficulty, c.variant): c.count for c in release_cells(per_cell=2)}
    got = {(c["suite"], c["task"], c["difficulty"], c["variant"]): c["count"] for c in manifest["cells"]}
    assert got == expected
    assert manifest["counts"]["main_tasks"] == 35 and manifest["counts"]["structures"] == 20
    con = duckdb.connect()
    con.execute(INSTANCES.view_sql(str(root)))
    rows = con.execute("SELECT suite, count(*), count(DISTINCT instance_id) FROM instances GROUP BY suite ORDER BY suite").fetchall()
    by_suite = manifest["counts"]["by_suite"]
    assert rows == [(s, by_suite[s], by_suite[s]) for s in sorted(by_suite)]
    assert con.execute("SELECT count(*) FROM instances WHERE suite = 'main' AND category = 'Linear'").fetchone()[0] == 5 * 3 * 2
    lines = (root / "instances.jsonl").read_bytes()
    assert manifest["content_hash"] == "sha256:" + hashlib.sha256(lines).hexdigest()
    assert json.loads((root / "manifest.json").read_text()) == manifest
    assert not (root / bench.STAGING).exists()


def test_hugging_face_dataset_and_card(release):
    import datasets

    root, manifest = release
    loaded = datasets.load_from_disk(str(root / "hf"))
    assert sorted(loaded) == sorted(manifest["suites"])
    assert {s: len(loaded[s]) for s in loaded} == manifest["counts"]["by_suite"]
    first = json.loads((root / "instances.jsonl").read_text().splitlines()[0])
    assert loaded["main"][0] == first
    card = (root / "hf" / "README.md").read_text()
    assert manifest["content_hash"] in card and "| main | array/access | easy | - | 2 |" in card
    assert "seed 3" in card and manifest["generator_version"] in card


def test_byte_identical_across_runner_modes(release, tmp_path):
    root, _ = release
    bench.run(str(tmp_path), seed=3, per_cell=2, beam_args=TWO_PROCESSES)
    assert _files(tmp_path) == _files(root)


def test_cli_builds_a_subset_and_rejects_bad_options(tmp_path, capsys):
    out = tmp_path / "rel"
    assert cli(["build-bench", "--output", str(out), "--suites", "code,natural", "--per-cell", "1", "--seed", "5"]) == 0
    assert "18 instances (code 9, natural 9)" in capsys.readouterr().out
    assert cli(["build-bench", "--output", str(out), "--suites", "main,nope"]) == 2
    assert "unknown suites" in capsys.readouterr().err
    assert cli(["build-bench", "--output", str(out), "--per-cell", "0"]) == 2
    assert json.loads((out / "manifest.json").read_text())["counts"]["total"] == 18  # the failed runs lost nothing
