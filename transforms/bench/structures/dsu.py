"""Disjoint-set union (Network) with path compression and union by rank.

Rules (as in DSR-Bench's released answers, and stated in every prompt): elements 0..n-1 start as
singletons with rank 0; find(x) follows parents to the root and then points every node on that
path directly at the root (full path compression); union(x, y) finds both roots (x's first, then
y's, each compressing its path); equal roots do nothing; otherwise the root of lower rank goes
under the root of higher rank, and on equal ranks y's root goes under x's root, whose rank grows
by one.

Task
- dsu/compound: spec {"size": int >= 1, "operations": [["union", x, y] | ["find", x], ...]}
  -> the parent array after all operations (list[int]; a root is its own parent).
  length = number of operations (the generator uses length // 2 + 3 elements).
- dsu/compound_roots (suite "extended", DSR-Bench's question): the same spec -> find(x) for every
  element x = 0, 1, ... after all operations (the root of its set), in element order.
"""
from __future__ import annotations

import dataclasses
import random
from transforms.bench.registry import PromptParts, Task, check_int, int_field, operations_field, register


def find(parent: list[int], x: int) -> int:
    root = x
    while parent[root] != root:
        root = parent[root]
    while parent[x] != root:
        parent[x], x = root, parent[x]
    return root


def union(parent: list[int], rank: list[int], x: int, y: int) -> None:
    root_x, root_y = find(parent, x), find(parent, y)
    if root_x == root_y:
        return
    if rank[root_x] < rank[root_y]:
        parent[root_x] = root_y
    elif rank[root_x] > rank[root_y]:
        parent[root_y] = root_x
    else:
        parent[root_y] = root_x
        rank[root_x] += 1


def _validated(spec: dict) -> tuple[int, list[list]]:
    size = int_field(spec, "size", lo=1)
    operations = operations_field(spec, {"union": (int, int), "find": (int,)})
    for i, op in enumerate(operations):
        for element in op[1:]:
            check_int(element, f"operations[{i}] element", 0, size - 1)
    return size, operations


def solve_compound(spec: dict) -> list[int]:
    size, operations = _validated(spec)
    parent, rank = list(range(size)), [0] * size
    for op in operations:
        if op[0] == "union":
            union(parent, rank, op[1], op[2])
        else:
            find(parent, op[1])
    return parent


def solve_compound_roots(spec: dict) -> list[int]:
    parent = solve_compound(spec)
    return [find(parent, x) for x in range(len(parent))]


def generate_compound(rng: random.Random, length: int) -> dict:
    """Two unions for each find, so trees grow deep enough for path compression to matter."""
    size = length // 2 + 3
    operations = []
    for _ in range(length):
        if rng.random() < 2 / 3:
            operations.append(["union", *rng.sample(range(size), 2)])
        else:
            operations.append(["find", rng.randrange(size)])
    return {"size": size, "operations": operations}


DEFINITION = (
    "A disjoint-set union (union-find) structure keeps elements 0 to n-1 in disjoint sets, each a tree "
    "given by a parent array; a root is its own parent."
)
RULES = (
    "Initially every element is its own root with rank 0. find(x) follows parents from x up to the "
    "root and then sets the parent of every node on that path to the root (path compression). "
    "union(x, y) computes find(x), then find(y); if the two roots are equal nothing changes; otherwise "
    "the root with the smaller rank is made a child of the root with the larger rank; if the ranks "
    "are equal, y's root becomes a child of x's root and the rank of x's root increases by 1."
)


def _describe(op: list) -> str:
    return f"union({op[1]}, {op[2]})" if op[0] == "union" else f"find({op[1]})"


def prompt_compound(spec: dict) -> PromptParts:
    steps = "; ".join(f"{n}. {_describe(op)}" for n, op in enumerate(spec["operations"], 1))
    return PromptParts(
        definition=DEFINITION,
        rules=RULES,
        name="disjoint-set union with path compression and union by rank",
        setup=f"Start with {spec['size']} singleton sets, elements 0 to {spec['size'] - 1}, and perform "
              f"these operations in order: {steps}.",
        question="What is the parent array after all the operations?",
        answer_format=f"a list of {spec['size']} integers: the parent of element 0, 1, ..., in order",
    )


def prompt_compound_roots(spec: dict) -> PromptParts:
    return dataclasses.replace(
        prompt_compound(spec), question="What is find(x) for every element x after all the operations?",
        answer_format=f"a list of {spec['size']} integers: the root of the set of element 0, 1, ..., in order")


register(Task(category="Network", structure="dsu", name="compound_roots", answer_type="list[int]",
              generate=generate_compound, solve=solve_compound_roots, prompt=prompt_compound_roots, suite="extended",
              doc="Spec {size, operations: [union x y | find x]}: find(x) for every element after the operations "
                  "(DSR-Bench's question). Rules as dsu/compound."))
register(Task(category="Network", structure="dsu", name="compound", answer_type="list[int]",
              generate=generate_compound, solve=solve_compound, prompt=prompt_compound,
              doc="Spec {size, operations: [union x y | find x]}: the final parent array. Full path "
                  "compression; union by rank, equal ranks put y's root under x's root."))
