"""B+ tree: structural invariants after random runs, hand-worked splits, no-merge deletes."""
import collections
import random

import pytest

from transforms.bench.registry import get_task
from transforms.bench.structures import bplus_tree  # noqa: F401  (registers its tasks)

COMPOUND = get_task("bplus_tree/compound")


def leaves(node):
    keys, children = node
    return [keys] if not children else [leaf for child in children for leaf in leaves(child)]


def check_bplus(node, order, low=float("-inf"), high=float("inf"), depth=0, leaf_depths=None):
    """Sorted nodes, fewer than `order` keys, separators bounding their subtrees, leaves level."""
    leaf_depths = set() if leaf_depths is None else leaf_depths
    keys, children = node
    assert keys == sorted(keys) and len(keys) < order
    assert all(low <= k <= high for k in keys)
    if not children:
        leaf_depths.add(depth)
    else:
        assert len(children) == len(keys) + 1
        bounds = [low, *keys, high]
        for i, child in enumerate(children):
            check_bplus(child, order, bounds[i], bounds[i + 1], depth + 1, leaf_depths)
    assert len(leaf_depths) == 1, "leaves at different depths"
    return leaf_depths


def test_splits_follow_the_stated_rule():
    spec = {"order": 3, "operations": [["insert", k] for k in (1, 2, 3)]}
    assert COMPOUND.solve(spec) == [[2], [[[1], []], [[2, 3], []]]]
    # order 4: the leaf keeps 2 keys; the internal split pushes its middle key (position 3) up
    spec = {"order": 4, "operations": [["insert", k] for k in range(1, 11)]}
    assert COMPOUND.solve(spec) == [[7], [[[3, 5], [[[1, 2], []], [[3, 4], []], [[5, 6], []]]],
                                          [[9], [[[7, 8], []], [[9, 10], []]]]]]


def test_equal_to_separator_goes_right_and_duplicates_are_kept():
    spec = {"order": 3, "operations": [["insert", k] for k in (1, 2, 3, 2)]}
    # the second 2 joins the right leaf [2, 3], which splits into [2] and [2, 3]
    assert COMPOUND.solve(spec) == [[2, 2], [[[1], []], [[2], []], [[2, 3], []]]]


def test_delete_neither_merges_nor_changes_separators():
    spec = {"order": 3, "operations": [["insert", 1], ["insert", 2], ["insert", 3],
                                       ["delete", 1], ["delete", 2], ["delete", 9]]}
    assert COMPOUND.solve(spec) == [[2], [[[], []], [[3], []]]]
    assert COMPOUND.solve({"order": 5, "operations": []}) == [[], []]


@pytest.mark.parametrize("order", [3, 4, 5, 6])
def test_invariants_hold_after_random_operations(order):
    rng = random.Random(order)
    for _ in range(150):
        keys = rng.sample(range(200), 40)   # distinct, so every delete finds its key
        present, operations = [], []
        for key in keys:
            if present and rng.random() < 0.3:
                operations.append(["delete", present.pop(rng.randrange(len(present)))])
            operations.append(["insert", key])
            present.append(key)
        tree = COMPOUND.solve({"order": order, "operations": operations})
        check_bplus(tree, order)
        assert [k for leaf in leaves(tree) for k in leaf] == sorted(present)


def test_invariants_hold_with_duplicates():
    rng = random.Random(8)
    for _ in range(200):
        spec = {"order": rng.randint(3, 6),
                "operations": [[rng.choice(["insert", "insert", "delete"]), rng.randint(0, 8)] for _ in range(40)]}
        tree = COMPOUND.solve(spec)
        check_bplus(tree, spec["order"])
        inserted = collections.Counter(op[1] for op in spec["operations"] if op[0] == "insert")
        assert not collections.Counter(k for leaf in leaves(tree) for k in leaf) - inserted


def test_generator_covers_every_length():
    rng = random.Random(6)
    for length in range(5, 31):
        spec = COMPOUND.generate(rng, length)
        assert len(spec["operations"]) == length and 3 <= spec["order"] <= 5
        check_bplus(COMPOUND.solve(spec), spec["order"])


@pytest.mark.parametrize("spec, message", [
    ({"operations": []}, "order"),
    ({"order": 2, "operations": []}, "order"),
    ({"order": 3, "operations": [["insert", "7"]]}, "operations"),
    ({"order": 3, "operations": [["find", 7]]}, "operations"),
])
def test_invalid_specs_are_rejected(spec, message):
    with pytest.raises(ValueError, match=message):
        COMPOUND.solve(spec)


def test_prompt_states_the_rules():
    parts = COMPOUND.prompt({"order": 4, "operations": [["insert", 3]]})
    assert "equal to a separator goes right" in parts.rules and "first 2 keys" in parts.rules
    assert "never merged" in parts.rules
