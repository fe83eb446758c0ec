"""Geometric graph: edges against scipy's cKDTree.query_pairs, neighbour order by distance."""
import math
import random

import numpy as np
import pytest
from scipy.spatial import cKDTree

from transforms.bench.registry import get_task
from transforms.bench.structures import geometric_graph  # noqa: F401  (registers its tasks)

CONSTRUCT = get_task("geometric_graph/construct")


def edges_of(adjacency):
    return {(i, j) for i, near in enumerate(adjacency) for j in near if i < j}


@pytest.mark.parametrize("dimension", [1, 2, 3, 5])
def test_edges_match_query_pairs(dimension):
    rng = random.Random(dimension)
    for _ in range(80):
        points = [[rng.randint(0, 40) for _ in range(dimension)] for _ in range(rng.randint(2, 30))]
        threshold = rng.randint(0, 30)
        adjacency = CONSTRUCT.solve({"points": points, "threshold": threshold})
        assert edges_of(adjacency) == cKDTree(np.array(points)).query_pairs(threshold)
        assert all(i in adjacency[j] for i, near in enumerate(adjacency) for j in near), "symmetric"


def test_neighbours_are_listed_lightest_edge_first():
    rng = random.Random(12)
    for _ in range(100):
        points = [[rng.randint(0, 20), rng.randint(0, 20)] for _ in range(15)]
        adjacency = CONSTRUCT.solve({"points": points, "threshold": 12})
        for i, near in enumerate(adjacency):
            keys = [(math.dist(points[i], points[j]), j) for j in near]
            assert keys == sorted(keys)


def test_threshold_is_inclusive_and_ties_go_by_index():
    points = [[0, 0], [3, 4], [5, 0], [0, 6]]
    assert CONSTRUCT.solve({"points": points, "threshold": 5}) == [[1, 2], [3, 2, 0], [1, 0], [1]]


def test_generator_covers_every_length():
    rng = random.Random(13)
    for length in range(5, 31):
        spec = CONSTRUCT.generate(rng, length)
        assert len(spec["points"]) == length
        edges = edges_of(CONSTRUCT.solve(spec))
        assert 0 < len(edges) < length * (length - 1) // 2


@pytest.mark.parametrize("spec, message", [
    ({"points": [[0, 0]]}, "threshold"),
    ({"points": [[0, 0]], "threshold": -1}, "threshold"),
    ({"points": [[0, 0]], "threshold": 1.5}, "threshold"),
    ({"points": [[0, 0], [1]], "threshold": 1}, "coordinates"),
])
def test_invalid_specs_are_rejected(spec, message):
    with pytest.raises(ValueError, match=message):
        CONSTRUCT.solve(spec)


def test_prompt_states_the_rules():
    parts = CONSTRUCT.prompt(CONSTRUCT.generate(random.Random(1), 5))
    assert "distance <= threshold" in parts.rules and "lightest edge first" in parts.rules
