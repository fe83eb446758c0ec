"""B+ tree (Hierarchical): keys in the leaves, separators in internal nodes.

Rules (as in DSR-Bench's released answers, and stated in every prompt), for order m >= 3: a key
is looked up by descending from the root into the first child whose separator is greater than the
key (a key equal to a separator goes right); it is inserted into its leaf after any equal keys
(duplicates are kept). A node splits as soon as it holds m keys: a leaf keeps the first m // 2
keys, the rest move to a new right sibling, and a copy of the sibling's first key is inserted into
the parent as the separator; an internal node keeps its first m // 2 keys, pushes its middle key
(index m // 2) up to the parent and moves the keys after it (with their children) to a new right
sibling. Splitting the root creates a new root. Delete removes one copy of the key from the leaf
the descent reaches, with no merging or redistribution and separators left unchanged; a key
absent from that leaf changes nothing. The tree is answered as nested [keys, [children]] nodes:
a leaf is [[k1, k2, ...], []]; the empty tree is [[], []].

Task
- bplus_tree/compound: spec {"order": int >= 3, "operations": [["insert", k] | ["delete", k]]}
  starting from an empty tree -> the final tree (tree:nary). length = number of operations.
"""
from __future__ import annotations

import bisect
import dataclasses
import random

from transforms.bench.registry import VALUE_RANGE, PromptParts, Task, int_field, operations_field, register


@dataclasses.dataclass
class BPlusNode:
    keys: list[int] = dataclasses.field(default_factory=list)
    children: list["BPlusNode"] = dataclasses.field(default_factory=list)   # empty for a leaf

    @property
    def is_leaf(self) -> bool:
        return not self.children


def _split(node: BPlusNode) -> tuple[int, BPlusNode]:
    """Split a full node; return (separator for the parent, new right sibling)."""
    middle = len(node.keys) // 2
    if node.is_leaf:
        sibling = BPlusNode(node.keys[middle:])
        del node.keys[middle:]
        return sibling.keys[0], sibling
    separator = node.keys[middle]
    sibling = BPlusNode(node.keys[middle + 1:], node.children[middle + 1:])
    del node.keys[middle:]
    del node.children[middle + 1:]
    return separator, sibling


def _insert(node: BPlusNode, key: int, order: int) -> tuple[int, BPlusNode] | None:
    """Insert below `node`; return the split of `node` when it reached `order` keys."""
    if node.is_leaf:
        bisect.insort_right(node.keys, key)
    else:
        index = bisect.bisect_right(node.keys, key)
        split = _insert(node.children[index], key, order)
        if split is not None:
            separator, sibling = split
            node.keys.insert(index, separator)
            node.children.insert(index + 1, sibling)
    return _split(node) if len(node.keys) >= order else None


def insert(root: BPlusNode, key: int, order: int) -> BPlusNode:
    split = _insert(root, key, order)
    if split is None:
        return root
    separator, sibling = split
    return BPlusNode([separator], [root, sibling])


def delete(root: BPlusNode, key: int) -> None:
    node = root
    while not node.is_leaf:
        node = node.children[bisect.bisect_right(node.keys, key)]
    if key in node.keys:
        node.keys.remove(key)


def serialize(node: BPlusNode) -> list:
    return [list(node.keys), [serialize(child) for child in node.children]]


# --- reference answer ----------------------------------------------------

def _validated(spec: dict) -> tuple[int, list[list]]:
    order = int_field(spec, "order", lo=3)
    return order, operations_field(spec, {"insert": (int,), "delete": (int,)})


def build(order: int, operations: list[list]) -> BPlusNode:
    root = BPlusNode()
    for name, key in operations:
        if name == "insert":
            root = insert(root, key, order)
        else:
            delete(root, key)
    return root


def solve_compound(spec: dict) -> list:
    return serialize(build(*_validated(spec)))


def generate_compound(rng: random.Random, length: int) -> dict:
    """Mostly inserts (keys may repeat); one in four operations deletes a key inserted before."""
    inserted, operations = [], []
    for _ in range(length):
        if inserted and rng.random() < 0.25:
            operations.append(["delete", inserted.pop(rng.randrange(len(inserted)))])
        else:
            key = rng.randint(*VALUE_RANGE)
            inserted.append(key)
            operations.append(["insert", key])
    return {"order": rng.randint(3, 5), "operations": operations}


def _definition(order: int) -> str:
    return (
        f"A B+ tree of order {order} keeps all keys in its leaves, in ascending order; an internal node "
        "with keys s1 <= s2 <= ... has one more child than keys, and separator si divides child i (keys "
        "less than or equal to si) from child i+1 (keys greater than or equal to si)."
    )


def _rules(order: int) -> str:
    half = order // 2
    first = f"first {half} key{'s' if half > 1 else ''}"
    return (
        "To find a key's leaf, start at the root and enter the first child whose separator is greater "
        "than the key; a key equal to a separator goes right. Insert puts the key into its leaf after "
        f"any equal keys (duplicates are kept). A node splits as soon as it holds {order} keys: a leaf "
        f"keeps its {first} and moves the rest to a new right sibling, and the sibling's first "
        f"key is copied into the parent as a new separator; an internal node keeps its {first}, "
        f"moves its middle key (position {half + 1}) up into the parent and moves the keys after it, with "
        "their children, to a new right sibling. A split of the root creates a new root. Delete removes "
        "one copy of the key from the leaf its search reaches (if the key is not in that leaf, nothing "
        "changes); nodes are never merged or rebalanced and separators never change on delete, so "
        "leaves may become empty."
    )


def prompt_compound(spec: dict) -> PromptParts:
    steps = "; ".join(f"{n}. {name} {key}" for n, (name, key) in enumerate(spec["operations"], 1))
    return PromptParts(
        definition=_definition(spec["order"]),
        rules=_rules(spec["order"]),
        name=f"B+ tree of order {spec['order']}",
        setup=f"Start from an empty B+ tree of order {spec['order']} and perform these operations in "
              f"order: {steps}.",
        question="What is the tree after all the operations?",
        answer_format="a nested list [keys, children] per node, from the root: keys is the node's list "
                      "of integers, children the list of child nodes in order ([] for a leaf), e.g. "
                      "[[10], [[[3, 5], []], [[10, 12], []]]]; the empty tree is [[], []]",
    )


register(Task(category="Hierarchical", structure="bplus_tree", name="compound", answer_type="tree:nary",
              generate=generate_compound, solve=solve_compound, prompt=prompt_compound,
              doc="Spec {order, operations: [insert k | delete k]} from an empty tree: the final tree. "
                  "Equal-to-separator keys go right; a node splits on reaching `order` keys (leaf keeps "
                  "the first half, internal node pushes its middle key up); duplicates kept; delete "
                  "removes from the leaf without merging."))
