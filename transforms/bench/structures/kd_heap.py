"""K-D heap (Spatial): a binary min-heap of k-dimensional points keyed by squared Euclidean norm.

Rules (as in DSR-Bench's released answers, and stated in every prompt): a point's priority is the
sum of the squares of its coordinates; the smallest priority is at the root; the array layout,
sift-up and sift-down are those of the binary heap (`heap.py`): a point moves only past a strictly
larger priority, and on equal children sifting down takes the left one. Insert appends and sifts
up; extract removes the root, moves the last point to the root and sifts it down.

Task
- kd_heap/compound: spec {"operations": [["insert", [c1, ..., ck]] | ["extract"], ...]} from an
  empty heap (integer points of one dimension) -> the final heap array (list[list[int]]).
  Extracting from an empty heap is an invalid spec. length = number of operations.
- kd_heap/labelled_compound (suite "extended", as in DSR-Bench's release): items are labelled
  points, several labels may share one point; spec {"operations": [["insert", label, [c1, ..., ck]]
  | ["extract"], ...]} -> the labels of the final heap array (list[int]). The priority is still the
  squared norm of the point, so the heap rules above decide between equal points too.
"""
from __future__ import annotations

import random
from transforms.bench.registry import PromptParts, SpecError, Task, operations_field, register
from transforms.bench.structures.heap import heap_extract, heap_insert
from transforms.bench.structures.kd_tree import check_point, distinct_axis_points, format_point


def squared_norm(point: list[int]) -> int:
    return sum(c * c for c in point)


def _lighter(a: list[int], b: list[int]) -> bool:
    return squared_norm(a) < squared_norm(b)


def _operations(spec: dict) -> list[list]:
    operations = operations_field(spec, {"insert": (list,), "extract": ()})
    inserted = [op[1] for op in operations if op[0] == "insert"]
    for i, op in enumerate(operations):
        if op[0] == "insert":
            check_point(op[1], len(inserted[0]), f"operations[{i}] point")
    return operations


def _run(operations: list[list], items: list) -> list:
    """The final heap array of `items` (one per insert, in order), ordered by their points."""
    heap: list = []
    pending = iter(items)
    for i, op in enumerate(operations):
        if op[0] == "insert":
            heap_insert(heap, next(pending), lambda a, b: _lighter(a[-1], b[-1]))
        elif not heap:
            raise SpecError(f"operations[{i}] extracts from an empty heap")
        else:
            heap_extract(heap, lambda a, b: _lighter(a[-1], b[-1]))
    return heap


def solve_compound(spec: dict) -> list[list[int]]:
    operations = _operations(spec)
    return [item[-1] for item in _run(operations, [(list(op[1]),) for op in operations if op[0] == "insert"])]


def solve_labelled(spec: dict) -> list[int]:
    operations = operations_field(spec, {"insert": (int, list), "extract": ()})
    inserted = [op for op in operations if op[0] == "insert"]
    for i, op in enumerate(operations):
        if op[0] == "insert":
            check_point(op[2], len(inserted[0][2]), f"operations[{i}] point")
    return [item[0] for item in _run(operations, [(op[1], list(op[2])) for op in inserted])]


def spec_from_points(rng: random.Random, points: list[list[int]]) -> dict:
    """Insert the points in order, with an extract (when the heap is non-empty) before about one in
    three of them, then one final extract; len(points) + extracts operations in all."""
    operations, size = [], 0
    for point in points:
        if size and rng.random() < 1 / 3:
            operations.append(["extract"])
            size -= 1
        operations.append(["insert", point])
        size += 1
    operations.append(["extract"])
    return {"operations": operations}


def generate_compound(rng: random.Random, length: int) -> dict:
    """Exactly `length` operations on 2-D points: inserts, and extracts while the heap is non-empty."""
    points = iter(distinct_axis_points(rng, length, 2))
    operations, size = [], 0
    for _ in range(length):
        if size and rng.random() < 0.35:
            operations.append(["extract"])
            size -= 1
        else:
            operations.append(["insert", next(points)])
            size += 1
    return {"operations": operations}


def _dimension(spec: dict) -> int:
    return next((len(op[-1]) for op in spec["operations"] if op[0] == "insert"), 2)


def generate_labelled(rng: random.Random, length: int) -> dict:
    """`length` operations on labelled 2-D points; about one insert in five reuses an earlier point."""
    points = iter(distinct_axis_points(rng, length, 2))
    operations, size, used = [], 0, []
    for label in range(length):
        if size and rng.random() < 0.35:
            operations.append(["extract"])
            size -= 1
            continue
        point = rng.choice(used) if used and rng.random() < 0.2 else next(points)
        used.append(point)
        operations.append(["insert", label, point])
        size += 1
    return {"operations": operations}


def _definition(dimension: int) -> str:
    return (
        f"A K-D heap here is a binary min-heap of {dimension}-dimensional points whose priority is the "
        "squared Euclidean norm (the sum of the squares of the coordinates); the point with the "
        "smallest priority is at the root. It is stored in an array: the children of index i are at "
        "indices 2i+1 and 2i+2."
    )


RULES = (
    "Priority = squared Euclidean norm, smallest at the root. Insert appends the point at the end and "
    "sifts it up: it swaps with its parent while its priority is strictly smaller than the parent's. "
    "Extract removes the root, moves the last point of the array to the root and sifts it down: it "
    "swaps with the child of smaller priority (the LEFT child when both children have equal priority) "
    "while that child's priority is strictly smaller than its own."
)


def _describe(op: list) -> str:
    return f"insert {format_point(op[1])}" if op[0] == "insert" else "extract the root"


def prompt_labelled(spec: dict) -> PromptParts:
    dimension = _dimension(spec)
    steps = "; ".join(f"{n}. insert item {op[1]} at {format_point(op[2])}" if op[0] == "insert" else
                      f"{n}. extract the root" for n, op in enumerate(spec["operations"], 1))
    return PromptParts(
        definition=_definition(dimension) + " Each item is a label with a point; several labels may share a point.",
        rules=RULES + " An item's priority is the squared norm of its point.",
        name=f"{dimension}-dimensional K-D heap of labelled points (min-heap by squared norm)",
        setup=f"Start from an empty K-D heap and perform these operations in order: {steps}.",
        question="What are the labels of the items in the heap array after all the operations?",
        answer_format="a list of integer labels: the heap array from index 0, e.g. [3, 0, 5]",
    )


def prompt_compound(spec: dict) -> PromptParts:
    dimension = _dimension(spec)
    steps = "; ".join(f"{n}. {_describe(op)}" for n, op in enumerate(spec["operations"], 1))
    return PromptParts(
        definition=_definition(dimension),
        rules=RULES,
        name=f"{dimension}-dimensional K-D heap (min-heap by squared norm)",
        setup=f"Start from an empty K-D heap and perform these operations in order: {steps}.",
        question="What is the heap array after all the operations?",
        answer_format="a list of points, each a list of coordinates: the heap array from index 0, "
                      "e.g. [[1, 2], [3, 4]]",
    )


register(Task(category="Spatial", structure="kd_heap", name="compound", answer_type="list[list[int]]",
              generate=generate_compound, solve=solve_compound, prompt=prompt_compound,
              doc="Spec {operations: [insert point | extract]} from an empty heap: the final heap array. "
                  "Min-heap on squared Euclidean norm; strict comparisons; equal children: left."))
register(Task(category="Spatial", structure="kd_heap", name="labelled_compound", answer_type="list[int]",
              generate=generate_labelled, solve=solve_labelled, prompt=prompt_labelled, suite="extended",
              doc="Spec {operations: [insert label point | extract]} from an empty heap: the labels of the final heap "
                  "array (DSR-Bench's K-D heap items: several labels may share one point)."))
