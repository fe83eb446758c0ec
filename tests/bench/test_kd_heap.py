"""K-D heap: min-heap order on squared norm, the multiset of points, and the tie rules."""
import random

import pytest

from transforms.bench.registry import get_task
from transforms.bench.structures.kd_heap import squared_norm

COMPOUND = get_task("kd_heap/compound")


def is_min_heap(array):
    return all(squared_norm(array[(i - 1) // 2]) <= squared_norm(array[i]) for i in range(1, len(array)))


@pytest.mark.parametrize("dimension", [1, 2, 3, 5])
def test_heap_order_and_contents(dimension):
    """Each extract removes a lightest point: the priorities left match a sorted-list simulation."""
    rng = random.Random(dimension)
    for _ in range(200):
        operations, inserted, priorities = [], [], []
        for _ in range(rng.randint(0, 30)):
            if priorities and rng.random() < 0.4:
                operations.append(["extract"])
                priorities.remove(min(priorities))
            else:
                point = [rng.randint(-10, 10) for _ in range(dimension)]
                operations.append(["insert", point])
                inserted.append(point)
                priorities.append(squared_norm(point))
        heap = COMPOUND.solve({"operations": operations})
        assert is_min_heap(heap)
        assert sorted(map(squared_norm, heap)) == sorted(priorities)
        assert all(point in inserted for point in heap)


def test_extract_removes_the_root():
    rng = random.Random(9)
    for _ in range(100):
        points = [[rng.randint(0, 9), rng.randint(0, 9)] for _ in range(rng.randint(1, 15))]
        operations = [["insert", p] for p in points]
        before = COMPOUND.solve({"operations": operations})
        after = COMPOUND.solve({"operations": operations + [["extract"]]})
        assert squared_norm(before[0]) == min(map(squared_norm, points))
        assert sorted(after + [before[0]]) == sorted(points)


def test_equal_priorities_never_swap_and_sift_down_prefers_left():
    insert = lambda *points: [["insert", list(p)] for p in points]
    # (3, 4) and (5, 0) both have priority 25: the later insert stays below
    assert COMPOUND.solve({"operations": insert((3, 4), (5, 0))}) == [[3, 4], [5, 0]]
    # after extracting (0, 1), (9, 9) sifts down to the LEFT of the equal children (0, 5) and (3, 4)
    ops = insert((0, 1), (0, 5), (3, 4), (9, 9)) + [["extract"]]
    assert COMPOUND.solve({"operations": ops}) == [[0, 5], [9, 9], [3, 4]]


def test_generator_covers_every_length():
    rng = random.Random(2)
    for length in range(5, 31):
        spec = COMPOUND.generate(rng, length)
        assert len(spec["operations"]) == length
        assert all(len(op[1]) == 2 for op in spec["operations"] if op[0] == "insert")
        assert is_min_heap(COMPOUND.solve(spec))


@pytest.mark.parametrize("spec, message", [
    ({}, "operations"),
    ({"operations": [["extract"]]}, "empty heap"),
    ({"operations": [["insert", [1, 2]], ["insert", [1]]]}, "coordinates"),
    ({"operations": [["insert", 3]]}, "operations"),
    ({"operations": [["insert", [1, 2.5]]]}, "integer"),
])
def test_invalid_specs_are_rejected(spec, message):
    with pytest.raises(ValueError, match=message):
        COMPOUND.solve(spec)


def test_prompt_states_the_rules():
    parts = COMPOUND.prompt({"operations": [["insert", [1, 2, 3]], ["extract"]]})
    assert "squared Euclidean norm" in parts.rules and "LEFT child" in parts.rules
    assert "3-dimensional" in parts.name
