import pytest

from tests.bench._samples import specs
from transforms.bench.registry import SpecError, get_task


def _linked_stack(spec):
    """An independent stack: a linked list of (value, below) pairs."""
    top = None
    for value in spec["initial"]:
        top = (value, top)
    for op in spec["operations"]:
        top = (op[1], top) if op[0] == "push" else top[1]
    out = []
    while top:
        out.append(top[0])
        top = top[1]
    return out[::-1]


def test_against_linked_stack():
    for spec in specs("stack/compound"):
        assert get_task("stack/compound").solve(spec) == _linked_stack(spec)


def test_worked_example_and_empty_pop():
    solve = get_task("stack/compound").solve
    assert solve({"initial": [1], "operations": [["push", 2], ["push", 3], ["pop"]]}) == [1, 2]
    with pytest.raises(SpecError, match="pops an empty stack"):
        solve({"initial": [], "operations": [["pop"]]})
    with pytest.raises(SpecError, match="'push' takes 1 argument"):
        solve({"initial": [], "operations": [["push"]]})
