'''Code probe: a short Python program implementing a structure; what does it print?

Each task shows one fixed class (below) followed by the calls of the spec and a final print, and
asks for the printed list. The programs expose implementation details an abstract description
hides (stale slots, wrap-around, tombstones), so the model must trace the code, not recall the
textbook structure. `solve` is a plain re-implementation of the same logic; the tests run the
rendered programs with Python and compare.

- stack/code_array_stack: {"capacity": int, "operations": [["push", int] | ["pop"]]} -> list[int],
  the printed `s.items` (a fixed array; pop only moves `top`, so popped values stay; a push on a
  full stack is ignored). length = number of operations.
- queue/code_ring_buffer: {"capacity": int, "operations": [["enqueue", int] | ["dequeue"]]}
  -> list[int], the printed `q.buf` (a circular buffer of -1s; enqueue on a full buffer overwrites
  the oldest value; dequeue on an empty one does nothing). length = number of operations.
- hash_map/code_linear_probing: {"size": int, "operations": [["add", int >= 0] | ["remove", int >= 0]]}
  -> list[int], the printed `t.slots` (open addressing from key % size, step 1; -1 empty, -2 a
  removed key's tombstone, which add reuses). The spec must leave an empty slot for every probe:
  fewer adds than slots. length = number of operations.
'''
from __future__ import annotations

import random

from transforms.bench.registry import (VALUE_RANGE, PromptParts, SpecError, Task, check_int, int_field,
                                       operations_field, register)

ARRAY_STACK = '''class Stack:
    def __init__(self, capacity):
        self.items = [0] * capacity
        self.top = 0

    def push(self, x):
        if self.top == len(self.items):
            return
        self.items[self.top] = x
        self.top += 1

    def pop(self):
        if self.top == 0:
            return None
        self.top -= 1
        return self.items[self.top]


s = Stack({capacity})'''

RING_BUFFER = '''class RingQueue:
    def __init__(self, capacity):
        self.buf = [-1] * capacity
        self.head = 0
        self.size = 0

    def enqueue(self, x):
        if self.size == len(self.buf):
            self.head = (self.head + 1) % len(self.buf)
            self.size -= 1
        self.buf[(self.head + self.size) % len(self.buf)] = x
        self.size += 1

    def dequeue(self):
        if self.size == 0:
            return None
        x = self.buf[self.head]
        self.head = (self.head + 1) % len(self.buf)
        self.size -= 1
        return x


q = RingQueue({capacity})'''

LINEAR_PROBING = '''EMPTY, DELETED = -1, -2


class ProbingSet:
    def __init__(self, size):
        self.slots = [EMPTY] * size

    def add(self, key):
        i = key % len(self.slots)
        while self.slots[i] not in (EMPTY, DELETED, key):
            i = (i + 1) % len(self.slots)
        self.slots[i] = key

    def remove(self, key):
        i = key % len(self.slots)
        while self.slots[i] != EMPTY:
            if self.slots[i] == key:
                self.slots[i] = DELETED
                return
            i = (i + 1) % len(self.slots)


t = ProbingSet({size})'''


def run_array_stack(spec: dict) -> list[int]:
    items, top = [0] * int_field(spec, "capacity", 1, 1000), 0
    for op in operations_field(spec, {"push": (int,), "pop": ()}):
        if op[0] == "push" and top < len(items):
            items[top] = op[1]
            top += 1
        elif op[0] == "pop" and top > 0:
            top -= 1
    return items


def run_ring_buffer(spec: dict) -> list[int]:
    buf, head, size = [-1] * int_field(spec, "capacity", 1, 1000), 0, 0
    for op in operations_field(spec, {"enqueue": (int,), "dequeue": ()}):
        if op[0] == "enqueue":
            if size == len(buf):
                head, size = (head + 1) % len(buf), size - 1
            buf[(head + size) % len(buf)] = op[1]
            size += 1
        elif size:
            head, size = (head + 1) % len(buf), size - 1
    return buf


def run_linear_probing(spec: dict) -> list[int]:
    slots = [-1] * int_field(spec, "size", 1, 1000)
    for i, op in enumerate(operations_field(spec, {"add": (int,), "remove": (int,)})):
        key = check_int(op[1], f"operations[{i}] key", 0)
        j = key % len(slots)
        for _ in range(len(slots)):
            if op[0] == "add" and slots[j] in (-1, -2, key):
                slots[j] = key
                break
            if op[0] == "remove" and slots[j] in (-1, key):
                if slots[j] == key:
                    slots[j] = -2
                break
            j = (j + 1) % len(slots)
        else:
            raise SpecError(f"operations[{i}] probes every slot without stopping: the program would loop forever")
    return slots


def _stack_ops(rng: random.Random, length: int, push: str, pop: str) -> list[list]:
    return [[push, rng.randint(*VALUE_RANGE)] if rng.random() < 0.6 else [pop] for _ in range(length)]


def generate_array_stack(rng: random.Random, length: int) -> dict:
    return {"capacity": rng.randint(3, 6), "operations": _stack_ops(rng, length, "push", "pop")}


def generate_ring_buffer(rng: random.Random, length: int) -> dict:
    return {"capacity": rng.randint(3, 6), "operations": _stack_ops(rng, length, "enqueue", "dequeue")}


def generate_linear_probing(rng: random.Random, length: int) -> dict:
    """About 70% adds (always fewer adds than slots, so every probe meets an empty slot), first op an add."""
    adds = max(1, round(length * 0.7))
    kinds = ["add"] + rng.sample(["add"] * (adds - 1) + ["remove"] * (length - adds), length - 1)
    keys: list[int] = []
    ops: list[list] = []
    for kind in kinds:
        if kind == "add":
            keys.append(rng.randint(*VALUE_RANGE))
            ops.append(["add", keys[-1]])
        else:
            ops.append(["remove", rng.choice(keys) if rng.random() < 0.8 else rng.randint(*VALUE_RANGE)])
    return {"size": adds + rng.randint(1, 3), "operations": ops}


def program(header: str, variable: str, spec: dict, printed: str) -> str:
    calls = "\n".join(f"{variable}.{op[0]}({', '.join(map(str, op[1:]))})" for op in spec["operations"])
    return f"{header.format(**spec)}\n{calls}\nprint({variable}.{printed})\n"


def _prompt(structure: str, header: str, variable: str, printed: str):
    def prompt(spec: dict) -> PromptParts:
        return PromptParts(
            definition=f"The following Python program implements a {structure}. Read it carefully: the answer is what this exact code does.",
            name=structure, setup=f"```python\n{program(header, variable, spec, printed)}```",
            question=f"What does the program print (the final value of {variable}.{printed})?",
            answer_format="a list of integers, exactly as printed",
            rules="Trace the code as written (Python 3 semantics); do not assume textbook behaviour where the code differs.")
    return prompt


for _structure, _category, _name, _gen, _solve, _header, _var, _printed, _words in (
    ("stack", "Temporal", "code_array_stack", generate_array_stack, run_array_stack, ARRAY_STACK, "s", "items", "stack"),
    ("queue", "Temporal", "code_ring_buffer", generate_ring_buffer, run_ring_buffer, RING_BUFFER, "q", "buf", "queue"),
    ("hash_map", "Associative", "code_linear_probing", generate_linear_probing, run_linear_probing, LINEAR_PROBING, "t",
     "slots", "hash set with linear probing"),
):
    register(Task(category=_category, structure=_structure, name=_name, answer_type="list[int]", generate=_gen,
                  solve=_solve, prompt=_prompt(_words, _header, _var, _printed), doc=__doc__, suite="code"))
