"""Binary heap (Hierarchical): an array-backed complete binary tree.

Rules (as in DSR-Bench's released answers, and stated in every prompt):
the children of index i are 2i+1 and 2i+2; heapify is bottom-up (sift down every index from
n//2 - 1 down to 0); sifting down swaps with the better child, the LEFT one when both children are
equal, and only while that child is strictly better than the parent; an inserted value is appended
and sifts up while strictly better than its parent; extract removes the root, moves the last
element to the root and sifts it down. "Better" means smaller in a min-heap, larger in a max-heap.

Tasks
- heap/heapify: spec {"kind": "min"|"max", "values": [int, ...]}; answer the array after
  bottom-up heapify (list[int]). length = number of values.
- heap/compound: spec {"kind": "min"|"max", "values": [int, ...], "operations": [["insert", x] |
  ["extract"], ...]}; the values are heapified bottom-up first, then the operations run in order;
  answer the final array (list[int]). Extracting from an empty heap is an invalid spec (SpecError).
  length = number of operations (the initial array has length // 2 values).
"""
from __future__ import annotations

import random
from typing import Any, Callable

from transforms.bench.registry import (VALUE_RANGE, PromptParts, SpecError, Task, field, int_list_field,
                                      operations_field, register)

Before = Callable[[Any, Any], bool]   # before(a, b): a belongs strictly above b


def sift_down(array: list, index: int, before: Before) -> None:
    """Move array[index] down until no child is strictly better; equal children: take the left."""
    size = len(array)
    while 2 * index + 1 < size:
        child = 2 * index + 1
        if child + 1 < size and before(array[child + 1], array[child]):
            child += 1
        if not before(array[child], array[index]):
            return
        array[index], array[child] = array[child], array[index]
        index = child


def sift_up(array: list, index: int, before: Before) -> None:
    """Move array[index] up while it is strictly better than its parent."""
    while index > 0:
        parent = (index - 1) // 2
        if not before(array[index], array[parent]):
            return
        array[index], array[parent] = array[parent], array[index]
        index = parent


def heapify(values: list, before: Before) -> list:
    array = list(values)
    for index in range(len(array) // 2 - 1, -1, -1):
        sift_down(array, index, before)
    return array


def heap_insert(array: list, item: Any, before: Before) -> None:
    array.append(item)
    sift_up(array, len(array) - 1, before)


def heap_extract(array: list, before: Before) -> Any:
    root = array[0]
    last = array.pop()
    if array:
        array[0] = last
        sift_down(array, 0, before)
    return root


def _before_for(kind: str) -> Before:
    return (lambda a, b: a < b) if kind == "min" else (lambda a, b: a > b)


def _kind(spec: dict) -> str:
    kind = field(spec, "kind")
    if kind not in ("min", "max"):
        raise SpecError(f"kind must be \"min\" or \"max\", got {kind!r}")
    return kind


def solve_heapify(spec: dict) -> list[int]:
    return heapify(int_list_field(spec, "values"), _before_for(_kind(spec)))


def solve_compound(spec: dict) -> list[int]:
    before = _before_for(_kind(spec))
    array = heapify(int_list_field(spec, "values"), before)
    for i, op in enumerate(operations_field(spec, {"insert": (int,), "extract": ()})):
        if op[0] == "insert":
            heap_insert(array, op[1], before)
        elif not array:
            raise SpecError(f"operations[{i}] extracts from an empty heap")
        else:
            heap_extract(array, before)
    return array


def _values(rng: random.Random, count: int) -> list[int]:
    return [rng.randint(*VALUE_RANGE) for _ in range(count)]


def generate_heapify(rng: random.Random, length: int) -> dict:
    return {"kind": rng.choice(["min", "max"]), "values": _values(rng, length)}


def generate_compound(rng: random.Random, length: int) -> dict:
    kind = rng.choice(["min", "max"])
    values = _values(rng, length // 2)
    size, operations = len(values), []
    for _ in range(length):
        if size and rng.random() < 0.4:
            operations.append(["extract"])
            size -= 1
        else:
            operations.append(["insert", rng.randint(*VALUE_RANGE)])
            size += 1
    return {"kind": kind, "values": values, "operations": operations}


def _definition(kind: str) -> str:
    order = "less than or equal to" if kind == "min" else "greater than or equal to"
    return (f"A binary {kind}-heap is a complete binary tree stored in an array: the children of index i "
            f"are at indices 2i+1 and 2i+2, and every parent is {order} its children.")


def _rules(kind: str) -> str:
    better = "smaller" if kind == "min" else "larger"
    return (
        "Heapify is bottom-up: for every index from n//2 - 1 down to 0, sift the element down. "
        f"Sifting down compares an element with its children and swaps it with the {better} child "
        "(with the LEFT child when both children are equal), but only while that child is strictly "
        f"{better} than the element. Insert appends the value at the end of the array and sifts it up: "
        f"it swaps with its parent while it is strictly {better} than the parent. Extract removes the "
        "root, moves the last element of the array to the root and sifts it down."
    )


def _numbers(values: list[int]) -> str:
    return "[" + ", ".join(map(str, values)) + "]"


def prompt_heapify(spec: dict) -> PromptParts:
    return PromptParts(
        definition=_definition(spec["kind"]),
        rules=_rules(spec["kind"]),
        name=f"binary {spec['kind']}-heap",
        setup=f"Start with the array {_numbers(spec['values'])} and heapify it bottom-up into a "
              f"{spec['kind']}-heap.",
        question="What is the array after heapify?",
        answer_format="a list of integers: the heap array from index 0",
    )


def _describe_operation(op: list) -> str:
    return f"insert {op[1]}" if op[0] == "insert" else "extract the root"


def prompt_compound(spec: dict) -> PromptParts:
    steps = "; ".join(f"{n}. {_describe_operation(op)}" for n, op in enumerate(spec["operations"], 1))
    return PromptParts(
        definition=_definition(spec["kind"]),
        rules=_rules(spec["kind"]),
        name=f"binary {spec['kind']}-heap",
        setup=f"Start with the array {_numbers(spec['values'])}, heapify it bottom-up into a "
              f"{spec['kind']}-heap, then perform these operations in order: {steps}.",
        question="What is the heap array after all the operations?",
        answer_format="a list of integers: the heap array from index 0",
    )


CATEGORY = "Hierarchical"
_DOC_RULES = ("Bottom-up heapify; sift-down swaps with the strictly better child, the left one on ties; "
          "insert appends and sifts up while strictly better than the parent; extract moves the last "
          "element to the root and sifts it down.")

register(Task(category=CATEGORY, structure="heap", name="heapify", answer_type="list[int]",
              generate=generate_heapify, solve=solve_heapify, prompt=prompt_heapify,
              doc="Spec {kind, values}: the array after bottom-up heapify. " + _DOC_RULES))
register(Task(category=CATEGORY, structure="heap", name="compound", answer_type="list[int]",
              generate=generate_compound, solve=solve_compound, prompt=prompt_compound,
              doc="Spec {kind, values, operations: [insert x | extract]}: values heapified first, "
                  "answer the final array. " + _DOC_RULES))
