"""The task registry: category -> structure -> task, each with generator, reference answer and prompt.

An instance is a pure function of (task, difficulty, index, seed): `rng_for` derives a private
`random.Random` from those keys, so no global random state is ever used and any runner or worker
count gives byte-identical output.

A task module (one per structure in `transforms/bench/structures/`, one per probe in
`transforms/bench/probes/`) calls `register(Task(...))` at import; `all_tasks()` imports them all.
A task's `solve` is the single source of truth for its answers: it validates the spec it is given
and raises `SpecError` with a message a user can act on (`thmforge bench-answer` prints it).
"""
from __future__ import annotations

import dataclasses
import hashlib
import importlib
import pkgutil
import random
from typing import Any, Callable, Iterable

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

CATEGORIES = ("Linear", "Temporal", "Associative", "Hierarchical", "Network", "Hybrid", "Spatial")
DIFFICULTY_LENGTHS = {"easy": (5, 10), "medium": (11, 20), "hard": (21, 30)}
DIFFICULTIES = tuple(DIFFICULTY_LENGTHS)
VALUE_RANGE = (0, 100)


@dataclasses.dataclass(frozen=True)
class PromptParts:
    """The pieces every prompt mode is rendered from (stored with the instance).

    `rules` holds the conventions the answer follows (tie-breaks, output order); it is shown in
    every description mode, so a `name`-only prompt still states the rule. Tasks that keep their
    rules inside `definition` leave it empty.
    """

    definition: str        # full description of the structure and the rules (tie-breaks included)
    name: str              # the structure's name only, for `name` description mode
    setup: str             # initial contents and the operations, in words
    question: str          # what to report
    answer_format: str     # the JSON shape of final_answer, e.g. 'a list of integers'
    rules: str = ""        # the answer's conventions, repeated in `name` mode


@dataclasses.dataclass(frozen=True)
class Task:
    """One task: `generate(rng, length)` -> spec, `solve(spec)` -> answer, `prompt(spec)` -> parts.

    `suite` is "main" or a probe ("spatial", "natural", "code"). A release generates `per_cell`
    instances for every (difficulty, variant) cell of a task. Tasks with `variants` other than the
    default `("",)` get `generate(rng, length, variant)` instead (e.g. a dimension or point shape).
    """

    category: str                                        # Linear, Temporal, Associative, ...
    structure: str                                       # e.g. "queue"
    name: str                                            # e.g. "compound"
    answer_type: str                                     # "int", "list[int]", "list[list[int]]", ...
    generate: Callable[..., dict]                        # (rng, length[, variant]) -> spec (JSON-serializable)
    solve: Callable[[dict], Any]                         # spec -> answer (JSON-serializable)
    prompt: Callable[[dict], PromptParts]                # spec -> prompt parts
    doc: str = ""                                        # the rules and the spec format, as stated in the prompt
    suite: str = "main"
    difficulties: tuple[str, ...] = DIFFICULTIES
    variants: tuple[str, ...] = ("",)

    def __post_init__(self):
        if self.answer_type not in ANSWER_TYPES:
            raise ValueError(f"task {self.id}: unknown answer type {self.answer_type!r}")
        if self.category not in CATEGORIES:
            raise ValueError(f"task {self.id}: unknown category {self.category!r}")
        unknown = set(self.difficulties) - set(DIFFICULTY_LENGTHS)
        if unknown:
            raise ValueError(f"task {self.id}: unknown difficulties {sorted(unknown)}")

    @property
    def id(self) -> str:
        return f"{self.structure}/{self.name}"

    @property
    def cells(self) -> list[tuple[str, str]]:
        """The (difficulty, variant) cells a release fills, in a fixed order."""
        return [(d, v) for d in self.difficulties for v in self.variants]

    def make_spec(self, rng: random.Random, length: int, variant: str = "") -> dict:
        if self.variants == ("",):
            return self.generate(rng, length)
        return self.generate(rng, length, variant)


class SpecError(ValueError):
    """A spec that a task cannot answer: the message says which field is wrong and why."""


_REGISTRY: dict[str, Task] = {}
_TASK_PACKAGES = ("transforms.bench.structures", "transforms.bench.probes")


def register(task: Task) -> Task:
    if task.id in _REGISTRY:
        raise ValueError(f"task {task.id} registered twice")
    _REGISTRY[task.id] = task
    return task


def _import_task_modules() -> None:
    for package_name in _TASK_PACKAGES:
        package = importlib.import_module(package_name)
        for module in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
            if not module.name.startswith("_"):
                importlib.import_module(f"{package_name}.{module.name}")


def all_tasks(suite: str | None = None) -> list[Task]:
    """Every registered task (of one suite, if given), sorted by id; imports all task modules."""
    _import_task_modules()
    tasks = sorted(_REGISTRY.values(), key=lambda t: t.id)
    return [t for t in tasks if suite is None or t.suite == suite]


def get_task(task_id: str) -> Task:
    """The task `STRUCTURE/NAME`; a KeyError naming the known tasks otherwise."""
    if task_id not in _REGISTRY:
        _import_task_modules()
    if task_id not in _REGISTRY:
        raise KeyError(f"unknown task {task_id!r}; known tasks: {', '.join(sorted(_REGISTRY))}")
    return _REGISTRY[task_id]


def rng_for(*keys: Any) -> random.Random:
    """A private generator seeded from the keys' text (stable across processes and Python versions)."""
    digest = hashlib.sha256("\x1f".join(map(str, keys)).encode()).digest()
    return random.Random(int.from_bytes(digest[:16], "big"))


# --- spec validation: small checks every task's `solve` uses, each raising SpecError -----------

def field(spec: Any, key: str) -> Any:
    """`spec[key]`, or a SpecError naming the missing field."""
    if not isinstance(spec, dict):
        raise SpecError(f"the spec must be a JSON object, got {type(spec).__name__}")
    if key not in spec:
        raise SpecError(f"the spec has no field {key!r} (fields: {', '.join(sorted(spec)) or 'none'})")
    return spec[key]


def int_field(spec: Any, key: str, lo: int | None = None, hi: int | None = None) -> int:
    return check_int(field(spec, key), key, lo, hi)


def check_int(value: Any, what: str, lo: int | None = None, hi: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise SpecError(f"{what} must be an integer, got {value!r}")
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        bounds = f"{'-inf' if lo is None else lo}..{'inf' if hi is None else hi}"
        raise SpecError(f"{what} must be in {bounds}, got {value}")
    return value


def int_list_field(spec: Any, key: str) -> list[int]:
    values = field(spec, key)
    if not isinstance(values, list):
        raise SpecError(f"{key} must be a list of integers, got {values!r}")
    return [check_int(v, f"{key}[{i}]") for i, v in enumerate(values)]


def str_field(spec: Any, key: str, alphabet: str | None = None) -> str:
    return check_str(field(spec, key), key, alphabet)


def check_str(value: Any, what: str, alphabet: str | None = None) -> str:
    if not isinstance(value, str):
        raise SpecError(f"{what} must be a string, got {value!r}")
    if alphabet is not None and any(c not in alphabet for c in value):
        raise SpecError(f"{what} may only use the characters {alphabet!r}, got {value!r}")
    return value


def operations_field(spec: Any, arities: dict[str, Iterable[type]], key: str = "operations") -> list[list]:
    """`spec[key]` as a list of `[name, arg...]` whose names and argument types match `arities`."""
    ops = field(spec, key)
    if not isinstance(ops, list):
        raise SpecError(f"{key} must be a list of operations like [\"name\", args...], got {ops!r}")
    for i, op in enumerate(ops):
        if not isinstance(op, list) or not op or op[0] not in arities:
            raise SpecError(f"{key}[{i}] must be a list starting with one of {sorted(arities)}, got {op!r}")
        types = tuple(arities[op[0]])
        if len(op) - 1 != len(types):
            raise SpecError(f"{key}[{i}]: {op[0]!r} takes {len(types)} argument(s), got {op!r}")
        for arg, kind in zip(op[1:], types):
            if kind is int:
                check_int(arg, f"{key}[{i}] argument")
            elif not isinstance(arg, kind) or isinstance(arg, bool):
                raise SpecError(f"{key}[{i}]: argument {arg!r} must be {kind.__name__}")
    return ops
