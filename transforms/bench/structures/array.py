"""Array (Linear): access, delete, insert, reverse, search.

Rules (stated in every prompt): indices are 0-based; delete removes the element at the index and
shifts later ones left; insert puts the value at the index and shifts the element there and later
ones right (index len(array) appends); search returns the index of the first occurrence, or -1.
Values are integers 0-100 and may repeat.

Specs:
    access   {"array": [int], "index": int}              -> int
    delete   {"array": [int], "index": int}              -> list[int]
    insert   {"array": [int], "index": int, "value": int} -> list[int]
    reverse  {"array": [int]}                            -> list[int]
    search   {"array": [int], "value": int}              -> int
"""
from __future__ import annotations

import random

from transforms.bench.registry import (VALUE_RANGE, PromptParts, SpecError, Task, int_field,
                                       int_list_field, register)

DEFINITION = ("An array is a sequence of elements stored in contiguous positions; each element is addressed "
              "by its index, starting at 0 for the first element.")
RULES = {
    "access": "Indices are 0-based.",
    "delete": "Indices are 0-based; deleting removes the element at the index and shifts every later element one place left.",
    "insert": ("Indices are 0-based; inserting at index i puts the value at position i and shifts the element "
               "previously there and all later ones one place right (i equal to the length appends)."),
    "reverse": "Reversing puts the last element first, the second-to-last second, and so on.",
    "search": "Indices are 0-based; search returns the index of the first occurrence of the value, or -1 if it is absent.",
}


def _values(rng: random.Random, n: int) -> list[int]:
    return [rng.randint(*VALUE_RANGE) for _ in range(n)]


def _index(spec: dict, *, allow_end: bool = False) -> int:
    array = int_list_field(spec, "array")
    if not array and not allow_end:
        raise SpecError("array must not be empty")
    return int_field(spec, "index", 0, len(array) if allow_end else len(array) - 1)


def solve_access(spec: dict) -> int:
    i = _index(spec)
    return spec["array"][i]


def solve_delete(spec: dict) -> list[int]:
    i = _index(spec)
    return spec["array"][:i] + spec["array"][i + 1:]


def solve_insert(spec: dict) -> list[int]:
    i = _index(spec, allow_end=True)
    value = int_field(spec, "value")
    return spec["array"][:i] + [value] + spec["array"][i:]


def solve_reverse(spec: dict) -> list[int]:
    return int_list_field(spec, "array")[::-1]


def solve_search(spec: dict) -> int:
    array = int_list_field(spec, "array")
    value = int_field(spec, "value")
    return array.index(value) if value in array else -1


def gen_with_index(rng: random.Random, length: int) -> dict:
    return {"array": _values(rng, length), "index": rng.randrange(length)}


def gen_insert(rng: random.Random, length: int) -> dict:
    return {"array": _values(rng, length), "index": rng.randint(0, length), "value": rng.randint(*VALUE_RANGE)}


def gen_reverse(rng: random.Random, length: int) -> dict:
    return {"array": _values(rng, length)}


def gen_search(rng: random.Random, length: int) -> dict:
    array = _values(rng, length)
    value = rng.choice(array) if rng.random() < 0.7 else rng.randint(*VALUE_RANGE)
    return {"array": array, "value": value}


def _shown(spec: dict) -> str:
    return f"The array is {spec['array']}."


def _prompt(task: str, question, answer_format: str):
    def prompt(spec: dict) -> PromptParts:
        return PromptParts(definition=DEFINITION, name="array", setup=_shown(spec), question=question(spec),
                           answer_format=answer_format, rules=RULES[task])
    return prompt


for _name, _type, _gen, _solve, _question, _format in (
    ("access", "int", gen_with_index, solve_access,
     lambda s: f"What is the element at index {s['index']}?", "an integer"),
    ("delete", "list[int]", gen_with_index, solve_delete,
     lambda s: f"Delete the element at index {s['index']}. What is the array afterwards?", "a list of integers"),
    ("insert", "list[int]", gen_insert, solve_insert,
     lambda s: f"Insert {s['value']} at index {s['index']}. What is the array afterwards?", "a list of integers"),
    ("reverse", "list[int]", gen_reverse, solve_reverse,
     lambda s: "Reverse the array. What is the array afterwards?", "a list of integers"),
    ("search", "int", gen_search, solve_search,
     lambda s: f"Search for the value {s['value']}. What index does the search return?", "an integer"),
):
    register(Task(category="Linear", structure="array", name=_name, answer_type=_type, generate=_gen,
                  solve=_solve, prompt=_prompt(_name, _question, _format), doc=__doc__))
