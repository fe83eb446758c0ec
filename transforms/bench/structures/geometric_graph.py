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

Why adjacency lists rather than a sorted edge list: they carry both the edge set and the
lightest-edge-first neighbour order the rule prescribes (the edge set is recovered from them).
"""
from __future__ import annotations

import math
import random
from transforms.bench.registry import PromptParts, Task, int_field, register
from transforms.bench.structures.kd_tree import distinct_axis_points, format_point, validated_points


def squared_distance(a: list[int], b: list[int]) -> int:
    return sum((x - y) ** 2 for x, y in zip(a, b))


def _validated(spec: dict) -> tuple[list[list[int]], int]:
    return validated_points(spec), int_field(spec, "threshold", lo=0)


def adjacency(points: list[list[int]], threshold: int) -> list[list[int]]:
    limit = threshold * threshold
    lists = []
    for i, point in enumerate(points):
        near = [(squared_distance(point, other), j) for j, other in enumerate(points) if j != i]
        lists.append([j for d, j in sorted(near) if d <= limit])
    return lists


def solve_construct(spec: dict) -> list[list[int]]:
    return adjacency(*_validated(spec))


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
