"""Instance construction: a pure function of (task, difficulty, variant, index, seed).

The generator is `rng_for(seed, task id, difficulty, variant, index)`, a private `random.Random`;
the length is drawn first from the difficulty's range, then the task draws its spec. The spec is
stored as canonical JSON and the answer is computed from that parsed JSON, so the stored spec is
exactly what determines the stored answer. The three k-shot exemplars are generated from the
`exemplar` key space (a different seed stream) at the task's shortest difficulty, and one equal to
the instance itself is redrawn.
"""
from __future__ import annotations

import json
from typing import Any

from transforms.bench.prompts import DEFAULT_DESCRIPTION, DEFAULT_MODE, parts_record, render
from transforms.bench.registry import DIFFICULTY_LENGTHS, Task, rng_for

GENERATOR_VERSION = "thmforge-bench/1"
EXEMPLARS = 3


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def instance_id(task: Task, difficulty: str, variant: str, index: int, seed: int) -> str:
    """Readable and stable: `structure.task.difficulty[.variant].index.sSEED`."""
    middle = f"{difficulty}.{variant}" if variant else difficulty
    return f"{task.structure}.{task.name}.{middle}.{index:05d}.s{seed}"


def draw_spec(task: Task, difficulty: str, variant: str, *keys: Any) -> tuple[int, dict]:
    """(length, spec as parsed canonical JSON) from a generator keyed by `keys`."""
    length, spec, _ = _draw(task, difficulty, variant, *keys)
    return length, spec


def _draw(task: Task, difficulty: str, variant: str, *keys: Any) -> tuple[int, dict, str]:
    """`draw_spec` with the spec's canonical JSON text, which callers compare and store."""
    rng = rng_for(*keys, task.id, difficulty, variant)
    lo, hi = DIFFICULTY_LENGTHS[difficulty]
    length = rng.randint(lo, hi)
    text = canonical_json(task.make_spec(rng, length, variant))
    return length, json.loads(text), text


class Exemplars:
    """The k-shot exemplars of one (task, variant, index, seed), drawn once on demand: their keys
    omit the difficulty, so every difficulty of an index shares them (a third of the release's
    generation time when each instance drew its own)."""

    def __init__(self, task: Task, variant: str, index: int, seed: int):
        self.task, self.index, self.seed = task, index, seed
        self.variant = variant if variant in task.variants else task.variants[0]
        self._drawn: list[tuple[str, dict]] = []

    def _attempt(self, attempt: int) -> tuple[str, dict]:
        while len(self._drawn) <= attempt:
            _, spec, text = _draw(self.task, self.task.difficulties[0], self.variant, "exemplar", self.seed,
                                  self.index, len(self._drawn))
            parts = self.task.prompt(spec)
            self._drawn.append((text, {"setup": parts.setup, "question": parts.question,
                                       "answer": self.task.solve(spec)}))
        return self._drawn[attempt]

    def avoiding(self, spec_text: str) -> list[dict]:
        """Three solved exemplars, none with the instance's spec text."""
        found, attempt = [], 0
        while len(found) < EXEMPLARS:
            text, exemplar = self._attempt(attempt)
            attempt += 1
            if text != spec_text:
                found.append(exemplar)
        return found


def build_instance(task: Task, difficulty: str, index: int, seed: int, variant: str = "",
                   exemplars: Exemplars | None = None) -> dict:
    """One row of the `instances` table; `exemplars` may be shared with the index's other difficulties."""
    length, spec, text = _draw(task, difficulty, variant, seed, index)
    return instance_row(task, spec, task.solve(spec), instance_id=instance_id(task, difficulty, variant, index, seed),
                        difficulty=difficulty, variant=variant, index=index, seed=seed, length=length,
                        exemplars=exemplars, spec_text=text)


def instance_row(task: Task, spec: dict, answer: Any, *, instance_id: str, difficulty: str, variant: str, index: int,
                 seed: int | None, length: int, generator_version: str = GENERATOR_VERSION,
                 exemplars: Exemplars | None = None, spec_text: str | None = None) -> dict:
    """The `instances` row of a spec with its ground-truth answer (generated here, or imported);
    k-shot exemplars come from the task's own generator (seed 0 for an imported spec)."""
    spec_text = spec_text or canonical_json(spec)
    exemplars = exemplars or Exemplars(task, variant, index, seed or 0)
    parts = parts_record(task.prompt(spec), exemplars.avoiding(spec_text))
    return {
        "instance_id": instance_id,
        "suite": task.suite,
        "category": task.category,
        "structure": task.structure,
        "task": task.name,
        "difficulty": difficulty,
        "length": length,
        "index": index,
        "seed": seed,
        "variant": variant or None,
        "prompt": render(parts, DEFAULT_MODE, DEFAULT_DESCRIPTION),
        "prompt_parts": canonical_json(parts),
        "answer": canonical_json(answer),
        "answer_type": task.answer_type,
        "spec": spec_text,
        "generator_version": generator_version,
    }
