"""The task registry: category -> structure -> task, each with generator, reference answer and prompt.

An instance is a pure function of (task, difficulty, index, seed): `rng_for` derives a private
`random.Random` from those keys, so no global random state is ever used and any runner or worker
count gives byte-identical output.
"""
from __future__ import annotations

import dataclasses
import hashlib
import random
from typing import Any, Callable

# Answer types (Task.answer_type) and their JSON shapes; scoring dispatches on them.
#   "int", "bool", "str"         scalars
#   "list[int]", "list[str]"     flat lists (order matters)
#   "list[list[int]]"            nested lists (e.g. skip-list levels, hash buckets, B+ tree leaves)
#   "tree:binary"                null | [key, left, right]; key may be [int, "R"|"B"] for red-black trees
#   "tree:nary"                  [label, [child, ...]] (tries, suffix trees, DAWGs, B+ trees)
#   "edges"                      sorted list of [u, v] pairs with u <= v (undirected graphs)
#   "json"                       any other JSON value, compared canonically
ANSWER_TYPES = ("int", "bool", "str", "list[int]", "list[str]", "list[list[int]]",
                "tree:binary", "tree:nary", "edges", "json")

DIFFICULTY_LENGTHS = {"easy": (5, 10), "medium": (11, 20), "hard": (21, 30)}
VALUE_RANGE = (0, 100)


@dataclasses.dataclass(frozen=True)
class PromptParts:
    """The pieces every prompt mode is rendered from (stored with the instance)."""

    definition: str        # full description of the structure and the rules (tie-breaks included)
    name: str              # the structure's name only, for `name` description mode
    setup: str             # initial contents and the operations, in words
    question: str          # what to report
    answer_format: str     # the JSON shape of final_answer, e.g. 'a list of integers'


@dataclasses.dataclass(frozen=True)
class Task:
    category: str                                        # Linear, Temporal, Associative, ...
    structure: str                                       # e.g. "queue"
    name: str                                            # e.g. "compound"
    answer_type: str                                     # "int", "list[int]", "list[list[int]]", ...
    generate: Callable[[random.Random, int], dict]       # (rng, length) -> spec (JSON-serializable)
    solve: Callable[[dict], Any]                         # spec -> answer (JSON-serializable)
    prompt: Callable[[dict], PromptParts]                # spec -> prompt parts
    doc: str = ""                                        # the rules, as stated in the prompt

    @property
    def id(self) -> str:
        return f"{self.structure}/{self.name}"


_REGISTRY: dict[str, Task] = {}


def register(task: Task) -> Task:
    if task.id in _REGISTRY:
        raise ValueError(f"task {task.id} registered twice")
    _REGISTRY[task.id] = task
    return task


def rng_for(*keys: Any) -> random.Random:
    """A private generator seeded from the keys' text (stable across processes and Python versions)."""
    digest = hashlib.sha256("\x1f".join(map(str, keys)).encode()).digest()
    return random.Random(int.from_bytes(digest[:16], "big"))
