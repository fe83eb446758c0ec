"""A subset of a release to run: by task, suite and difficulty, and at most N instances per cell.

A cell is (suite, structure, task, difficulty, variant), as in a release's manifest; `--limit N`
keeps each cell's N instances of smallest index (then instance id), so a smaller run is a prefix
of a larger one and its answers are reused when the larger one runs later.
"""
from __future__ import annotations

import dataclasses
from typing import Iterable, Mapping

CELL_COLUMNS = ("instance_id", "suite", "structure", "task", "difficulty", "variant", "index")


class SelectionError(ValueError):
    """A selection naming tasks, suites or difficulties the release does not have, or matching nothing."""


def parse_list(text: str | None) -> frozenset[str]:
    return frozenset(part.strip() for part in (text or "").split(",") if part.strip())


@dataclasses.dataclass(frozen=True)
class Selection:
    tasks: frozenset[str] = frozenset()          # "structure/task" ids, or a structure for all its tasks
    suites: frozenset[str] = frozenset()
    difficulties: frozenset[str] = frozenset()
    limit: int | None = None                     # instances per cell

    def __post_init__(self):
        if self.limit is not None and self.limit < 1:
            raise SelectionError(f"limit must be at least 1, got {self.limit}")

    @property
    def everything(self) -> bool:
        return not (self.tasks or self.suites or self.difficulties or self.limit)

    def matches(self, row: Mapping) -> bool:
        task_id = f"{row['structure']}/{row['task']}"
        return ((not self.tasks or task_id in self.tasks or row["structure"] in self.tasks)
                and (not self.suites or row["suite"] in self.suites)
                and (not self.difficulties or row["difficulty"] in self.difficulties))

    def describe(self) -> dict:
        return {"tasks": sorted(self.tasks), "suites": sorted(self.suites),
                "difficulties": sorted(self.difficulties), "limit": self.limit}


def select(rows: Iterable[Mapping], selection: Selection) -> frozenset[str]:
    """The instance ids `selection` keeps among `rows` (with CELL_COLUMNS); a SelectionError names
    any task, suite or difficulty the rows do not have."""
    rows = list(rows)
    known = {"tasks": {f"{r['structure']}/{r['task']}" for r in rows} | {r["structure"] for r in rows},
             "suites": {r["suite"] for r in rows}, "difficulties": {r["difficulty"] for r in rows}}
    for name, known_values in known.items():
        unknown = getattr(selection, name) - known_values
        if unknown:
            shown = sorted(v for v in known_values if name != "tasks" or "/" in v)
            raise SelectionError(f"the release has no {name} {', '.join(sorted(unknown))}; it has {', '.join(shown)}")
    cells: dict[tuple, list] = {}
    for row in rows:
        if selection.matches(row):
            key = (row["suite"], row["structure"], row["task"], row["difficulty"], row.get("variant") or "")
            cells.setdefault(key, []).append(row)
    chosen = set()
    for members in cells.values():
        members.sort(key=lambda r: (r.get("index") if r.get("index") is not None else 0, r["instance_id"]))
        chosen.update(r["instance_id"] for r in members[:selection.limit])
    if not chosen:
        raise SelectionError("the selection matches no instance of the release")
    return frozenset(chosen)
