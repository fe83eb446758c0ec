"""The suites of a release and how many instances each (task, difficulty, variant) cell gets.

Default release (`per_cell` = 30): main 35 tasks x 3 difficulties x 30 = 3,150; spatial 450 (the
spatial probe's own split over variants, `probes.spatial.spatial_cells`: 5 per difficulty for
each dimension variant, 10 for each point-set shape); natural 3 stories x 3 x 30 = 270; code 3
programs x 3 x 30 = 270; total 4,140. `--per-cell N` scales every cell by N / 30 (rounded, at
least 1), so the main suite has exactly N per cell and the probes keep their proportions.

The `extended` suite (opt-in, `--suites main,...,extended`) holds the tasks that express the rest
of DSR-Bench's inputs (no-op key changes, clinic cancellations, labelled K-D heap items, ball
trees, the clamped Bloom-filter delete); it is kept out of the default release so that release's
content hash and counts stay as published. It gets `per_cell` instances per cell like `main`.
"""
from __future__ import annotations

import dataclasses

from transforms.bench.registry import Task, all_tasks

SUITES = ("main", "spatial", "natural", "code")    # the default release
EXTRA_SUITES = ("extended",)                       # opt-in (`--suites`): DSR-Bench inputs beyond the default release
ALL_SUITES = SUITES + EXTRA_SUITES
DEFAULT_PER_CELL = 30
DEFAULT_COUNTS = {"main": 3150, "spatial": 450, "natural": 270, "code": 270}
DEFAULT_TOTAL = sum(DEFAULT_COUNTS.values())
MAIN_TASKS = 35


@dataclasses.dataclass(frozen=True)
class Cell:
    """`count` instances (indices 0..count-1) of one task at one difficulty and variant."""

    suite: str
    task_id: str
    difficulty: str
    variant: str
    count: int


def _default_count(task: Task, difficulty: str, variant: str) -> int:
    if task.suite != "spatial":
        return DEFAULT_PER_CELL
    from transforms.bench.probes.spatial import spatial_cells
    per_variant = {(task_id, v): n for task_id, v, n in spatial_cells()}
    return per_variant[(task.id, variant)] // len(task.difficulties)


def parse_suites(text: str) -> tuple[str, ...]:
    """`main,code` -> ("main", "code") in release order; ValueError naming unknown suites."""
    wanted = {s.strip() for s in text.split(",") if s.strip()}
    unknown = wanted - set(ALL_SUITES)
    if unknown or not wanted:
        raise ValueError(f"unknown suites {sorted(unknown) or '(none given)'}; choose from {', '.join(ALL_SUITES)}")
    return tuple(s for s in ALL_SUITES if s in wanted)


def release_cells(suites: tuple[str, ...] = SUITES, per_cell: int = DEFAULT_PER_CELL) -> list[Cell]:
    """Every cell of the release, in a fixed order (suite, task id, difficulty, variant)."""
    if per_cell < 1:
        raise ValueError(f"per_cell must be at least 1, got {per_cell}")
    cells = []
    for suite in suites:
        for task in all_tasks(suite):
            for difficulty, variant in task.cells:
                count = max(1, round(_default_count(task, difficulty, variant) * per_cell / DEFAULT_PER_CELL))
                cells.append(Cell(suite, task.id, difficulty, variant, count))
    return cells
