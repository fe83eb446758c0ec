"""LRU cache (Hybrid): a sequence of accesses, and a get/put workload.

Rules (stated in the prompt): the cache holds at most `capacity` keys; using a key makes it the
most recently used; adding a key to a full cache first evicts the least recently used key.

Specs:
    lru_cache/access   {"capacity": int >= 1, "accesses": [int]} -> list[int]: the cached keys
                       after all accesses, least recently used first. An access of a cached key
                       is a hit (it becomes most recent); otherwise the key is added.
                       length = number of accesses.
    lru_cache/compound {"capacity": int >= 1, "operations": [["put", key, value] | ["get", key]]}
                       -> list[int]: the result of every get in order (the value, or -1 when the
                       key is not cached). get of a cached key and put of any key make that key
                       most recent; put of a cached key replaces its value and evicts nothing.
                       length = number of operations. Added to the seed's task list because its
                       answer is the stream of results during the run, not the final state.
"""
from __future__ import annotations

import random

from transforms.bench.registry import VALUE_RANGE, PromptParts, Task, int_field, int_list_field, operations_field, register

DEFINITION = ("An LRU (least recently used) cache holds a limited number of keys; when a new key arrives and the "
              "cache is full, the key that was used least recently is evicted.")
ACCESS_RULES = ("Accessing a cached key makes it the most recently used. Accessing a key that is not cached adds it as "
                "the most recently used, first evicting the least recently used key if the cache is full. Report the "
                "cached keys from least to most recently used.")
COMPOUND_RULES = ("get k returns k's value and makes k the most recently used, or returns -1 if k is not cached. put k v "
                  "stores v for k and makes k the most recently used; if k is new and the cache is full, the least "
                  "recently used key is evicted first. Report the result of every get, in order.")


def solve_access(spec: dict) -> list[int]:
    capacity = int_field(spec, "capacity", 1)
    cache: list[int] = []  # least recently used first
    for key in int_list_field(spec, "accesses"):
        if key in cache:
            cache.remove(key)
        elif len(cache) == capacity:
            del cache[0]
        cache.append(key)
    return cache


def solve_compound(spec: dict) -> list[int]:
    capacity = int_field(spec, "capacity", 1)
    cache: dict[int, int] = {}
    results = []
    for op in operations_field(spec, {"put": (int, int), "get": (int,)}):
        key = op[1]
        if op[0] == "get":
            if key not in cache:
                results.append(-1)
                continue
            results.append(cache.pop(key))
            cache[key] = results[-1]
            continue
        if key in cache:
            del cache[key]
        elif len(cache) == capacity:
            del cache[next(iter(cache))]
        cache[key] = op[2]
    return results


def _pool(rng: random.Random, capacity: int) -> list[int]:
    """A few more keys than fit, so that both hits and evictions happen."""
    return rng.sample(range(VALUE_RANGE[0], VALUE_RANGE[1] + 1), capacity + rng.randint(1, 3))


def generate_access(rng: random.Random, length: int) -> dict:
    capacity = rng.randint(2, 5)
    pool = _pool(rng, capacity)
    return {"capacity": capacity, "accesses": [rng.choice(pool) for _ in range(length)]}


def generate_compound(rng: random.Random, length: int) -> dict:
    capacity = rng.randint(2, 4)
    pool = _pool(rng, capacity)
    ops = [["put", rng.choice(pool), rng.randint(*VALUE_RANGE)] if rng.random() < 0.5 else ["get", rng.choice(pool)]
           for _ in range(length - 1)]
    return {"capacity": capacity, "operations": ops + [["get", rng.choice(pool)]]}


def prompt_access(spec: dict) -> PromptParts:
    keys = ", ".join(map(str, spec["accesses"]))
    return PromptParts(definition=DEFINITION, name="LRU cache",
                       setup=f"The LRU cache has capacity {spec['capacity']} and is initially empty. The keys are accessed in this order: {keys}.",
                       question="Which keys are cached after all accesses, from least to most recently used?",
                       answer_format="a list of integers (least recently used first)", rules=ACCESS_RULES)


def prompt_compound(spec: dict) -> PromptParts:
    steps = "; ".join(f"{n}. {'put ' + str(op[1]) + ' ' + str(op[2]) if op[0] == 'put' else 'get ' + str(op[1])}"
                      for n, op in enumerate(spec["operations"], 1))
    return PromptParts(definition=DEFINITION, name="LRU cache",
                       setup=f"The LRU cache has capacity {spec['capacity']} and is initially empty. Apply these operations in order: {steps}.",
                       question="What does each get return?",
                       answer_format="a list of integers, one per get in order (-1 for a miss)", rules=COMPOUND_RULES)


register(Task(category="Hybrid", structure="lru_cache", name="access", answer_type="list[int]",
              generate=generate_access, solve=solve_access, prompt=prompt_access, doc=__doc__))
register(Task(category="Hybrid", structure="lru_cache", name="compound", answer_type="list[int]",
              generate=generate_compound, solve=solve_compound, prompt=prompt_compound, doc=__doc__))
