"""K-D tree: nearest-neighbour queries over the answer tree against scipy's cKDTree."""
import random

import numpy as np
import pytest
from scipy.spatial import cKDTree

from transforms.bench.registry import get_task
from transforms.bench.structures import kd_tree

CONSTRUCT = get_task("kd_tree/construct")


def nearest(tree, query, depth=0, best=None):
    """Branch-and-bound nearest neighbour over a [point, left, right] tree: (squared distance, point)."""
    if tree is None:
        return best
    point, left, right = tree
    distance = sum((a - b) ** 2 for a, b in zip(point, query))
    if best is None or distance < best[0]:
        best = (distance, point)
    axis = depth % len(query)
    gap = query[axis] - point[axis]
    near, far = (left, right) if gap < 0 else (right, left)
    best = nearest(near, query, depth + 1, best)
    if gap * gap <= best[0]:
        best = nearest(far, query, depth + 1, best)
    return best


def nodes(tree):
    return [] if tree is None else [tree[0]] + nodes(tree[1]) + nodes(tree[2])


def check_splits(tree, depth=0):
    """Left subtree not after the node on its axis, right subtree not before; sizes balanced."""
    if tree is None:
        return 0
    point, left, right = tree
    axis = depth % len(point)
    assert all(p[axis] <= point[axis] for p in nodes(left))
    assert all(p[axis] >= point[axis] for p in nodes(right))
    left_size, right_size = check_splits(left, depth + 1), check_splits(right, depth + 1)
    assert left_size - right_size in (0, 1), "median at index len // 2"
    return left_size + right_size + 1


@pytest.mark.parametrize("dimension", [1, 2, 3, 5])
def test_nearest_neighbours_match_ckdtree(dimension):
    rng = random.Random(dimension)
    for _ in range(60):
        points = [[rng.randint(0, 30) for _ in range(dimension)] for _ in range(rng.randint(1, 30))]
        tree = CONSTRUCT.solve({"points": points})
        assert sorted(nodes(tree)) == sorted(points)
        check_splits(tree)
        reference = cKDTree(np.array(points))
        for _ in range(10):
            query = [rng.uniform(-5, 35) for _ in range(dimension)]
            distance, _ = reference.query(query)
            assert nearest(tree, query)[0] == pytest.approx(distance ** 2)


def test_median_split_by_hand():
    points = [[2, 3], [5, 4], [9, 6], [4, 7], [8, 1], [7, 2]]
    assert CONSTRUCT.solve({"points": points}) == [
        [7, 2],
        [[5, 4], [[2, 3], None, None], [[4, 7], None, None]],
        [[9, 6], [[8, 1], None, None], None],
    ]


def test_ties_are_broken_by_the_next_coordinates_whatever_the_input_order():
    points = [[3, 9], [3, 1], [3, 5], [1, 4], [6, 0]]
    tree = CONSTRUCT.solve({"points": points})
    assert tree[0] == [3, 5]
    rng = random.Random(0)
    for _ in range(20):
        rng.shuffle(points)
        assert CONSTRUCT.solve({"points": points}) == tree


def numpy_quicksort_tree(points, depth=0):
    """The seed release's construction: np.argsort(kind="quicksort") on the axis."""
    if not points:
        return None
    axis = depth % len(points[0])
    order = np.argsort(np.array([p[axis] for p in points]), kind="quicksort")
    ordered = [points[i] for i in order]
    median = len(ordered) // 2
    return [ordered[median], numpy_quicksort_tree(ordered[:median], depth + 1),
            numpy_quicksort_tree(ordered[median + 1:], depth + 1)]


def test_generated_instances_have_no_ties_so_numpy_agrees():
    rng = random.Random(5)
    for length in range(5, 31):
        for _ in range(5):
            spec = CONSTRUCT.generate(rng, length)
            assert len(spec["points"]) == length
            for axis in range(2):
                assert len({p[axis] for p in spec["points"]}) == length
            assert CONSTRUCT.solve(spec) == numpy_quicksort_tree(spec["points"])


@pytest.mark.parametrize("spec, message", [
    ({}, "points"),
    ({"points": [[1, 2], [3]]}, "coordinates"),
    ({"points": [[1, 2], [3, "4"]]}, "integer"),
    ({"points": [[]]}, "non-empty"),
    ({"points": [5]}, "non-empty"),
])
def test_invalid_specs_are_rejected(spec, message):
    with pytest.raises(ValueError, match=message):
        CONSTRUCT.solve(spec)


def test_prompt_states_the_rules():
    parts = CONSTRUCT.prompt({"points": [[1, 2, 3]]})
    assert "len // 2" in parts.rules and "ties" in parts.rules and "mod 3" in parts.rules


def test_a_median_split_tree_under_another_tie_order_is_told_from_a_wrong_tree():
    points = [[5, 1], [5, 2], [1, 9]]
    ours = kd_tree.build(points)
    assert ours == [[5, 1], [[1, 9], None, None], [[5, 2], None, None]]
    other_tie_order = [[5, 2], [[1, 9], None, None], [[5, 1], None, None]]
    assert kd_tree.is_median_split(points, ours) and kd_tree.is_median_split(points, other_tie_order)
    assert not kd_tree.is_median_split(points, [[1, 9], [[5, 1], None, None], [[5, 2], None, None]])  # not the median
    assert not kd_tree.is_median_split(points, [[5, 2], None, [[1, 9], None, [[5, 1], None, None]]])  # unbalanced
    assert not kd_tree.is_median_split(points, [[5, 2], [[1, 9], None, None], [[5, 3], None, None]])  # other points
