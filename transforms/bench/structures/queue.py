"""Queue (Temporal): a compound sequence of enqueue and dequeue.

Rules (stated in the prompt): first in, first out; dequeue removes the front element; the
generator never dequeues an empty queue and a spec that does is rejected. The answer lists the
final contents from front to back.

Spec: {"initial": [int] (front to back), "operations": [["enqueue", int] | ["dequeue"]]} -> list[int].
length = number of operations; the queue starts with length // 3 values.
"""
from __future__ import annotations

import collections
import random

from transforms.bench.registry import VALUE_RANGE, PromptParts, SpecError, Task, int_list_field, operations_field, register
from transforms.bench.structures.stack import describe_operations

DEFINITION = ("A queue is a first-in, first-out collection: enqueue adds a value at the back, dequeue removes "
              "the value at the front.")
RULES = "Dequeue always removes the earliest enqueued value still present. Report the contents from front to back."


def solve(spec: dict) -> list:
    queue = collections.deque(int_list_field(spec, "initial"))
    for i, op in enumerate(operations_field(spec, {"enqueue": (int,), "dequeue": ()})):
        if op[0] == "enqueue":
            queue.append(op[1])
        elif not queue:
            raise SpecError(f"operations[{i}] dequeues an empty queue")
        else:
            queue.popleft()
    return list(queue)


def generate(rng: random.Random, length: int) -> dict:
    initial = [rng.randint(*VALUE_RANGE) for _ in range(length // 3)]
    size, ops = len(initial), []
    for _ in range(length):
        if size and rng.random() < 0.45:
            ops.append(["dequeue"])
            size -= 1
        else:
            ops.append(["enqueue", rng.randint(*VALUE_RANGE)])
            size += 1
    return {"initial": initial, "operations": ops}


def prompt(spec: dict) -> PromptParts:
    start = f"The queue initially holds {spec['initial']} (front to back)." if spec["initial"] else "The queue is initially empty."
    return PromptParts(definition=DEFINITION, name="queue",
                       setup=f"{start} Apply these operations in order: {describe_operations(spec['operations'])}.",
                       question="What does the queue hold after all operations, from front to back?",
                       answer_format="a list of integers (front to back; [] if empty)", rules=RULES)


register(Task(category="Temporal", structure="queue", name="compound", answer_type="list[int]",
              generate=generate, solve=solve, prompt=prompt, doc=__doc__))
