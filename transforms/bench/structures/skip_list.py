"""Skip list (Temporal): a compound sequence of insert and delete, with the coin flips given.

Rules (as in DSR-Bench's released answers, and stated in the prompt): level 0 holds every value in
ascending order; a newly inserted value is also on levels 1..L where L is the number of leading
coin values below 0.5 in its flips, capped at `max_level`; inserting a value already present
does nothing (its flips are unused); deleting removes the value from every level, and deleting an
absent value does nothing. The answer lists the levels bottom-up (level 0 first), each ascending,
up to the highest non-empty level; an empty skip list is [[]].

Spec: {"max_level": int >= 0, "operations": [["insert", int, [float coin values in [0, 1)]] |
["delete", int]]} -> list[list[int]]. length = number of operations.
"""
from __future__ import annotations

import random

from transforms.bench.registry import (VALUE_RANGE, PromptParts, SpecError, Task, int_field, operations_field,
                                       register)

DEFINITION = ("A skip list stores sorted values in a hierarchy of linked lists: level 0 links every value in "
              "ascending order, and each higher level links a subset of the level below, so a search can skip "
              "ahead. A new value's height is decided by coin flips.")
RULES = ("A flip below 0.5 is heads. A newly inserted value is placed on level 0 and on one more level for each "
         "leading heads in its flips (stopping at the first tails), up to the maximum level. Inserting a value "
         "that is already present changes nothing and its flips are unused. Deleting removes the value from every "
         "level; deleting an absent value changes nothing. Report the levels from level 0 upwards, each in "
         "ascending order, up to the highest non-empty level; an empty skip list is [[]].")


def height(coins: list[float], max_level: int) -> int:
    """Number of leading heads (coin < 0.5), capped at max_level."""
    level = 0
    for coin in coins:
        if coin >= 0.5 or level == max_level:
            break
        level += 1
    return level


def solve(spec: dict) -> list[list[int]]:
    max_level = int_field(spec, "max_level", 0, 32)
    heights: dict[int, int] = {}
    for i, op in enumerate(operations_field(spec, {"insert": (int, list), "delete": (int,)})):
        if op[0] == "delete":
            heights.pop(op[1], None)
            continue
        if not all(isinstance(c, (int, float)) and not isinstance(c, bool) and 0 <= c < 1 for c in op[2]):
            raise SpecError(f"operations[{i}]: coin values must be numbers in [0, 1), got {op[2]!r}")
        if op[1] not in heights:
            heights[op[1]] = height(op[2], max_level)
    top = max(heights.values(), default=0)
    return [sorted(v for v, h in heights.items() if h >= level) for level in range(top + 1)]


def _flips(rng: random.Random, max_level: int) -> list[float]:
    """Flips up to the first tails, or max_level heads: exactly the ones the rule reads."""
    flips: list[float] = []
    while len(flips) < max_level:
        flips.append(rng.randrange(100) / 100)
        if flips[-1] >= 0.5:
            break
    return flips


def generate(rng: random.Random, length: int) -> dict:
    max_level = rng.choice((3, 4))
    present: list[int] = []
    ops: list[list] = []
    for _ in range(length):
        roll = rng.random()
        if present and roll < 0.25:
            value = rng.choice(present)
        elif roll < 0.28:
            value = rng.randint(*VALUE_RANGE)  # may be absent: a delete that changes nothing
        elif present and roll < 0.33:
            ops.append(["insert", rng.choice(present), _flips(rng, max_level)])  # present: changes nothing
            continue
        else:
            value = rng.randint(*VALUE_RANGE)
            if value not in present:
                present.append(value)
            ops.append(["insert", value, _flips(rng, max_level)])
            continue
        if value in present:
            present.remove(value)
        ops.append(["delete", value])
    return {"max_level": max_level, "operations": ops}


def _describe(op: list) -> str:
    if op[0] == "delete":
        return f"delete {op[1]}"
    return f"insert {op[1]} (flips: {', '.join(f'{c:.2f}' for c in op[2])})"


def prompt(spec: dict) -> PromptParts:
    steps = "; ".join(f"{n}. {_describe(op)}" for n, op in enumerate(spec["operations"], 1))
    return PromptParts(definition=DEFINITION, name="skip list",
                       setup=f"The skip list is initially empty and its maximum level is {spec['max_level']}. "
                             f"Apply these operations in order: {steps}.",
                       question="What are the skip list's levels after all operations, from level 0 upwards?",
                       answer_format="a list of lists of integers (level 0 first, each ascending)", rules=RULES)


register(Task(category="Temporal", structure="skip_list", name="compound", answer_type="list[list[int]]",
              generate=generate, solve=solve, prompt=prompt, doc=__doc__))
