"""Spatial probe (suite "spatial"): K-D tree, K-D heap and geometric graph beyond the main suite's
uniform 2-D points, in 1, 2, 3 and 5 dimensions and on 2-D point sets shaped as moons, circles and
blobs.

Each probe task reuses its main task's reference answer, prompt and spec format
(`kd_tree/construct`, `kd_heap/compound`, `geometric_graph/construct`); only the point sets
differ. Its variant names the point set:
- "1d", "2d", "3d", "5d": distinct points with integer coordinates drawn uniformly from 0..100
  (coordinates may repeat across points, so the K-D tree's stated tie rule is exercised);
- "moons": two interleaving half circles; "circles": two concentric rings (radii 1 and 0.5);
  "blobs": three Gaussian clusters around random centres; all with Gaussian noise, scaled onto the
  0..100 grid and rounded to integers so every answer is exact.
Points come only from the instance's `random.Random` (no NumPy or global state), so an instance
is a pure function of its keys. The number of points is the instance's length (5-10, 11-20, 21-30
by difficulty); a K-D heap spec inserts those points with extracts in between (see
`kd_heap.spec_from_points`).

Default release, 450 instances (`spatial_cells`): per structure 150 = 4 dimensions x 15 + 3
shapes x 30, i.e. 5 resp. 10 per difficulty. Shapes get twice the weight of each dimension
because the three shapes are the probe's distribution shift away from uniform points (the
dimension variants include 2-D uniform points, which the main suite already covers).
"""
from __future__ import annotations

import math
import random
from typing import Callable

from transforms.bench.registry import VALUE_RANGE, Task, get_task, register
from transforms.bench.structures import geometric_graph, kd_heap, kd_tree

Points = list[list[int]]
DIMENSIONS = {"1d": 1, "2d": 2, "3d": 3, "5d": 5}
SHAPES = ("moons", "circles", "blobs")
VARIANTS = tuple(DIMENSIONS) + SHAPES
PER_DIMENSION, PER_SHAPE = 15, 30


def _grid(value: float) -> int:
    low, high = VALUE_RANGE
    return min(high, max(low, round(value)))


def _distinct(rng: random.Random, count: int, draw: Callable[[random.Random], list[int]]) -> Points:
    """`count` distinct points from repeated draws, in drawing order."""
    seen, points = set(), []
    for _ in range(1000 * max(count, 1)):
        if len(points) == count:
            return points
        point = draw(rng)
        if tuple(point) not in seen:
            seen.add(tuple(point))
            points.append(point)
    raise RuntimeError(f"could not draw {count} distinct points")


def uniform_points(rng: random.Random, count: int, dimension: int) -> Points:
    return _distinct(rng, count, lambda r: [r.randint(*VALUE_RANGE) for _ in range(dimension)])


def moons(rng: random.Random, count: int) -> Points:
    """Upper moon (cos t, sin t) and lower moon (1 - cos t, 1/2 - sin t), t in [0, pi]."""
    def draw(r: random.Random) -> list[int]:
        t = r.uniform(0.0, math.pi)
        x, y = (math.cos(t), math.sin(t)) if r.random() < 0.5 else (1 - math.cos(t), 0.5 - math.sin(t))
        x, y = x + r.gauss(0.0, 0.06), y + r.gauss(0.0, 0.06)
        return [_grid(50 + (x - 0.5) * 30), _grid(50 + (y - 0.25) * 30)]
    return _distinct(rng, count, draw)


def circles(rng: random.Random, count: int) -> Points:
    """Two concentric noisy rings, radius 1 (outer) and 0.5 (inner), centred on (50, 50)."""
    def draw(r: random.Random) -> list[int]:
        radius = 1.0 if r.random() < 0.5 else 0.5
        angle = r.uniform(0.0, 2 * math.pi)
        x = radius * math.cos(angle) + r.gauss(0.0, 0.04)
        y = radius * math.sin(angle) + r.gauss(0.0, 0.04)
        return [_grid(50 + 42 * x), _grid(50 + 42 * y)]
    return _distinct(rng, count, draw)


def blobs(rng: random.Random, count: int) -> Points:
    """Three Gaussian clusters (standard deviation 7) around centres drawn from 15..85."""
    centres = [(rng.randint(15, 85), rng.randint(15, 85)) for _ in range(3)]

    def draw(r: random.Random) -> list[int]:
        cx, cy = r.choice(centres)
        return [_grid(r.gauss(cx, 7.0)), _grid(r.gauss(cy, 7.0))]
    return _distinct(rng, count, draw)


def point_set(rng: random.Random, variant: str, count: int) -> Points:
    if variant in DIMENSIONS:
        return uniform_points(rng, count, DIMENSIONS[variant])
    shapes = {"moons": moons, "circles": circles, "blobs": blobs}
    if variant not in shapes:
        raise ValueError(f"unknown spatial variant {variant!r}; choose one of {', '.join(VARIANTS)}")
    return shapes[variant](rng, count)


# probe task id -> (the main task's module, the main task's id)
_PROBED = {
    "kd_tree/spatial_construct": (kd_tree, "kd_tree/construct"),
    "kd_heap/spatial_compound": (kd_heap, "kd_heap/compound"),
    "geometric_graph/spatial_construct": (geometric_graph, "geometric_graph/construct"),
}


def generate_spatial(task_id: str, variant: str, rng: random.Random, length: int) -> dict:
    """The spec of probe task `task_id` on the `variant` point set with `length` points."""
    if task_id not in _PROBED:
        raise ValueError(f"unknown spatial task {task_id!r}; choose one of {', '.join(_PROBED)}")
    module, _ = _PROBED[task_id]
    return module.spec_from_points(rng, point_set(rng, variant, length))


def spatial_cells() -> list[tuple[str, str, int]]:
    """(probe task id, variant, instances in the default release), summing to 450."""
    return [(task_id, variant, PER_DIMENSION if variant in DIMENSIONS else PER_SHAPE)
            for task_id in _PROBED for variant in VARIANTS]


def _probe_task(task_id: str) -> Task:
    """The probe twin of a main task: same answer, prompt and spec format, suite "spatial"."""
    main = get_task(_PROBED[task_id][1])
    structure, name = task_id.split("/")
    return Task(
        category=main.category, structure=structure, name=name, answer_type=main.answer_type,
        generate=lambda rng, length, variant: generate_spatial(task_id, variant, rng, length),
        solve=main.solve, prompt=main.prompt, suite="spatial", variants=VARIANTS,
        doc=f"Spatial probe of {main.id} (same spec, rules and answer) on the point sets "
            f"{', '.join(VARIANTS)}: distinct uniform integer points in 1, 2, 3 or 5 dimensions, or "
            "2-D moons, circles and blobs rounded onto the 0..100 grid.",
    )


for _task_id in _PROBED:
    register(_probe_task(_task_id))
