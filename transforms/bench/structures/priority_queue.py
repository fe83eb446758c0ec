"""Priority queue (Temporal): insert, delete (the maximum), increase and decrease key.

Rules (as in DSR-Bench's released answers, and stated in the prompt): every element is a
(value, priority) pair with a unique value; delete removes the element with the largest
(priority, value), so among equal priorities the larger value goes first; increase_key and
decrease_key set the priority of the element with that value to a larger or smaller priority;
a key change to the priority the element already has changes nothing (DSR-Bench's release has
such no-ops; a prompt whose operations include one says so). The answer lists the remaining elements as [value, priority] in the
order delete would remove them.

Spec: {"initial": [[value, priority]], "operations": [["insert", value, priority] | ["delete"] |
["increase_key", value, priority] | ["decrease_key", value, priority]]} -> list[list[int]].
Values and priorities are integers 0-100. length = number of operations; the queue starts with
length // 3 elements.
"""
from __future__ import annotations

import random

from transforms.bench.registry import (VALUE_RANGE, PromptParts, SpecError, Task, check_int, field,
                                       operations_field, register)

DEFINITION = ("A priority queue holds elements that each have a value and a priority; delete removes the "
              "element of highest priority, and a key change updates the priority of an element already present.")
RULES = ("Values are unique. Delete removes the element with the largest priority; if several share it, the one "
         "with the largest value. increase_key/decrease_key give the element with that value a new priority. Report "
         "the remaining elements as [value, priority] pairs in the order delete would remove them.")
ARITIES = {"insert": (int, int), "delete": (), "increase_key": (int, int), "decrease_key": (int, int)}


def _initial(spec: dict) -> dict[int, int]:
    pairs = field(spec, "initial")
    if not isinstance(pairs, list):
        raise SpecError("initial must be a list of [value, priority] pairs")
    elements: dict[int, int] = {}
    for i, pair in enumerate(pairs):
        if not isinstance(pair, list) or len(pair) != 2:
            raise SpecError(f"initial[{i}] must be a [value, priority] pair, got {pair!r}")
        value, priority = check_int(pair[0], f"initial[{i}] value"), check_int(pair[1], f"initial[{i}] priority")
        if value in elements:
            raise SpecError(f"initial[{i}]: value {value} appears twice (values must be unique)")
        elements[value] = priority
    return elements


def _delete_order(elements: dict[int, int]) -> list[list[int]]:
    return [[v, p] for p, v in sorted(((p, v) for v, p in elements.items()), reverse=True)]


def solve(spec: dict) -> list[list[int]]:
    elements = _initial(spec)
    for i, op in enumerate(operations_field(spec, ARITIES)):
        name = op[0]
        if name == "delete":
            if not elements:
                raise SpecError(f"operations[{i}] deletes from an empty priority queue")
            value = max(elements, key=lambda v: (elements[v], v))
            del elements[value]
        elif name == "insert":
            if op[1] in elements:
                raise SpecError(f"operations[{i}] inserts value {op[1]}, which is already present")
            elements[op[1]] = op[2]
        else:
            if op[1] not in elements:
                raise SpecError(f"operations[{i}] changes the key of value {op[1]}, which is not present")
            if op[2] != elements[op[1]] and (op[2] > elements[op[1]]) != (name == "increase_key"):
                raise SpecError(f"operations[{i}]: {name} to {op[2]} from priority {elements[op[1]]} goes the wrong way")
            elements[op[1]] = op[2]
    return _delete_order(elements)


def _priority(rng: random.Random, elements: dict[int, int]) -> int:
    """Priorities repeat often enough for the tie rule to matter."""
    if elements and rng.random() < 0.3:
        return elements[rng.choice(sorted(elements))]
    return rng.randint(*VALUE_RANGE)


def generate(rng: random.Random, length: int, same_priority: float = 0.0) -> dict:
    """`same_priority`: the share of key changes that keep the element's priority (a no-op)."""
    values = rng.sample(range(VALUE_RANGE[0], VALUE_RANGE[1] + 1), length // 3 + length)
    elements: dict[int, int] = {}
    for value in values[:length // 3]:
        elements[value] = _priority(rng, elements)
    initial = [[v, p] for v, p in elements.items()]
    fresh, ops = iter(values[length // 3:]), []
    for _ in range(length):
        roll = rng.random()
        if elements and roll < 0.3:
            value = max(elements, key=lambda v: (elements[v], v))
            del elements[value]
            ops.append(["delete"])
            continue
        changeable = sorted(v for v in elements if 0 < elements[v] < VALUE_RANGE[1])
        if changeable and roll < 0.6:
            value = rng.choice(changeable)
            if same_priority and rng.random() < same_priority:
                priority = elements[value]
                ops.append(["increase_key" if roll < 0.45 else "decrease_key", value, priority])
            elif roll < 0.45:
                priority = rng.randint(elements[value] + 1, VALUE_RANGE[1])
                ops.append(["increase_key", value, priority])
            else:
                priority = rng.randint(VALUE_RANGE[0], elements[value] - 1)
                ops.append(["decrease_key", value, priority])
            elements[value] = priority
            continue
        value = next(fresh)
        elements[value] = _priority(rng, elements)
        ops.append(["insert", value, elements[value]])
    return {"initial": initial, "operations": ops}


def _describe(op: list) -> str:
    if op[0] == "delete":
        return "delete"
    if op[0] == "insert":
        return f"insert value {op[1]} with priority {op[2]}"
    return f"{op[0]} of value {op[1]} to priority {op[2]}"


def prompt(spec: dict) -> PromptParts:
    start = ("The priority queue initially holds (value, priority): "
             + ", ".join(f"({v}, {p})" for v, p in spec["initial"]) + "." if spec["initial"]
             else "The priority queue is initially empty.")
    steps = "; ".join(f"{n}. {_describe(op)}" for n, op in enumerate(spec["operations"], 1))
    rules = RULES + (NO_OP_RULE if _has_no_op(spec) else "")
    return PromptParts(definition=DEFINITION, name="priority queue", setup=f"{start} Apply these operations in order: {steps}.",
                       question="Which elements remain after all operations, in the order delete would remove them?",
                       answer_format="a list of [value, priority] pairs of integers ([] if empty)", rules=rules)


def _has_no_op(spec: dict) -> bool:
    """Whether a key change sets the priority the element already has (replayed on the spec)."""
    elements = {v: p for v, p in spec["initial"]}
    for op in spec["operations"]:
        if op[0] == "delete":
            elements.pop(max(elements, key=lambda v: (elements[v], v)), None)
        elif op[0] != "insert" and elements.get(op[1]) == op[2]:
            return True
        else:
            elements[op[1]] = op[2]
    return False


NO_OP_RULE = (" A key change to the priority the element already has (increase_key or decrease_key to its current "
              "priority) changes nothing.")

register(Task(category="Temporal", structure="priority_queue", name="compound", answer_type="list[list[int]]",
              generate=generate, solve=solve, prompt=prompt, doc=__doc__))
register(Task(category="Temporal", structure="priority_queue", name="compound_no_op", answer_type="list[list[int]]",
              generate=lambda rng, length: generate(rng, length, same_priority=0.3), solve=solve, prompt=prompt,
              suite="extended",
              doc="priority_queue/compound with key changes to the current priority (no-ops, as in DSR-Bench's "
                  "release); the prompt states the no-op rule."))
