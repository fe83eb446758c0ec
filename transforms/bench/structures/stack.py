"""Stack (Temporal): a compound sequence of push and pop.

Rules (stated in the prompt): last in, first out; pop removes the top element; the generator never
pops an empty stack and a spec that does is rejected. The answer lists the final contents from
bottom to top.

Spec: {"initial": [int] (bottom to top), "operations": [["push", int] | ["pop"]]} -> list[int].
length = number of operations; the stack starts with length // 3 values.
"""
from __future__ import annotations

import random

from transforms.bench.registry import VALUE_RANGE, PromptParts, SpecError, Task, int_list_field, operations_field, register

DEFINITION = ("A stack is a last-in, first-out collection: push puts a value on top, pop removes the value "
              "currently on top.")
RULES = "Pop always removes the most recently pushed value still present. Report the contents from bottom to top."


def solve(spec: dict) -> list[int]:
    stack = list(int_list_field(spec, "initial"))
    for i, op in enumerate(operations_field(spec, {"push": (int,), "pop": ()})):
        if op[0] == "push":
            stack.append(op[1])
        elif not stack:
            raise SpecError(f"operations[{i}] pops an empty stack")
        else:
            stack.pop()
    return stack


def generate(rng: random.Random, length: int) -> dict:
    initial = [rng.randint(*VALUE_RANGE) for _ in range(length // 3)]
    size, ops = len(initial), []
    for _ in range(length):
        if size and rng.random() < 0.45:
            ops.append(["pop"])
            size -= 1
        else:
            ops.append(["push", rng.randint(*VALUE_RANGE)])
            size += 1
    return {"initial": initial, "operations": ops}


def describe_operations(ops: list[list]) -> str:
    return "; ".join(f"{n}. {op[0]}{' ' + str(op[1]) if len(op) > 1 else ''}" for n, op in enumerate(ops, 1))


def prompt(spec: dict) -> PromptParts:
    start = f"The stack initially holds {spec['initial']} (bottom to top)." if spec["initial"] else "The stack is initially empty."
    return PromptParts(definition=DEFINITION, name="stack",
                       setup=f"{start} Apply these operations in order: {describe_operations(spec['operations'])}.",
                       question="What does the stack hold after all operations, from bottom to top?",
                       answer_format="a list of integers (bottom to top; [] if empty)", rules=RULES)


register(Task(category="Temporal", structure="stack", name="compound", answer_type="list[int]",
              generate=generate, solve=solve, prompt=prompt, doc=__doc__))
