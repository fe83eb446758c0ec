"""Binary heap: invariants, multiset bookkeeping against a sorted list, and the tie rules."""
import random

import pytest

from transforms.bench.registry import get_task
from transforms.bench.structures import heap

HEAPIFY, COMPOUND = get_task("heap/heapify"), get_task("heap/compound")


def is_heap(array, kind):
    better_or_equal = (lambda a, b: a <= b) if kind == "min" else (lambda a, b: a >= b)
    return all(better_or_equal(array[(i - 1) // 2], array[i]) for i in range(1, len(array)))


@pytest.mark.parametrize("kind", ["min", "max"])
def test_heapify_is_a_heap_and_a_permutation(kind):
    rng = random.Random(kind)
    for _ in range(200):
        values = [rng.randint(0, 20) for _ in range(rng.randint(0, 30))]
        array = HEAPIFY.solve({"kind": kind, "values": values})
        assert is_heap(array, kind)
        assert sorted(array) == sorted(values)


def test_heapify_is_bottom_up_and_equal_children_swap_left():
    assert HEAPIFY.solve({"kind": "min", "values": [5, 1, 1]}) == [1, 5, 1]
    assert HEAPIFY.solve({"kind": "max", "values": [0, 7, 7, 1]}) == [7, 1, 7, 0]
    # bottom-up: index 1 is fixed before the root sifts down
    assert HEAPIFY.solve({"kind": "min", "values": [9, 8, 7, 1]}) == [1, 8, 7, 9]


@pytest.mark.parametrize("kind", ["min", "max"])
def test_compound_keeps_the_right_multiset(kind):
    rng = random.Random(7)
    for length in range(5, 31):
        spec = COMPOUND.generate(rng, length)
        spec["kind"] = kind
        remaining = sorted(spec["values"])
        for op in spec["operations"]:
            if op[0] == "insert":
                remaining.append(op[1])
                remaining.sort()
            else:
                remaining.pop(0 if kind == "min" else -1)
        array = COMPOUND.solve(spec)
        assert is_heap(array, kind)
        assert sorted(array) == remaining


def test_extract_moves_last_to_root():
    spec = {"kind": "min", "values": [1, 3, 2, 4], "operations": [["extract"]]}
    assert COMPOUND.solve(spec) == [2, 3, 4]


def test_generators_cover_every_length():
    rng = random.Random(1)
    for length in range(5, 31):
        assert len(HEAPIFY.generate(rng, length)["values"]) == length
        spec = COMPOUND.generate(rng, length)
        assert len(spec["operations"]) == length and len(spec["values"]) == length // 2
        COMPOUND.solve(spec)


@pytest.mark.parametrize("task, spec, message", [
    (HEAPIFY, {"values": [1]}, "kind"),
    (HEAPIFY, {"kind": "mid", "values": [1]}, "kind"),
    (HEAPIFY, {"kind": "min", "values": [1, "2"]}, "values"),
    (COMPOUND, {"kind": "min", "values": [], "operations": [["extract"]]}, "empty heap"),
    (COMPOUND, {"kind": "min", "values": [], "operations": [["push", 1]]}, "operations"),
    (HEAPIFY, [1, 2], "JSON object"),
])
def test_invalid_specs_are_rejected(task, spec, message):
    with pytest.raises(ValueError, match=message):
        task.solve(spec)


def test_prompt_states_the_rules():
    parts = COMPOUND.prompt(COMPOUND.generate(random.Random(3), 8))
    assert "LEFT child" in parts.rules and "bottom-up" in parts.rules
    assert parts.setup.count(";") == 7


def test_sift_helpers_take_any_order():
    array = heap.heapify([[3], [1], [2]], lambda a, b: a[0] < b[0])
    heap.heap_insert(array, [0], lambda a, b: a[0] < b[0])
    assert heap.heap_extract(array, lambda a, b: a[0] < b[0]) == [0]
