"""Hash map (Associative): a compound sequence of put and delete with separate chaining.

Rules (as in DSR-Bench's released answers, and stated in the prompt): the bucket of a key is
key mod `buckets`; each bucket is a chain in insertion order; putting a new key appends it to the
end of its chain; putting a present key updates its value in place (its position is kept);
deleting removes the key from its chain, and deleting an absent key does nothing. The answer
lists every bucket, 0 first, as a list of [key, value] pairs in chain order.

Spec: {"buckets": int >= 1, "operations": [["put", key, value] | ["delete", key]]}
-> json: [[[key, value], ...], ...] with one list per bucket. length = number of operations.
"""
from __future__ import annotations

import random

from transforms.bench.registry import VALUE_RANGE, PromptParts, Task, int_field, operations_field, register

DEFINITION = ("A hash map stores key-value pairs in an array of buckets; a hash function picks each key's bucket, "
              "and keys that share a bucket are kept in a chain (a list) in that bucket.")
RULES = ("The bucket of key k is k mod the number of buckets. A new key is appended to the end of its bucket's "
         "chain; putting a key that is already present replaces its value and keeps its position; deleting removes "
         "the key, and deleting an absent key changes nothing. Report every bucket from bucket 0 on, each as a list of "
         "[key, value] pairs in chain order.")


def solve(spec: dict) -> list[list[list[int]]]:
    buckets = [[] for _ in range(int_field(spec, "buckets", 1, 10_000))]
    for op in operations_field(spec, {"put": (int, int), "delete": (int,)}):
        chain = buckets[op[1] % len(buckets)]
        position = next((i for i, (key, _) in enumerate(chain) if key == op[1]), None)
        if op[0] == "delete":
            if position is not None:
                del chain[position]
        elif position is None:
            chain.append([op[1], op[2]])
        else:
            chain[position][1] = op[2]
    return buckets


def generate(rng: random.Random, length: int) -> dict:
    keys: list[int] = []
    ops: list[list] = []
    for _ in range(length):
        roll = rng.random()
        if keys and roll < 0.2:
            key = rng.choice(keys)
            keys.remove(key)
            ops.append(["delete", key])
        elif keys and roll < 0.4:
            ops.append(["put", rng.choice(keys), rng.randint(*VALUE_RANGE)])
        else:
            key = rng.randint(*VALUE_RANGE)
            if key not in keys:
                keys.append(key)
            ops.append(["put", key, rng.randint(*VALUE_RANGE)])
    return {"buckets": rng.randint(5, 11), "operations": ops}


def _describe(op: list) -> str:
    return f"put key {op[1]} with value {op[2]}" if op[0] == "put" else f"delete key {op[1]}"


def prompt(spec: dict) -> PromptParts:
    steps = "; ".join(f"{n}. {_describe(op)}" for n, op in enumerate(spec["operations"], 1))
    return PromptParts(definition=DEFINITION, name="hash map",
                       setup=f"The hash map has {spec['buckets']} buckets and is initially empty. "
                             f"Apply these operations in order: {steps}.",
                       question="What does each bucket hold after all operations?",
                       answer_format=(f"a list of {spec['buckets']} buckets (bucket 0 first), each a list of "
                                      "[key, value] pairs of integers in chain order"), rules=RULES)


register(Task(category="Associative", structure="hash_map", name="compound", answer_type="json",
              generate=generate, solve=solve, prompt=prompt, doc=__doc__))
