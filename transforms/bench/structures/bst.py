"""Binary search tree (Hierarchical), unbalanced.

Rules (as in DSR-Bench's released answers, and stated in every prompt): keys are inserted one by
one from an empty tree; a key smaller than a node's key goes left, a key greater than or equal to
it goes right (so repeated keys are kept, in the right subtree); remove deletes the first node
with that key met on the search path from the root: a leaf is dropped, a node with one child is
replaced by that child, a node with two children takes the key of its in-order successor (the
smallest key of its right subtree), which is then removed from the right subtree; removing an
absent key changes nothing. Depth counts nodes: the root alone has depth 1, the empty tree 0.
Trees are answered as null | [key, left, right].

Tasks (spec fields; "keys" are inserted in order into an empty tree first)
- bst/insert: {"keys": [int], "insert": [int]} -> the tree after inserting "insert" in order.
  length = len(keys) + len(insert).
- bst/remove: {"keys": [int], "remove": [int]} -> the tree after removing "remove" in order.
  length = len(keys).
- bst/inorder, bst/preorder, bst/postorder: {"keys": [int]} -> the traversal (list[int]).
  length = len(keys).
- bst/depth: {"keys": [int]} -> the number of nodes on the longest root-to-leaf path (int).
  length = len(keys).
- bst/compound: {"keys": [int], "operations": [["insert", k] | ["remove", k]]} -> the final tree.
  length = number of operations (the tree starts with length // 2 keys).
"""
from __future__ import annotations

import dataclasses
import random
from typing import Callable

from transforms.bench.registry import (VALUE_RANGE, PromptParts, SpecError, Task, int_list_field, operations_field,
                                      register)

MAX_TREE_DEPTH = 500


@dataclasses.dataclass
class Node:
    key: int
    left: "Node | None" = None
    right: "Node | None" = None


def insert(root: Node | None, key: int) -> Node:
    """Insert iteratively (equal keys go right) so deep degenerate trees need no recursion."""
    new = Node(key)
    if root is None:
        return new
    node = root
    while True:
        side = "left" if key < node.key else "right"
        child = getattr(node, side)
        if child is None:
            setattr(node, side, new)
            return root
        node = child


def remove(root: Node | None, key: int) -> Node | None:
    """Remove the first node with `key` on the search path; two children: in-order successor."""
    parent, node = None, root
    while node is not None and node.key != key:
        parent, node = node, (node.left if key < node.key else node.right)
    if node is None:
        return root
    if node.left is not None and node.right is not None:
        parent, successor = node, node.right
        while successor.left is not None:
            parent, successor = successor, successor.left
        node.key = successor.key
        node = successor                      # now unlink the successor, which has no left child
    child = node.left if node.left is not None else node.right
    if parent is None:
        return child
    if parent.left is node:
        parent.left = child
    else:
        parent.right = child
    return root


def build(keys: list[int]) -> Node | None:
    root = None
    for key in keys:
        root = insert(root, key)
    return root


def depth(root: Node | None) -> int:
    deepest, stack = 0, [(root, 1)]
    while stack:
        node, level = stack.pop()
        if node is not None:
            deepest = max(deepest, level)
            stack += [(node.left, level + 1), (node.right, level + 1)]
    return deepest


def serialize(root: Node | None) -> list | None:
    """null | [key, left, right]; trees deeper than MAX_TREE_DEPTH cannot be nested JSON."""
    levels = depth(root)
    if levels > MAX_TREE_DEPTH:
        raise SpecError(f"the resulting tree is {levels} levels deep; tree answers are limited to "
                        f"{MAX_TREE_DEPTH} levels (deeper JSON nesting cannot be written)")
    return _nested(root)


def _nested(node: Node | None) -> list | None:
    return None if node is None else [node.key, _nested(node.left), _nested(node.right)]


def traverse(root: Node | None, order: str) -> list[int]:
    """Keys in "pre", "in" or "post" order, with an explicit stack (degenerate trees are deep)."""
    keys, stack = [], [(root, False)]
    while stack:
        node, emit = stack.pop()
        if node is None:
            continue
        if emit:
            keys.append(node.key)
            continue
        visit = {"pre": [(node, True), (node.left, False), (node.right, False)],
                 "in": [(node.left, False), (node, True), (node.right, False)],
                 "post": [(node.left, False), (node.right, False), (node, True)]}[order]
        stack.extend(reversed(visit))
    return keys


# --- reference answers -----------------------------------------------------------------------

def solve_insert(spec: dict) -> list | None:
    root = build(int_list_field(spec, "keys"))
    for key in int_list_field(spec, "insert"):
        root = insert(root, key)
    return serialize(root)


def solve_remove(spec: dict) -> list | None:
    root = build(int_list_field(spec, "keys"))
    for key in int_list_field(spec, "remove"):
        root = remove(root, key)
    return serialize(root)


def solve_inorder(spec: dict) -> list[int]:
    return traverse(build(int_list_field(spec, "keys")), "in")


def solve_preorder(spec: dict) -> list[int]:
    return traverse(build(int_list_field(spec, "keys")), "pre")


def solve_postorder(spec: dict) -> list[int]:
    return traverse(build(int_list_field(spec, "keys")), "post")


def solve_depth(spec: dict) -> int:
    return depth(build(int_list_field(spec, "keys")))


def solve_compound(spec: dict) -> list | None:
    root = build(int_list_field(spec, "keys"))
    for name, key in operations_field(spec, {"insert": (int,), "remove": (int,)}):
        root = insert(root, key) if name == "insert" else remove(root, key)
    return serialize(root)


# --- generators ------------------------------------------------------------------------------

def _distinct_keys(rng: random.Random, count: int) -> list[int]:
    low, high = VALUE_RANGE
    return rng.sample(range(low, high + 1), count)


def generate_keys(rng: random.Random, length: int) -> dict:
    return {"keys": _distinct_keys(rng, length)}


def generate_insert(rng: random.Random, length: int) -> dict:
    inserted = max(1, length // 5)
    keys = _distinct_keys(rng, length)
    return {"keys": keys[inserted:], "insert": keys[:inserted]}


def generate_remove(rng: random.Random, length: int) -> dict:
    keys = _distinct_keys(rng, length)
    return {"keys": keys, "remove": rng.sample(keys, max(1, length // 5))}


def generate_compound(rng: random.Random, length: int) -> dict:
    """Inserts of fresh keys and removes of present keys (one in five removes an absent key)."""
    pool = _distinct_keys(rng, length // 2 + length)
    keys, fresh = pool[:length // 2], pool[length // 2:]
    present, operations = list(keys), []
    for _ in range(length):
        if present and rng.random() < 0.4:
            if rng.random() < 0.2:
                operations.append(["remove", fresh.pop()])
            else:
                key = present.pop(rng.randrange(len(present)))
                operations.append(["remove", key])
        else:
            key = fresh.pop()
            present.append(key)
            operations.append(["insert", key])
    return {"keys": keys, "operations": operations}


# --- prompts ---------------------------------------------------------------------------------

DEFINITION = (
    "A binary search tree (BST) stores one key per node: keys in a node's left subtree are smaller "
    "than its key, keys in its right subtree are greater than or equal to it. The tree is never "
    "rebalanced."
)
RULES = (
    "Keys are inserted one at a time, starting from the root: a key smaller than the node's key goes "
    "to the left subtree, a key greater than or equal to it goes to the right subtree, until an empty "
    "position is found, where the new node is placed. To remove a key, find the first node holding it "
    "on the search path from the root: a leaf is deleted; a node with one child is replaced by that "
    "child; a node with two children takes the key of its in-order successor (the smallest key in its "
    "right subtree), and that successor node is then removed from the right subtree. Removing a key "
    "that is not in the tree changes nothing. The depth of a tree is the number of nodes on its "
    "longest path from the root to a leaf (a single node has depth 1, the empty tree 0)."
)
TREE_FORMAT = ("a nested list: null for an empty tree, otherwise [key, left, right] where left and "
               "right are subtrees in the same format, e.g. [5, [3, null, null], null]")


def _numbers(values: list[int]) -> str:
    return ", ".join(map(str, values)) if values else "(none)"


def _build_sentence(spec: dict) -> str:
    return f"Start from an empty BST and insert the keys {_numbers(spec['keys'])} in this order."


def _parts(setup: str, question: str, answer_format: str) -> PromptParts:
    return PromptParts(definition=DEFINITION, rules=RULES, name="binary search tree", setup=setup,
                       question=question, answer_format=answer_format)


def prompt_insert(spec: dict) -> PromptParts:
    return _parts(f"{_build_sentence(spec)} Then insert the keys {_numbers(spec['insert'])} in this order.",
                  "What is the tree after the insertions?", TREE_FORMAT)


def prompt_remove(spec: dict) -> PromptParts:
    return _parts(f"{_build_sentence(spec)} Then remove the keys {_numbers(spec['remove'])} in this order.",
                  "What is the tree after the removals?", TREE_FORMAT)


def _traversal_prompt(order: str, rule: str) -> Callable[[dict], PromptParts]:
    def prompt(spec: dict) -> PromptParts:
        return _parts(_build_sentence(spec),
                      f"What is the {order} traversal of the tree ({rule})?",
                      "a list of integers: the keys in visiting order")
    return prompt


def prompt_depth(spec: dict) -> PromptParts:
    return _parts(_build_sentence(spec), "What is the depth of the tree, counting nodes (root at depth 1)?",
                  "an integer")


def prompt_compound(spec: dict) -> PromptParts:
    steps = "; ".join(f"{n}. {name} {key}" for n, (name, key) in enumerate(spec["operations"], 1))
    return _parts(f"{_build_sentence(spec)} Then perform these operations in order: {steps}.",
                  "What is the tree after all the operations?", TREE_FORMAT)


CATEGORY = "Hierarchical"
_DOC_RULES = ("Equal keys go right; remove uses the in-order successor; depth counts nodes with the "
          "root at 1.")

for _name, _answer_type, _generate, _solve, _prompt, _doc in (
    ("insert", "tree:binary", generate_insert, solve_insert, prompt_insert,
     "Spec {keys, insert}: the tree after inserting `insert` into the BST built from `keys`."),
    ("remove", "tree:binary", generate_remove, solve_remove, prompt_remove,
     "Spec {keys, remove}: the tree after removing `remove` from the BST built from `keys`."),
    ("inorder", "list[int]", generate_keys, solve_inorder, _traversal_prompt("in-order", "left, node, right"),
     "Spec {keys}: the in-order traversal."),
    ("preorder", "list[int]", generate_keys, solve_preorder, _traversal_prompt("pre-order", "node, left, right"),
     "Spec {keys}: the pre-order traversal."),
    ("postorder", "list[int]", generate_keys, solve_postorder, _traversal_prompt("post-order", "left, right, node"),
     "Spec {keys}: the post-order traversal."),
    ("depth", "int", generate_keys, solve_depth, prompt_depth,
     "Spec {keys}: the depth in nodes."),
    ("compound", "tree:binary", generate_compound, solve_compound, prompt_compound,
     "Spec {keys, operations: [insert k | remove k]}: the final tree."),
):
    register(Task(category=CATEGORY, structure="bst", name=_name, answer_type=_answer_type,
                  generate=_generate, solve=_solve, prompt=_prompt, doc=f"{_doc} {_DOC_RULES}"))
