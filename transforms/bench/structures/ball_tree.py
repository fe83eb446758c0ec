"""Ball tree (Spatial, suite "extended"): construction with a leaf size; answer the node centroids.

Rules (DSR-Bench's construction, stated in every prompt): a node covers a list of points and its
centroid is their coordinate-wise mean. A node with at most `leaf_size` points is a leaf.
Otherwise two pivots are chosen by the two-step farthest-point heuristic: B is the point farthest
from the node's FIRST point, C the point farthest from B (Euclidean distance; on a tie the earlier
point in the node's list wins); each point, in list order, goes to the left child if it is at
least as close to B as to C, else to the right child (children keep the list order). The answer
lists the centroids in preorder (node, left subtree, right subtree), each coordinate rounded to 2
decimals (DSR-Bench writes full floats; rounding makes the stated answer exact to compare).

Task
- ball_tree/construct: spec {"points": [[c1, ..., ck], ...] (integers, one dimension k >= 1),
  "leaf_size": int >= 1} -> list of centroids ("json": a list of lists of numbers). length =
  number of points.
"""
from __future__ import annotations

import random

from transforms.bench.registry import PromptParts, Task, int_field, register
from transforms.bench.structures.kd_tree import distinct_axis_points, format_point, validated_points

DECIMALS = 2


def _squared_distance(a: list[int], b: list[int]) -> int:
    return sum((x - y) ** 2 for x, y in zip(a, b))


def _farthest(points: list[list[int]], origin: list[int]) -> list[int]:
    """The first point at the largest distance from `origin` (max keeps the earliest on ties)."""
    return max(points, key=lambda p: _squared_distance(origin, p))


def centroid(points: list[list[int]]) -> list[float]:
    return [round(sum(p[axis] for p in points) / len(points), DECIMALS) for axis in range(len(points[0]))]


def preorder_centroids(points: list[list[int]], leaf_size: int) -> list[list[float]]:
    if not points:
        return []
    found = [centroid(points)]
    if len(points) <= leaf_size:
        return found
    b = _farthest(points, points[0])
    c = _farthest(points, b)
    left = [p for p in points if _squared_distance(p, b) <= _squared_distance(p, c)]
    right = [p for p in points if _squared_distance(p, b) > _squared_distance(p, c)]
    if not right:  # every point equidistant from both pivots (all points equal): a leaf
        return found
    return found + preorder_centroids(left, leaf_size) + preorder_centroids(right, leaf_size)


def solve_construct(spec: dict) -> list[list[float]]:
    return preorder_centroids(validated_points(spec), int_field(spec, "leaf_size", 1))


def generate_construct(rng: random.Random, length: int) -> dict:
    """`length` 2-D points on the 0..100 grid, distinct on each axis; leaf size 2, 3 or 5 by length
    (DSR-Bench's leaf sizes for its easy, medium and hard trees)."""
    leaf_size = 2 if length <= 10 else 3 if length <= 20 else 5
    return {"points": distinct_axis_points(rng, length, 2), "leaf_size": leaf_size}


def _rules(leaf_size: int) -> str:
    return (
        f"A node with at most {leaf_size} points is a leaf. Otherwise choose two pivots: B is the point farthest "
        "from the node's first point, and C is the point farthest from B (Euclidean distance; if several points "
        "are equally far, take the one that comes first in the node's list). Going through the node's points in "
        "order, a point at least as close to B as to C goes to the left child, any other point to the right "
        "child; each child keeps the points in that order. A node's centroid is the mean of its points, "
        f"coordinate by coordinate, rounded to {DECIMALS} decimals. List the centroids in preorder: a node, then "
        "its left subtree, then its right subtree."
    )


def prompt_construct(spec: dict) -> PromptParts:
    points = spec["points"]
    return PromptParts(
        definition=("A ball tree splits a set of points recursively: every node covers some points and is "
                    "summarised by their centroid; a node with few enough points is a leaf, a larger node splits "
                    "its points between two children by proximity to two pivot points."),
        rules=_rules(spec["leaf_size"]),
        name=f"ball tree (leaf size {spec['leaf_size']})",
        setup=f"Build a ball tree with leaf size {spec['leaf_size']} from these {len(points)} points, in this "
              "order: " + (", ".join(format_point(p) for p in points) or "(none)") + ".",
        question="What are the centroids of the tree's nodes, in preorder?",
        answer_format=f"a list of centroids, each a list of coordinates rounded to {DECIMALS} decimals, "
                      "e.g. [[55.8, 31.7], [53.67, 72.33]]",
    )


register(Task(category="Spatial", structure="ball_tree", name="construct", answer_type="json",
              generate=generate_construct, solve=solve_construct, prompt=prompt_construct, doc=__doc__,
              suite="extended"))
