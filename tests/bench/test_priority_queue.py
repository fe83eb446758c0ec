import heapq

import pytest

from tests.bench._samples import specs
from transforms.bench.registry import SpecError, get_task

solve = get_task("priority_queue/compound").solve


def _heap_answer(spec):
    """An independent priority queue: heapq with lazy invalidation of changed keys."""
    current, heap = {}, []

    def push(value, priority):
        current[value] = priority
        heapq.heappush(heap, (-priority, -value))

    def pop():
        while True:
            priority, value = heapq.heappop(heap)
            if current.get(-value) == -priority:
                del current[-value]
                return -value

    for value, priority in spec["initial"]:
        push(value, priority)
    for op in spec["operations"]:
        if op[0] == "delete":
            pop()
        else:
            push(op[1], op[2])
    return [[pop(), None] for _ in range(len(current))]


def test_against_heapq():
    ties = 0
    for spec in specs("priority_queue/compound", per_difficulty=30):
        answer = solve(spec)
        assert [v for v, _ in answer] == [v for v, _ in _heap_answer(spec)]
        priorities = [p for _, p in answer]
        ties += len(priorities) != len(set(priorities))
    assert ties > 10  # the generator makes the tie rule matter


def test_tie_goes_to_larger_value_and_bad_key_change_rejected():
    assert solve({"initial": [[3, 5], [9, 5], [1, 7]], "operations": [["delete"], ["delete"]]}) == [[3, 5]]
    with pytest.raises(SpecError, match="goes the wrong way"):
        solve({"initial": [[3, 5]], "operations": [["increase_key", 3, 2]]})
    with pytest.raises(SpecError, match="not present"):
        solve({"initial": [], "operations": [["decrease_key", 3, 2]]})
