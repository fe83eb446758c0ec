"""Red-black tree: the four invariants and the key multiset after random insert/delete runs."""
import collections
import random

import pytest

from transforms.bench.registry import get_task
from transforms.bench.structures import red_black_tree  # noqa: F401  (registers its tasks)

CONSTRUCT, COMPOUND = get_task("red_black_tree/construct"), get_task("red_black_tree/compound")


def black_height(tree):
    """Black nodes on every path to an empty subtree (asserting they agree); checks red-red too."""
    if tree is None:
        return 1
    (key, color), left, right = tree
    assert color in ("R", "B")
    if color == "R":
        assert all(child is None or child[0][1] == "B" for child in (left, right)), "red node with red child"
    left_height, right_height = black_height(left), black_height(right)
    assert left_height == right_height, "unequal black heights"
    return left_height + (color == "B")


def inorder(tree):
    return [] if tree is None else inorder(tree[1]) + [tree[0][0]] + inorder(tree[2])


def check_red_black(tree):
    assert tree is None or tree[0][1] == "B", "red root"
    black_height(tree)
    keys = inorder(tree)
    assert keys == sorted(keys), "BST order"
    return keys


def test_construct_matches_hand_worked_trees():
    assert CONSTRUCT.solve({"keys": [10, 20, 30]}) == [[20, "B"], [[10, "R"], None, None], [[30, "R"], None, None]]
    assert CONSTRUCT.solve({"keys": [3, 2, 1, 4]}) == [
        [2, "B"], [[1, "B"], None, None], [[3, "B"], None, [[4, "R"], None, None]]]
    assert CONSTRUCT.solve({"keys": [5, 5]}) == [[5, "B"], None, [[5, "R"], None, None]]
    assert CONSTRUCT.solve({"keys": []}) is None


def test_delete_uses_the_successor():
    spec = {"keys": [20, 10, 30, 25, 35], "operations": [["delete", 20]]}
    tree = COMPOUND.solve(spec)
    assert tree[0] == [25, "B"]
    check_red_black(tree)


def test_invariants_hold_after_random_operations():
    rng = random.Random(2026)
    for _ in range(400):
        keys = [rng.randint(0, 30) for _ in range(rng.randint(0, 20))]
        operations = [[rng.choice(["insert", "delete", "delete"]), rng.randint(0, 30)]
                      for _ in range(rng.randint(0, 40))]
        expected = collections.Counter(keys)
        for name, key in operations:
            if name == "insert":
                expected[key] += 1
            elif expected[key]:
                expected[key] -= 1
        tree = COMPOUND.solve({"keys": keys, "operations": operations})
        assert collections.Counter(check_red_black(tree)) == +expected


def test_generators_cover_every_length():
    rng = random.Random(3)
    for length in range(5, 31):
        spec = CONSTRUCT.generate(rng, length)
        assert len(spec["keys"]) == length
        check_red_black(CONSTRUCT.solve(spec))
        spec = COMPOUND.generate(rng, length)
        assert len(spec["operations"]) == length and len(spec["keys"]) == length // 2
        check_red_black(COMPOUND.solve(spec))


@pytest.mark.parametrize("task, spec, message", [
    (CONSTRUCT, {}, "keys"),
    (CONSTRUCT, {"keys": [1.5]}, "keys"),
    (COMPOUND, {"keys": [], "operations": [["remove", 1]]}, "operations"),
    (COMPOUND, {"keys": [], "operations": "insert 1"}, "operations"),
])
def test_invalid_specs_are_rejected(task, spec, message):
    with pytest.raises(ValueError, match=message):
        task.solve(spec)


def test_prompt_states_the_rules():
    parts = COMPOUND.prompt(COMPOUND.generate(random.Random(1), 7))
    assert "greater than or equal" in parts.rules and "in-order successor" in parts.rules
    assert parts.answer_format.startswith("a nested list")
