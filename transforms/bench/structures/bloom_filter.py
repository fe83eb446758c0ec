"""Counting Bloom filter (Hybrid): a compound sequence of insert and delete; answer the counters.

Rules (as in DSR-Bench's released answers, and stated in the prompt): m counters, all 0 at first;
k hash functions; for a value x, h is computed over the characters of str(x) (its decimal digits)
as h = h * 131 + ord(c), starting from h = 0, and hash i (i = 0..k-1) is (h + i) mod m. Insert
adds 1 to each of the k counters; delete subtracts 1 from each of them, but only when all k are
above 0 (the filter says the value may be present); otherwise delete changes nothing.
DSR-Bench's own code deletes differently: it subtracts 1 from each of the k counters that is above
0 and leaves counters at 0 alone (clamped at 0). No released instance tells the two rules apart,
but a spec may ask for DSR-Bench's rule with "delete_rule": "clamped" (task
bloom_filter/compound_clamped generates such specs); every prompt states the rule its answer follows.

Spec: {"m": int >= 1, "k": int in 1..m, "operations": [["insert", int >= 0] | ["delete", int >= 0]],
"delete_rule": "all_positive" (default) | "clamped"} -> list[int] (the m counters). length =
number of operations.
"""
from __future__ import annotations

import random

from transforms.bench.registry import (VALUE_RANGE, PromptParts, SpecError, Task, check_int, int_field, operations_field,
                                       register)

DEFINITION = ("A counting Bloom filter is an array of m counters with k hash functions: inserting a value increments "
              "the k counters its hashes select, deleting decrements them, and a value may be present only if all "
              "its k counters are above zero.")
HASH_RULE = ("For a value x, compute h over the characters c of the decimal text of x: start with h = 0 and set "
         "h = h * 131 + ord(c) for each character (ord('0') = 48, ..., ord('9') = 57). Hash i, for i = 0 to k-1, "
         "is (h + i) mod m. Insert adds 1 to each hashed counter. ")
DELETE_RULES = {
    "all_positive": "Delete subtracts 1 from each hashed counter only if all of them are above 0; otherwise it "
                    "changes nothing.",
    "clamped": "Delete subtracts 1 from each hashed counter that is above 0; a hashed counter at 0 stays 0 (the "
               "other hashed counters are still decremented).",
}
REPORT_RULE = " Report all m counters, counter 0 first."


def positions(value: int, m: int, k: int) -> list[int]:
    h = 0
    for char in str(value):
        h = h * 131 + ord(char)
    return [(h + i) % m for i in range(k)]


def solve(spec: dict) -> list[int]:
    m = int_field(spec, "m", 1, 10_000)
    k = int_field(spec, "k", 1, m)
    rule = delete_rule(spec)
    counters = [0] * m
    for i, op in enumerate(operations_field(spec, {"insert": (int,), "delete": (int,)})):
        hashed = positions(check_int(op[1], f"operations[{i}] value", 0), m, k)
        if op[0] == "insert":
            for p in hashed:
                counters[p] += 1
        elif rule == "clamped":
            for p in hashed:
                counters[p] = max(0, counters[p] - 1)
        elif all(counters[p] > 0 for p in hashed):
            for p in hashed:
                counters[p] -= 1
    return counters


def delete_rule(spec: dict) -> str:
    rule = spec.get("delete_rule", "all_positive")
    if rule not in DELETE_RULES:
        raise SpecError(f"delete_rule must be one of {', '.join(DELETE_RULES)}, got {rule!r}")
    return rule


def generate(rng: random.Random, length: int) -> dict:
    inserted: list[int] = []
    ops: list[list] = []
    for _ in range(length):
        roll = rng.random()
        if inserted and roll < 0.25:
            value = rng.choice(inserted)
            inserted.remove(value)
            ops.append(["delete", value])
        elif roll < 0.32:
            ops.append(["delete", rng.randint(*VALUE_RANGE)])  # maybe never inserted: the rule decides
        else:
            inserted.append(rng.randint(*VALUE_RANGE))
            ops.append(["insert", inserted[-1]])
    return {"m": rng.randint(8, 16), "k": rng.randint(2, 4), "operations": ops}


def generate_clamped(rng: random.Random, length: int) -> dict:
    return {**generate(rng, length), "delete_rule": "clamped"}


def prompt(spec: dict) -> PromptParts:
    steps = "; ".join(f"{n}. {op[0]} {op[1]}" for n, op in enumerate(spec["operations"], 1))
    return PromptParts(definition=DEFINITION, name="counting Bloom filter",
                       setup=f"The counting Bloom filter has m = {spec['m']} counters and k = {spec['k']} hash functions, "
                             f"all counters 0 at first. Apply these operations in order: {steps}.",
                       question="What are the counters after all operations?",
                       answer_format=f"a list of {spec['m']} integers (counter 0 first)",
                       rules=HASH_RULE + DELETE_RULES[spec.get("delete_rule", "all_positive")] + REPORT_RULE)


register(Task(category="Hybrid", structure="bloom_filter", name="compound", answer_type="list[int]",
              generate=generate, solve=solve, prompt=prompt, doc=__doc__))
register(Task(category="Hybrid", structure="bloom_filter", name="compound_clamped", answer_type="list[int]",
              generate=generate_clamped, solve=solve, prompt=prompt, suite="extended",
              doc="bloom_filter/compound with DSR-Bench's delete rule (\"delete_rule\": \"clamped\"): each hashed "
                  "counter above 0 is decremented, counters at 0 stay 0; the prompt states it."))
