"""Systematically corrupted answers get the partial credit the formulas promise."""
import json
import random

import pytest
import zss

from transforms.scoring.canonical import canonicalize, serialize
from transforms.scoring.metrics import (nary_postorder, edge_similarity, exact, partial, structural,
                                        tree_edit_distance, tree_similarity)

BST = [5, [3, [1, None, None], [4, None, None]], [8, None, None]]          # 5 nodes
TRIE = ["", [["a", [["b", []], ["c", []]]], ["d", []]]]                   # 5 nodes
EDGES = [[0, 1], [0, 2], [1, 3], [2, 3]]


def texts(pred, truth, answer_type):
    return serialize(canonicalize(pred, answer_type)), serialize(canonicalize(truth, answer_type))


def test_one_element_off_in_a_list():
    p, t = texts([1, 2, 99, 4, 5], [1, 2, 3, 4, 5], "list[int]")
    assert exact(p, t) == 0.0
    assert structural(p, t, "list[int]") == pytest.approx(1 - 1 / 5)
    # "[1,2,99,4,5]" vs "[1,2,3,4,5]": one substitution and one insertion over 12 characters
    assert partial(p, t) == pytest.approx(1 - 2 / 12)


def test_swapped_leaf_subtrees_cost_two_relabels():
    swapped = [5, [3, [4, None, None], [1, None, None]], [8, None, None]]
    assert tree_similarity(swapped, BST, binary=True) == pytest.approx(1 - 2 / 10)
    assert structural(*texts(swapped, BST, "tree:binary"), "tree:binary") == pytest.approx(0.8)


def test_mirror_children_are_different_trees():
    left_only, right_only = [1, [2, None, None], None], [1, None, [2, None, None]]
    assert tree_similarity(left_only, right_only, binary=True) == pytest.approx(1 - 1 / 4)


def test_missing_leaf_in_an_nary_tree():
    missing = ["", [["a", [["b", []]]], ["d", []]]]
    assert tree_similarity(missing, TRIE, binary=False) == pytest.approx(1 - 1 / 9)


def test_empty_tree_against_a_tree_scores_zero_and_two_empties_one():
    assert tree_similarity(None, BST, binary=True) == 0.0
    assert tree_similarity(None, None, binary=True) == 1.0


def test_missing_edge_and_wrong_edge():
    assert edge_similarity(EDGES[:-1], EDGES) == pytest.approx(1 - 1 / 7)
    assert edge_similarity(EDGES[:-1] + [[1, 2]], EDGES) == pytest.approx(1 - 2 / 8)
    assert edge_similarity([], []) == 1.0
    assert edge_similarity([], EDGES) == 0.0


def test_scalars_get_no_structural_credit_but_text_partial():
    p, t = texts(12, 13, "int")
    assert structural(p, t, "int") == 0.0
    assert partial(p, t) == pytest.approx(0.5)


def test_identical_answers_score_one_everywhere():
    for answer_type, value in (("tree:binary", BST), ("tree:nary", TRIE), ("edges", EDGES),
                               ("list[list[int]]", [[1], [2, 3]]), ("json", {"a": [1]})):
        p, t = texts(value, json.loads(json.dumps(value)), answer_type)
        assert (exact(p, t), partial(p, t), structural(p, t, answer_type)) == (1.0, 1.0, 1.0)


def _random_tree(rng, size, alphabet):
    """A random ordered tree of `size` nodes as [label, [children]]."""
    nodes = [[rng.choice(alphabet), []] for _ in range(size)]
    for i in range(1, size):
        nodes[rng.randrange(i)][1].append(nodes[i])
    return nodes[0]


def _zss_node(tree):
    node = zss.Node(tree[0])
    for child in tree[1]:
        node.addkid(_zss_node(child))
    return node


def test_tree_edit_distance_agrees_with_zss_on_random_trees():
    rng = random.Random(5)
    for _ in range(150):
        a = _random_tree(rng, rng.randint(1, 25), "abcd")
        b = _random_tree(rng, rng.randint(1, 25), "abcd")
        ours = tree_edit_distance(nary_postorder(a), nary_postorder(b))
        assert ours == zss.simple_distance(_zss_node(a), _zss_node(b))
