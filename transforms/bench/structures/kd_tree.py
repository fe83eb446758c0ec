"""K-D tree (Spatial) built by median splits.

Rules (stated in every prompt): the points are k-dimensional (k = the length of each point); the
node at depth d splits on axis d mod k; its point is the median of its points sorted on that axis,
at index len // 2 (the upper median for an even count); the points before it form the left
subtree, those after it the right subtree. Ties on the splitting coordinate are broken by the
next coordinates, cycling (axis, axis+1, ..., axis-1 mod k): a total order fixed by the points
alone.

Why this tie rule: DSR-Bench's released answers break ties with NumPy's default unstable sort
(`np.argsort(kind="quicksort")`), whose order for equal keys is an implementation detail (it
depends on the array length, the NumPy version and the SIMD sort the CPU dispatches to), so no
prompt can state it and two machines may disagree. The main-suite generator draws distinct values
on every axis, so its instances have no ties and both rules give the same tree; ties arise only in
user specs and in the spatial probe, where the stated rule decides.

Task
- kd_tree/construct: spec {"points": [[c1, ..., ck], ...]} (integers, all of one dimension
  k >= 1) -> the tree as null | [point, left, right] (tree:binary). length = number of points.
"""
from __future__ import annotations

import random
from typing import Any

from transforms.bench.registry import VALUE_RANGE, PromptParts, SpecError, Task, check_int, field, register


def validated_points(spec: dict, key: str = "points") -> list[list[int]]:
    """The spec's points: a list of integer lists of one common dimension >= 1."""
    points = field(spec, key)
    if not isinstance(points, list):
        raise SpecError(f"{key} must be a list of points (lists of integer coordinates), got {points!r}")
    for i, point in enumerate(points):
        check_point(point, len(points[0]) if isinstance(points[0], list) else 0, f"{key}[{i}]")
    return points


def check_point(point: Any, dimension: int, what: str) -> None:
    if not (isinstance(point, list) and point):
        raise SpecError(f"{what} must be a non-empty list of integer coordinates, got {point!r}")
    for coordinate in point:
        check_int(coordinate, f"{what} coordinate")
    if len(point) != dimension:
        raise SpecError(f"{what} has {len(point)} coordinates, expected {dimension} like the first point: {point!r}")


def _axis_order(point: list[int], axis: int) -> tuple[int, ...]:
    return tuple(point[axis:] + point[:axis])


def build(points: list[list[int]], depth: int = 0) -> list | None:
    if not points:
        return None
    axis = depth % len(points[0])
    ordered = sorted(points, key=lambda p: _axis_order(p, axis))
    median = len(ordered) // 2
    return [list(ordered[median]), build(ordered[:median], depth + 1), build(ordered[median + 1:], depth + 1)]


def solve_construct(spec: dict) -> list | None:
    return build(validated_points(spec))


def tree_points(tree: list | None) -> list[list[int]]:
    """The points of a [point, left, right] tree, in preorder."""
    return [] if tree is None else [tree[0], *tree_points(tree[1]), *tree_points(tree[2])]


def is_median_split(points: list[list[int]], tree: list | None, depth: int = 0) -> bool:
    """Whether `tree` is a median-split K-D tree of `points` for SOME order of points that are equal on a
    node's axis: the rule above without its tie-break, which tells a tie-order difference from a wrong tree."""
    if tree is None or not points:
        return tree is None and not points
    axis, (point, left, right) = depth % len(points[0]), tree
    left_points, right_points = tree_points(left), tree_points(right)
    median = len(points) // 2
    return (sorted(points) == sorted([point, *left_points, *right_points])
            and point[axis] == sorted(p[axis] for p in points)[median] and len(left_points) == median
            and all(p[axis] <= point[axis] for p in left_points) and all(p[axis] >= point[axis] for p in right_points)
            and is_median_split(left_points, left, depth + 1) and is_median_split(right_points, right, depth + 1))


def distinct_axis_points(rng: random.Random, count: int, dimension: int) -> list[list[int]]:
    """Points whose values are distinct on every axis (no ties), within VALUE_RANGE."""
    low, high = VALUE_RANGE
    axes = [rng.sample(range(low, high + 1), count) for _ in range(dimension)]
    return [list(coords) for coords in zip(*axes)]


def spec_from_points(rng: random.Random, points: list[list[int]]) -> dict:
    """The construct spec for given points (the spatial probe supplies its own point sets); `rng` is
    unused here but keeps the signature of kd_heap's and geometric_graph's `spec_from_points`."""
    return {"points": points}


def generate_construct(rng: random.Random, length: int) -> dict:
    return spec_from_points(rng, distinct_axis_points(rng, length, 2))


def format_point(point: list[int]) -> str:
    return "(" + ", ".join(map(str, point)) + ")"


def _definition(dimension: int) -> str:
    return (
        f"A K-D tree over {dimension}-dimensional points is a binary tree that splits space by one "
        "coordinate per level: each node holds a point, the points of its left subtree are not after it "
        "on the node's splitting axis, those of its right subtree not before it."
    )


def _rules(dimension: int) -> str:
    return (
        f"The node at depth d (the root has depth 0) splits on axis d mod {dimension} (axis 0 is the "
        "first coordinate). To build the tree from a set of points, sort them on the current axis, "
        "breaking ties on that coordinate by the next coordinates in cyclic order (axis+1, axis+2, ... "
        f"mod {dimension}); the point at index len // 2 of the sorted list (0-based, so the upper median "
        "when the count is even) becomes the node; the points before it build the left subtree and the "
        "points after it the right subtree, recursively, one level deeper."
    )


def prompt_construct(spec: dict) -> PromptParts:
    points = spec["points"]
    dimension = len(points[0]) if points else 2
    return PromptParts(
        definition=_definition(dimension),
        rules=_rules(dimension),
        name=f"{dimension}-dimensional K-D tree",
        setup=f"Build a K-D tree from these {len(points)} points: "
              + (", ".join(format_point(p) for p in points) or "(none)") + ".",
        question="What is the K-D tree built by median splits?",
        answer_format="a nested list: null for an empty tree, otherwise [point, left, right] with the "
                      "point as a list of coordinates, e.g. [[5, 4], [[2, 3], null, null], null]",
    )


register(Task(category="Spatial", structure="kd_tree", name="construct", answer_type="tree:binary",
              generate=generate_construct, solve=solve_construct, prompt=prompt_construct,
              doc="Spec {points}: the median-split K-D tree (median at index len // 2, axes cycling, "
                  "ties broken by the next coordinates cyclically; the main-suite generator draws "
                  "distinct values per axis, so ties never arise there)."))
