"""Geometric graph (Spatial): points joined when they lie within a distance threshold.

Rules (as in DSR-Bench's released answers, and stated in every prompt): point i and point j
(i != j, numbered by their position in the list from 0) are joined by an edge when their
Euclidean distance is at most the threshold (distance <= threshold, compared exactly as squared
integers); an edge weighs its length; neighbours are visited lightest edge first, so each node's
neighbour list is ordered by increasing distance, equal distances by increasing index.

Task
- geometric_graph/construct: spec {"points": [[c1, ..., ck], ...] (integers, one dimension),
  "threshold": int >= 0} -> the adjacency lists: for every point in order, its neighbours,
  nearest first (list[list[int]]). length = number of points. The generator picks the threshold
  as the (whole part of the) distance of a random pair among the closest ones, so graphs are
  neither empty nor complete.

- geometric_graph/bfs (suite "extended", as in DSR-Bench's release): spec {"points": [[c1, ..., ck],
  ...] (numbers with at most two decimals, compared exactly), "threshold": number >= 0, "start":
  node number} -> the nodes in the order a breadth-first search from start visits them, each
  node's unvisited neighbours enqueued nearest first (list[int]). Variants: 1d, 2d, 3d, 5d
  (coordinates in [0, 100) with two decimals). length = number of points.

Why adjacency lists rather than a sorted edge list: they carry both the edge set and the
lightest-edge-first neighbour order the rule prescribes (the edge set is recovered from them).
"""
from __future__ import annotations

import collections
import math
import random
from decimal import Decimal
from fractions import Fraction
from typing import Any

from transforms.bench.registry import PromptParts, SpecError, Task, field, int_field, register
from transforms.bench.structures.kd_tree import distinct_axis_points, format_point, validated_points


def squared_distance(a: list[int], b: list[int]) -> int:
    return sum((x - y) ** 2 for x, y in zip(a, b))


def _validated(spec: dict) -> tuple[list[list[int]], int]:
    return validated_points(spec), int_field(spec, "threshold", lo=0)


def adjacency(points: list[list[int]], threshold: int) -> list[list[int]]:
    """Each point's neighbours within the threshold, nearest first (ties by index); each pair's
    distance is computed once."""
    limit = threshold * threshold
    near: list[list[tuple[int, int]]] = [[] for _ in points]
    for i, point in enumerate(points):
        for j in range(i + 1, len(points)):
            distance = squared_distance(point, points[j])
            if distance <= limit:
                near[i].append((distance, j))
                near[j].append((distance, i))
    return [[j for _, j in sorted(pairs)] for pairs in near]


def solve_construct(spec: dict) -> list[list[int]]:
    return adjacency(*_validated(spec))


def exact(value: Any, what: str) -> Fraction:
    """A coordinate or threshold as the exact decimal it is written as (0.1 is 1/10, not the float)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise SpecError(f"{what} must be a number, got {value!r}")
    return Fraction(Decimal(repr(value)))


def decimal_points(spec: dict) -> list[list[Fraction]]:
    points = field(spec, "points")
    if not isinstance(points, list) or not points:
        raise SpecError(f"points must be a non-empty list of points (lists of numbers), got {points!r}")
    dimension = len(points[0]) if isinstance(points[0], list) else 0
    for i, point in enumerate(points):
        if not isinstance(point, list) or not point or len(point) != dimension:
            raise SpecError(f"points[{i}] must be a list of {dimension or 'some'} numbers, got {point!r}")
    return [[exact(c, f"points[{i}] coordinate") for c in point] for i, point in enumerate(points)]


def solve_bfs(spec: dict) -> list[int]:
    points = decimal_points(spec)
    start = int_field(spec, "start", lo=0, hi=len(points) - 1)
    threshold = exact(field(spec, "threshold"), "threshold")
    if threshold < 0:
        raise SpecError(f"threshold must be >= 0, got {spec['threshold']!r}")
    neighbours = adjacency(points, threshold)
    order, queue = [start], collections.deque([start])
    while queue:
        for j in neighbours[queue.popleft()]:
            if j not in order:
                order.append(j)
                queue.append(j)
    return order


def spec_from_points(rng: random.Random, points: list[list[int]]) -> dict:
    """Threshold = floor of the distance of a pair ranked between n/2 and 2n among the closest pairs
    (average degree about 1 to 4 whatever the dimension or scale)."""
    distances = sorted(squared_distance(a, b) for i, a in enumerate(points) for b in points[i + 1:])
    if not distances:
        return {"points": points, "threshold": 0}
    rank = rng.randint(len(points) // 2, 2 * len(points))
    return {"points": points, "threshold": math.isqrt(distances[min(rank, len(distances) - 1)])}


def generate_construct(rng: random.Random, length: int) -> dict:
    return spec_from_points(rng, distinct_axis_points(rng, length, 2))


BFS_DIMENSIONS = {"1d": 1, "2d": 2, "3d": 3, "5d": 5}


def generate_bfs(rng: random.Random, length: int, variant: str) -> dict:
    """Two-decimal coordinates in [0, 100); the threshold is picked as for construct (whole part of
    the distance of a pair ranked among the closest), so the search reaches some but rarely all nodes."""
    points = [[round(rng.uniform(0, 100), 2) for _ in range(BFS_DIMENSIONS[variant])] for _ in range(length)]
    distances = sorted(math.dist(a, b) for i, a in enumerate(points) for b in points[i + 1:])
    rank = min(rng.randint(len(points) // 2, 2 * len(points)), len(distances) - 1)
    return {"points": points, "threshold": int(distances[rank]), "start": rng.randrange(len(points))}


DEFINITION = (
    "A geometric graph joins points in space: the nodes are the points, numbered 0, 1, 2, ... in the "
    "order they are listed, and each edge weighs the Euclidean distance between its two points."
)
RULES = (
    "Two different points are joined by an edge when their Euclidean distance is at most the "
    "threshold (distance <= threshold). Neighbours are visited lightest edge first: the neighbours of "
    "a node are listed by increasing distance from it, and neighbours at equal distance by increasing "
    "number."
)


def prompt_construct(spec: dict) -> PromptParts:
    points = spec["points"]
    listed = ", ".join(f"{i}: {format_point(p)}" for i, p in enumerate(points)) or "(none)"
    return PromptParts(
        definition=DEFINITION,
        rules=RULES,
        name="geometric graph (distance threshold)",
        setup=f"The points are {listed}. The distance threshold is {spec['threshold']}.",
        question="What are the neighbours of every node, lightest edge first?",
        answer_format="a list with one entry per node, in node order: the list of its neighbours' "
                      "numbers, nearest first (an empty list for an isolated node), e.g. [[1], [0], []]",
    )


register(Task(category="Spatial", structure="geometric_graph", name="construct", answer_type="list[list[int]]",
              generate=generate_construct, solve=solve_construct, prompt=prompt_construct,
              doc="Spec {points, threshold}: per node, the neighbours within distance <= threshold, "
                  "nearest first, ties by index."))


def prompt_bfs(spec: dict) -> PromptParts:
    listed = ", ".join(f"{i}: {format_point(p)}" for i, p in enumerate(spec["points"]))
    return PromptParts(
        definition=DEFINITION,
        rules=RULES + (" Breadth-first search: visit the start node and put it in a queue; then repeatedly take the "
                       "node at the front of the queue and visit, in its neighbour order, each neighbour not yet "
                       "visited, putting it at the back of the queue."),
        name="geometric graph (distance threshold)",
        setup=f"The points are {listed}. The distance threshold is {spec['threshold']}.",
        question=f"In which order does a breadth-first search from node {spec['start']} visit the nodes?",
        answer_format="the list of visited node numbers in visiting order, starting with the start node, e.g. [0, 2, 1]",
    )


register(Task(category="Spatial", structure="geometric_graph", name="bfs", answer_type="list[int]",
              generate=generate_bfs, solve=solve_bfs, prompt=prompt_bfs, suite="extended",
              variants=tuple(BFS_DIMENSIONS),
              doc="Spec {points, threshold, start}: the breadth-first visiting order from start, neighbours "
                  "within distance <= threshold (two-decimal coordinates, exact), nearest first, ties by index."))
