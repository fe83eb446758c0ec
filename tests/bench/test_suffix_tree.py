import pytest

from tests.bench._samples import specs
from transforms.bench.registry import SpecError, get_task

solve = get_task("suffix_tree/construct").solve


def _paths(node, prefix=""):
    label, children = node
    if not children:
        yield prefix + label
    for child in children:
        yield from _paths(child, prefix + label)


def _nodes(node, root=True):
    yield node, root
    for child in node[1]:
        yield from _nodes(child, False)


def test_against_brute_force_suffix_list():
    for spec in specs("suffix_tree/construct"):
        text = spec["string"] + "$"
        tree = solve(spec)
        assert sorted(_paths(tree)) == sorted(text[i:] for i in range(len(text)))
        for (label, children), root in _nodes(tree):
            firsts = [c[0][0] for c in children]
            assert firsts == sorted(set(firsts))  # distinct first letters, $ first
            assert root or not children or len(children) >= 2  # compressed
            assert root == (label == "")


def test_worked_example_and_alphabet():
    assert solve({"string": "aa"}) == ["", [["$", []], ["a", [["$", []], ["a$", []]]]]]
    with pytest.raises(SpecError, match="may only use"):
        solve({"string": "ab$"})
