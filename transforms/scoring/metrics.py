"""Per-answer scores over canonical values: exact, partial (text) and structural credit.

- `exact`: 1.0 when the canonical serializations are equal.
- `partial`: 1 - normalized Levenshtein distance between canonical serializations.
- `structural`: credit that follows the answer's structure: trees 1 - TED/(|pred| + |truth|)
  (Zhang-Shasha tree edit distance, unit costs, clipped at 0); edge lists
  1 - |E_pred sym.diff. E_true| / (|E_pred| + |E_true|); lists 1 - normalized Levenshtein over
  elements (a wrong element costs one edit, whatever its digits); scalars: exact; other JSON:
  partial.
The tree edit distance is our own Zhang-Shasha over flat postorder lists (tests check it against
the `zss` package), several times faster than `zss` on the trees of a release.
"""
from __future__ import annotations

import functools
import json
from typing import Any

from rapidfuzz.distance import Levenshtein

from transforms.scoring.canonical import serialize

TREE_TYPES = ("tree:binary", "tree:nary")
LIST_TYPES = ("list[int]", "list[str]", "list[list[int]]")
SCALAR_TYPES = ("int", "bool", "str")


def exact(pred_text: str, truth_text: str) -> float:
    return 1.0 if pred_text == truth_text else 0.0


def partial(pred_text: str, truth_text: str) -> float:
    return float(Levenshtein.normalized_similarity(pred_text, truth_text))


@functools.lru_cache(maxsize=65536)
def structural(pred_text: str, truth_text: str, answer_type: str) -> float:
    """Structure-aware credit of two canonical serializations (cached: trials repeat answers)."""
    if pred_text == truth_text:
        return 1.0
    if answer_type in SCALAR_TYPES:
        return 0.0
    pred, truth = json.loads(pred_text), json.loads(truth_text)
    if answer_type in TREE_TYPES:
        return tree_similarity(pred, truth, binary=answer_type == "tree:binary")
    if answer_type == "edges":
        return edge_similarity(pred, truth)
    if answer_type in LIST_TYPES:
        return float(Levenshtein.normalized_similarity(_hashable(pred), _hashable(truth)))
    return partial(pred_text, truth_text)


def tree_similarity(pred: Any, truth: Any, *, binary: bool) -> float:
    """1 - TED/(|pred| + |truth|), clipped at 0; two empty trees are identical."""
    flatten = binary_postorder if binary else nary_postorder
    a, b = flatten(pred), flatten(truth)
    size = len(a[0]) + len(b[0])
    if size == 0:
        return 1.0
    if not a[0] or not b[0]:
        return 0.0
    return max(0.0, 1.0 - tree_edit_distance(a, b) / size)


def tree_edit_distance(a: tuple[list, list], b: tuple[list, list]) -> int:
    """Zhang-Shasha edit distance (unit insert, delete, relabel) of two ordered trees.

    Each tree is (labels, leftmost) in postorder: `leftmost[i]` is the postorder index of node i's
    leftmost leaf. Written over flat lists because scoring a release runs it thousands of times.
    """
    a_labels, a_left = a
    b_labels, b_left = b
    tree = [[0] * len(b_labels) for _ in a_labels]
    for i in _keyroots(a_left):
        li = a_left[i]
        rows = i - li + 2
        for j in _keyroots(b_left):
            lj = b_left[j]
            cols = j - lj + 2
            forest = [[0] * cols for _ in range(rows)]
            forest[0] = list(range(cols))
            for x in range(1, rows):
                forest[x][0] = x
            for x in range(1, rows):
                ax = li + x - 1
                lax, label, here, above = a_left[ax], a_labels[ax], forest[x], forest[x - 1]
                tree_row = tree[ax]
                whole_a = lax == li
                for y in range(1, cols):
                    by = lj + y - 1
                    lby = b_left[by]
                    best = above[y] + 1
                    if here[y - 1] + 1 < best:
                        best = here[y - 1] + 1
                    if whole_a and lby == lj:
                        diagonal = above[y - 1] + (label != b_labels[by])
                        if diagonal < best:
                            best = diagonal
                        tree_row[by] = best
                    else:
                        diagonal = forest[lax - li][lby - lj] + tree_row[by]
                        if diagonal < best:
                            best = diagonal
                    here[y] = best
    return tree[-1][-1]


def _keyroots(leftmost: list) -> list:
    """Nodes that are the highest with their leftmost leaf, in increasing postorder."""
    highest = {}
    for node, leaf in enumerate(leftmost):
        highest[leaf] = node
    return sorted(highest.values())


def edge_similarity(pred: list, truth: list) -> float:
    """1 - |symmetric difference| / (|E_pred| + |E_true|); two empty graphs are identical."""
    p, t = {serialize(e) for e in pred}, {serialize(e) for e in truth}
    if not p and not t:
        return 1.0
    return 1.0 - len(p ^ t) / (len(p) + len(t))


def binary_postorder(tree: Any) -> tuple[list, list]:
    """A binary tree in postorder; labels carry the side (L/R), so a left child differs from a right one."""
    labels, leftmost = [], []

    def visit(node: Any, side: str) -> int:
        first = None
        for child_side, child in (("L", node[1]), ("R", node[2])):
            if child is not None:
                leaf = visit(child, child_side)
                first = leaf if first is None else first
        labels.append(serialize(node[0]) + side)
        leftmost.append(len(labels) - 1 if first is None else first)
        return leftmost[-1]

    if tree is not None:
        visit(tree, "")
    return labels, leftmost


def nary_postorder(tree: Any) -> tuple[list, list]:
    labels, leftmost = [], []

    def visit(node: Any) -> int:
        first = None
        for child in node[1]:
            leaf = visit(child)
            first = leaf if first is None else first
        labels.append(serialize(node[0]))
        leftmost.append(len(labels) - 1 if first is None else first)
        return leftmost[-1]

    if tree is not None:
        visit(tree)
    return labels, leftmost


def _hashable(items: list) -> list:
    return [serialize(item) if isinstance(item, list) else item for item in items]
