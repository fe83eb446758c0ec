"""BST: traversals and shapes checked through independent properties and hand-worked trees."""
import collections
import random

import pytest

from transforms.bench.registry import get_task
from transforms.bench.structures import bst  # noqa: F401  (registers its tasks)

TASKS = {name: get_task(f"bst/{name}") for name in
         ("insert", "remove", "inorder", "preorder", "postorder", "depth", "compound")}


def keys_of(tree):
    return [] if tree is None else keys_of(tree[1]) + [tree[0]] + keys_of(tree[2])


def obeys_bst_order(tree, low=float("-inf"), high=float("inf")):
    """Left subtree < node <= right subtree (equal keys go right)."""
    if tree is None:
        return True
    key, left, right = tree
    return low <= key < high and obeys_bst_order(left, low, key) and obeys_bst_order(right, key, high)


def height(tree):
    return 0 if tree is None else 1 + max(height(tree[1]), height(tree[2]))


def tree_of(keys):
    return TASKS["insert"].solve({"keys": keys, "insert": []})


def test_remove_replaces_by_in_order_successor():
    spec = {"keys": [50, 30, 70, 60, 80, 65], "remove": [50]}
    assert TASKS["remove"].solve(spec) == [60, [30, None, None], [70, [65, None, None], [80, None, None]]]
    # one child: replaced by it; absent key: nothing changes
    assert TASKS["remove"].solve({"keys": [5, 3, 1], "remove": [3, 42]}) == [5, [1, None, None], None]


def test_equal_keys_go_right_and_depth_counts_nodes():
    assert tree_of([4, 4]) == [4, None, [4, None, None]]
    assert TASKS["depth"].solve({"keys": []}) == 0
    assert TASKS["depth"].solve({"keys": [7]}) == 1
    assert TASKS["depth"].solve({"keys": [2, 1, 3]}) == 2
    assert TASKS["depth"].solve({"keys": [1, 2, 3, 4]}) == 4


def test_traversals_determine_the_tree():
    """In-order is sorted; re-inserting the pre-order or the reversed post-order rebuilds the tree."""
    rng = random.Random(11)
    for _ in range(200):
        keys = rng.sample(range(101), rng.randint(0, 30))
        tree = tree_of(keys)
        assert TASKS["inorder"].solve({"keys": keys}) == sorted(keys)
        assert tree_of(TASKS["preorder"].solve({"keys": keys})) == tree
        assert tree_of(TASKS["postorder"].solve({"keys": keys})[::-1]) == tree
        assert TASKS["depth"].solve({"keys": keys}) == height(tree)


def test_compound_keeps_order_and_multiset():
    rng = random.Random(5)
    for _ in range(300):
        keys = [rng.randint(0, 15) for _ in range(rng.randint(0, 12))]
        operations = [[rng.choice(["insert", "remove"]), rng.randint(0, 15)] for _ in range(rng.randint(0, 25))]
        expected = collections.Counter(keys)
        for name, key in operations:
            if name == "insert":
                expected[key] += 1
            elif expected[key]:
                expected[key] -= 1
        tree = TASKS["compound"].solve({"keys": keys, "operations": operations})
        assert obeys_bst_order(tree)
        assert collections.Counter(keys_of(tree)) == +expected


def test_insert_equals_building_from_all_keys():
    rng = random.Random(2)
    spec = TASKS["insert"].generate(rng, 17)
    assert TASKS["insert"].solve(spec) == tree_of(spec["keys"] + spec["insert"])


def test_generators_cover_every_length():
    rng = random.Random(9)
    for length in range(5, 31):
        spec = TASKS["insert"].generate(rng, length)
        assert len(spec["keys"]) + len(spec["insert"]) == length and spec["insert"]
        spec = TASKS["remove"].generate(rng, length)
        assert len(spec["keys"]) == length and set(spec["remove"]) <= set(spec["keys"])
        for name in ("inorder", "preorder", "postorder", "depth"):
            spec = TASKS[name].generate(rng, length)
            assert len(spec["keys"]) == length and all(0 <= k <= 100 for k in spec["keys"])
        spec = TASKS["compound"].generate(rng, length)
        assert len(spec["operations"]) == length and len(spec["keys"]) == length // 2
        for task in TASKS.values():
            task.solve(task.generate(rng, length))


@pytest.mark.parametrize("name, spec, message", [
    ("insert", {"keys": [1]}, "insert"),
    ("inorder", {"keys": "1,2"}, "keys"),
    ("depth", {"keys": [1, True]}, "keys"),
    ("compound", {"keys": [], "operations": [["delete", 3]]}, "operations"),
    ("compound", {"keys": [], "operations": [["insert"]]}, "operations"),
    ("remove", None, "JSON object"),
])
def test_invalid_specs_are_rejected(name, spec, message):
    with pytest.raises(ValueError, match=message):
        TASKS[name].solve(spec)


def test_prompts_state_the_rules():
    rng = random.Random(4)
    for task in TASKS.values():
        parts = task.prompt(task.generate(rng, 6))
        assert "in-order successor" in parts.rules and "greater than or equal" in parts.rules
        assert "depth 1" in parts.rules


def test_degenerate_trees_are_answered_or_rejected_clearly():
    keys = list(range(1200))   # deeper than Python's recursion limit
    assert TASKS["depth"].solve({"keys": keys}) == 1200
    assert TASKS["postorder"].solve({"keys": keys}) == keys[::-1]
    assert TASKS["remove"].solve({"keys": keys[:400], "remove": [0]})[0] == 1
    assert TASKS["remove"].solve({"keys": keys, "remove": keys[:800]})[0] == 800
    with pytest.raises(ValueError, match="levels deep"):
        TASKS["compound"].solve({"keys": keys, "operations": []})
