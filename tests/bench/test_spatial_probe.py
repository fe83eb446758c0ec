"""Spatial probe: cell counts, point sets per variant, determinism, and answers on every variant."""
import math
import random

import pytest

from transforms.bench.probes import spatial
from transforms.bench.registry import all_tasks, get_task, rng_for

PROBE_IDS = {"kd_tree/spatial_construct", "kd_heap/spatial_compound", "geometric_graph/spatial_construct"}


def points_of(spec):
    if "points" in spec:
        return spec["points"]
    return [op[1] for op in spec["operations"] if op[0] == "insert"]


def test_default_release_has_450_cells_split_evenly_over_difficulties():
    cells = spatial.spatial_cells()
    assert sum(count for _, _, count in cells) == 450
    assert {task for task, _, _ in cells} == PROBE_IDS
    assert len(cells) == 3 * 7 and all(count % 3 == 0 for _, _, count in cells)
    assert {variant for _, variant, _ in cells} == {"1d", "2d", "3d", "5d", "moons", "circles", "blobs"}


def test_probe_tasks_are_registered_in_the_spatial_suite():
    tasks = {t.id: t for t in all_tasks("spatial")}
    assert PROBE_IDS <= set(tasks)
    for task_id in PROBE_IDS:
        assert tasks[task_id].variants == spatial.VARIANTS and tasks[task_id].category == "Spatial"


@pytest.mark.parametrize("variant", spatial.VARIANTS)
def test_point_sets_fit_their_variant(variant):
    dimension = spatial.DIMENSIONS.get(variant, 2)
    for task in map(get_task, sorted(PROBE_IDS)):
        for length in (5, 10, 11, 20, 21, 30):
            spec = task.make_spec(rng_for("test", task.id, variant, length), length, variant)
            points = points_of(spec)
            assert len(points) == length and len({tuple(p) for p in points}) == length
            assert all(len(p) == dimension and all(0 <= c <= 100 for c in p) for p in points)
            assert spec == task.make_spec(rng_for("test", task.id, variant, length), length, variant)
            task.solve(spec)


def test_shapes_look_like_their_names():
    rng = random.Random(1)
    radii = [math.dist(p, (50, 50)) for p in spatial.circles(rng, 200)]
    assert all(min(abs(r - 42), abs(r - 21)) < 12 for r in radii)
    assert 40 < sum(r > 31 for r in radii) < 160, "both rings are populated"
    moons = spatial.moons(rng, 200)
    assert all(0 <= x <= 100 and 15 <= y <= 85 for x, y in moons)
    assert max(x for x, _ in moons) - min(x for x, _ in moons) > 70
    blobs = spatial.blobs(rng, 150)
    assert len(blobs) == 150


def test_kd_tree_answers_do_not_depend_on_input_order_even_with_ties():
    kd = get_task("kd_tree/spatial_construct")
    rng = random.Random(3)
    for variant in ("1d", "3d", "moons", "circles", "blobs"):
        spec = kd.make_spec(rng, 30, variant)
        tree = kd.solve(spec)
        shuffled = list(spec["points"])
        rng.shuffle(shuffled)
        assert kd.solve({"points": shuffled}) == tree


def test_unknown_task_or_variant_is_rejected():
    with pytest.raises(ValueError, match="spatial task"):
        spatial.generate_spatial("kd_tree/construct", "1d", random.Random(0), 5)
    with pytest.raises(ValueError, match="variant"):
        spatial.generate_spatial("kd_tree/spatial_construct", "7d", random.Random(0), 5)
