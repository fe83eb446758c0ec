"""Red-black tree (Hierarchical): the textbook (CLRS) insert and delete.

Rules (as in DSR-Bench's released answers, and stated in every prompt): a new key is inserted as
a red leaf by BST descent, smaller keys left and keys greater than or equal right (so a key may be
inserted again and then sits in the right subtree), and the insert fix-up recolours and rotates as
in CLRS; delete removes the first node with the key met on the search path; a node with two
children is replaced by its in-order successor, which takes the node's colour, followed by the
CLRS delete fix-up; deleting an absent key changes nothing. Trees are answered as
null | [[key, "R"|"B"], left, right].

Tasks
- red_black_tree/construct: spec {"keys": [int]} -> the tree after inserting the keys in order
  into an empty tree. length = len(keys).
- red_black_tree/compound: spec {"keys": [int], "operations": [["insert", k] | ["delete", k]]}
  -> the tree built from "keys", then after the operations in order. length = number of
  operations (the tree starts with length // 2 keys).
- red_black_tree/insert, red_black_tree/delete (suite "extended", as in DSR-Bench's release): spec
  {"tree": a coloured tree as answered, "insert": k} or {"tree": ..., "delete": k} -> the tree after
  that one operation. The given tree must be a red-black tree (search order, equal keys on
  either side, black root, no red node with a red child, equal black heights); DSR-Bench gives its
  input trees with their colours, which no key sequence states. length = nodes in the tree.
- red_black_tree/tree_compound (suite "extended"): spec {"tree": a coloured tree, "operations":
  [["insert", k] | ["delete", k]]} -> the tree after the operations in order. length = number of
  operations.
"""
from __future__ import annotations

import json
import random
from typing import Any, Callable

from transforms.bench.registry import (VALUE_RANGE, PromptParts, SpecError, Task, check_int, field, int_field,
                                      int_list_field, operations_field, register)

RED, BLACK = "R", "B"


class _Node:
    __slots__ = ("key", "color", "left", "right", "parent")

    def __init__(self, key: int | None, color: str, nil: "_Node | None" = None):
        self.key, self.color = key, color
        self.left = self.right = self.parent = nil


class RedBlackTree:
    """CLRS red-black tree over a shared black sentinel `nil`."""

    def __init__(self) -> None:
        self.nil = _Node(None, BLACK)
        self.nil.left = self.nil.right = self.nil.parent = self.nil
        self.root = self.nil

    def _rotate(self, x: _Node, toward_left: bool) -> None:
        """Left rotation when toward_left (x's right child rises), else right rotation."""
        y = x.right if toward_left else x.left
        inner = y.left if toward_left else y.right
        if toward_left:
            x.right = inner
        else:
            x.left = inner
        if inner is not self.nil:
            inner.parent = x
        y.parent = x.parent
        if x.parent is self.nil:
            self.root = y
        elif x is x.parent.left:
            x.parent.left = y
        else:
            x.parent.right = y
        if toward_left:
            y.left = x
        else:
            y.right = x
        x.parent = y

    def insert(self, key: int) -> None:
        z = _Node(key, RED, self.nil)
        parent, node = self.nil, self.root
        while node is not self.nil:
            parent = node
            node = node.left if key < node.key else node.right
        z.parent = parent
        if parent is self.nil:
            self.root = z
        elif key < parent.key:
            parent.left = z
        else:
            parent.right = z
        self._insert_fixup(z)

    def _insert_fixup(self, z: _Node) -> None:
        while z.parent.color == RED:
            grand = z.parent.parent
            parent_is_left = z.parent is grand.left
            uncle = grand.right if parent_is_left else grand.left
            if uncle.color == RED:
                z.parent.color = uncle.color = BLACK
                grand.color = RED
                z = grand
                continue
            if z is (z.parent.right if parent_is_left else z.parent.left):
                z = z.parent
                self._rotate(z, toward_left=parent_is_left)
            z.parent.color = BLACK
            z.parent.parent.color = RED
            self._rotate(z.parent.parent, toward_left=not parent_is_left)
        self.root.color = BLACK

    def _transplant(self, u: _Node, v: _Node) -> None:
        if u.parent is self.nil:
            self.root = v
        elif u is u.parent.left:
            u.parent.left = v
        else:
            u.parent.right = v
        v.parent = u.parent

    def delete(self, key: int) -> None:
        z = self.root
        while z is not self.nil and z.key != key:
            z = z.left if key < z.key else z.right
        if z is self.nil:
            return
        y, removed_color = z, z.color
        if z.left is self.nil:
            x = z.right
            self._transplant(z, z.right)
        elif z.right is self.nil:
            x = z.left
            self._transplant(z, z.left)
        else:
            y = z.right
            while y.left is not self.nil:
                y = y.left
            removed_color, x = y.color, y.right
            if y.parent is z:
                x.parent = y
            else:
                self._transplant(y, y.right)
                y.right = z.right
                y.right.parent = y
            self._transplant(z, y)
            y.left = z.left
            y.left.parent = y
            y.color = z.color
        if removed_color == BLACK:
            self._delete_fixup(x)

    def _delete_fixup(self, x: _Node) -> None:
        while x is not self.root and x.color == BLACK:
            is_left = x is x.parent.left
            sibling = x.parent.right if is_left else x.parent.left
            if sibling.color == RED:
                sibling.color = BLACK
                x.parent.color = RED
                self._rotate(x.parent, toward_left=is_left)
                sibling = x.parent.right if is_left else x.parent.left
            near = sibling.left if is_left else sibling.right
            far = sibling.right if is_left else sibling.left
            if near.color == BLACK and far.color == BLACK:
                sibling.color = RED
                x = x.parent
                continue
            if far.color == BLACK:
                near.color = BLACK
                sibling.color = RED
                self._rotate(sibling, toward_left=not is_left)
                sibling = x.parent.right if is_left else x.parent.left
                far = sibling.right if is_left else sibling.left
            sibling.color = x.parent.color
            x.parent.color = BLACK
            far.color = BLACK
            self._rotate(x.parent, toward_left=is_left)
            x = self.root
        x.color = BLACK

    def serialize(self, node: _Node | None = None) -> list | None:
        node = self.root if node is None else node
        if node is self.nil:
            return None
        return [[node.key, node.color], self.serialize(node.left), self.serialize(node.right)]

    @classmethod
    def load(cls, tree: list | None) -> "RedBlackTree":
        """The tree written as null | [[key, colour], left, right], checked to be a red-black tree."""
        loaded = cls()

        def attach(value: Any, parent: _Node, low: int | None, high: int | None, path: str) -> tuple[_Node, int]:
            """(the node, its black height); keys of a left subtree are <= its parent's, of a right one >= (rotations
            can carry a repeated key to either side)."""
            if value is None:
                return loaded.nil, 1
            if not (isinstance(value, list) and len(value) == 3 and isinstance(value[0], list) and len(value[0]) == 2):
                raise SpecError(f"{path} must be null or [[key, colour], left, right], got {value!r}")
            (key, colour), left, right = value
            check_int(key, f"{path} key")
            if colour not in (RED, BLACK):
                raise SpecError(f"{path} colour must be \"R\" or \"B\", got {colour!r}")
            if (low is not None and key < low) or (high is not None and key > high):
                raise SpecError(f"{path}: key {key} breaks the search order (keys left <= key <= keys right)")
            node = _Node(key, colour, loaded.nil)
            node.parent = parent
            node.left, left_height = attach(left, node, low, key, path + ".left")
            node.right, right_height = attach(right, node, key, high, path + ".right")
            if left_height != right_height:
                raise SpecError(f"{path}: its two subtrees have different black heights")
            if colour == RED and RED in (node.left.color, node.right.color):
                raise SpecError(f"{path}: a red node with a red child")
            return node, left_height + (colour == BLACK)
        loaded.root = attach(tree, loaded.nil, None, None, "tree")[0]
        if loaded.root.color != BLACK:
            raise SpecError("tree: the root must be black")
        return loaded


# --- reference answers ---------------------------------------------------

def build(keys: list[int]) -> RedBlackTree:
    tree = RedBlackTree()
    for key in keys:
        tree.insert(key)
    return tree


def solve_construct(spec: dict) -> list | None:
    return build(int_list_field(spec, "keys")).serialize()


def solve_compound(spec: dict) -> list | None:
    tree = build(int_list_field(spec, "keys"))
    for name, key in operations_field(spec, {"insert": (int,), "delete": (int,)}):
        tree.insert(key) if name == "insert" else tree.delete(key)
    return tree.serialize()


def solve_insert(spec: dict) -> list | None:
    tree = RedBlackTree.load(field(spec, "tree"))
    tree.insert(int_field(spec, "insert"))
    return tree.serialize()


def solve_delete(spec: dict) -> list | None:
    tree = RedBlackTree.load(field(spec, "tree"))
    tree.delete(int_field(spec, "delete"))
    return tree.serialize()


def solve_tree_compound(spec: dict) -> list | None:
    tree = RedBlackTree.load(field(spec, "tree"))
    for name, key in operations_field(spec, {"insert": (int,), "delete": (int,)}):
        tree.insert(key) if name == "insert" else tree.delete(key)
    return tree.serialize()


# --- generators ------------------------------------------------------------------------------

def _key(rng: random.Random) -> int:
    return rng.randint(*VALUE_RANGE)


def generate_construct(rng: random.Random, length: int) -> dict:
    return {"keys": [_key(rng) for _ in range(length)]}


def generate_compound(rng: random.Random, length: int) -> dict:
    """Keys may repeat; deletes mostly hit present keys (one in five an arbitrary value)."""
    keys = [_key(rng) for _ in range(length // 2)]
    present, operations = list(keys), []
    for _ in range(length):
        if present and rng.random() < 0.4:
            key = _key(rng) if rng.random() < 0.2 else rng.choice(present)
            if key in present:
                present.remove(key)
            operations.append(["delete", key])
        else:
            key = _key(rng)
            present.append(key)
            operations.append(["insert", key])
    return {"keys": keys, "operations": operations}


def generate_insert(rng: random.Random, length: int) -> dict:
    return {"tree": build([_key(rng) for _ in range(length)]).serialize(), "insert": _key(rng)}


def generate_delete(rng: random.Random, length: int) -> dict:
    """Mostly a key of the tree (one in five an arbitrary value)."""
    keys = [_key(rng) for _ in range(length)]
    return {"tree": build(keys).serialize(), "delete": _key(rng) if rng.random() < 0.2 else rng.choice(keys)}


def generate_tree_compound(rng: random.Random, length: int) -> dict:
    spec = generate_compound(rng, length)
    return {"tree": build(spec["keys"]).serialize(), "operations": spec["operations"]}


# --- prompts ---------------------------------------------------------------------------------

DEFINITION = (
    "A red-black tree is a binary search tree whose nodes are red or black: the root is black, a red "
    "node has no red child, and every path from a node down to an empty subtree passes the same "
    "number of black nodes."
)
RULES = (
    "Insert (textbook, as in CLRS): descend from the root, going left when the new key is smaller "
    "than the node's key and right when it is greater than or equal (a key may be inserted again; the "
    "copy goes right), attach the key as a red leaf, then fix up: while the parent is red, if the "
    "uncle is red recolour parent and uncle black and the grandparent red and continue from the "
    "grandparent; otherwise rotate the node into line with its parent if it is an inner child, then "
    "colour the parent black, the grandparent red and rotate the grandparent away from the node; "
    "finally colour the root black. Delete (textbook, as in CLRS): find the first node with the key "
    "on the search path (deleting an absent key changes nothing); a node with fewer than two children "
    "is replaced by its child; a node with two children is replaced by its in-order successor (the "
    "smallest key of its right subtree), which takes the deleted node's colour; if a black node was "
    "removed from its position, run the CLRS delete fix-up (the cases of a red sibling, a black "
    "sibling with two black children, and a black sibling with a red child)."
)
TREE_FORMAT = ("a nested list: null for an empty tree, otherwise [[key, colour], left, right] with "
               "colour \"R\" or \"B\", e.g. [[5, \"B\"], [[3, \"R\"], null, null], null]")


def _build_sentence(spec: dict) -> str:
    keys = ", ".join(map(str, spec["keys"])) or "(none)"
    return f"Start from an empty red-black tree and insert the keys {keys} in this order."


def prompt_construct(spec: dict) -> PromptParts:
    return PromptParts(definition=DEFINITION, rules=RULES, name="red-black tree", setup=_build_sentence(spec),
                       question="What is the tree after the insertions, with the colour of every node?",
                       answer_format=TREE_FORMAT)


def prompt_compound(spec: dict) -> PromptParts:
    steps = "; ".join(f"{n}. {name} {key}" for n, (name, key) in enumerate(spec["operations"], 1))
    return PromptParts(definition=DEFINITION, rules=RULES, name="red-black tree",
                       setup=f"{_build_sentence(spec)} Then perform these operations in order: {steps}.",
                       question="What is the tree after all the operations, with the colour of every node?",
                       answer_format=TREE_FORMAT)


def _one_operation(name: str) -> Callable[[dict], PromptParts]:
    def prompt(spec: dict) -> PromptParts:
        return PromptParts(definition=DEFINITION, rules=RULES, name="red-black tree",
                           setup=f"The red-black tree is {json.dumps(spec['tree'])} (written as {TREE_FORMAT}).",
                           question=f"What is the tree after {name} {spec[name]}, with the colour of every node?",
                           answer_format=TREE_FORMAT)
    return prompt


def prompt_tree_compound(spec: dict) -> PromptParts:
    steps = "; ".join(f"{n}. {name} {key}" for n, (name, key) in enumerate(spec["operations"], 1))
    return PromptParts(definition=DEFINITION, rules=RULES, name="red-black tree",
                       setup=f"The red-black tree is {json.dumps(spec['tree'])} (written as {TREE_FORMAT}). "
                             f"Perform these operations in order: {steps}.",
                       question="What is the tree after all the operations, with the colour of every node?",
                       answer_format=TREE_FORMAT)


CATEGORY = "Hierarchical"
_DOC_RULES = "CLRS insert and delete; equal keys go right; delete replaces by the in-order successor."

register(Task(category=CATEGORY, structure="red_black_tree", name="construct", answer_type="tree:binary",
              generate=generate_construct, solve=solve_construct, prompt=prompt_construct,
              doc="Spec {keys}: the coloured tree after inserting the keys in order. " + _DOC_RULES))
register(Task(category=CATEGORY, structure="red_black_tree", name="compound", answer_type="tree:binary",
              generate=generate_compound, solve=solve_compound, prompt=prompt_compound,
              doc="Spec {keys, operations: [insert k | delete k]}: the final coloured tree. " + _DOC_RULES))
register(Task(category=CATEGORY, structure="red_black_tree", name="insert", answer_type="tree:binary",
              generate=generate_insert, solve=solve_insert, prompt=_one_operation("insert"), suite="extended",
              doc="Spec {tree, insert: k}: the coloured tree after inserting k into the given red-black tree. "
                  + _DOC_RULES))
register(Task(category=CATEGORY, structure="red_black_tree", name="delete", answer_type="tree:binary",
              generate=generate_delete, solve=solve_delete, prompt=_one_operation("delete"), suite="extended",
              doc="Spec {tree, delete: k}: the coloured tree after deleting k from the given red-black tree. "
                  + _DOC_RULES))
register(Task(category=CATEGORY, structure="red_black_tree", name="tree_compound", answer_type="tree:binary",
              generate=generate_tree_compound, solve=solve_tree_compound, prompt=prompt_tree_compound,
              suite="extended",
              doc="Spec {tree, operations: [insert k | delete k]}: the coloured tree after the operations, "
                  "starting from the given red-black tree. " + _DOC_RULES))
