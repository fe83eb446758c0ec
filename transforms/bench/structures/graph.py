"""Undirected graph traversals (Network): breadth-first and depth-first search.

Rules (as in DSR-Bench's released answers, and stated in every prompt): nodes are 0..n-1; the
traversal starts at `start` and visits only nodes reachable from it; neighbours are taken in
ascending order. BFS uses a FIFO queue and marks a node visited when it is enqueued. DFS is the
recursive preorder: on visiting a node, go into each not yet visited neighbour in ascending order,
finishing that whole branch before the next neighbour. Repeated edges and self-loops change
nothing.

Tasks
- graph/bfs and graph/dfs: spec {"num_nodes": int >= 1, "edges": [[u, v], ...], "start": int}
  -> the visiting order (list[int]). length = number of nodes. The generator draws a random
  spanning tree plus about n/2 extra edges, so every node is reachable.
"""
from __future__ import annotations

import collections
import random
from typing import Callable

from transforms.bench.registry import PromptParts, SpecError, Task, check_int, field, int_field, register


def adjacency(spec: dict) -> tuple[list[list[int]], int]:
    """Validate the spec; return sorted, de-duplicated neighbour lists and the start node."""
    size = int_field(spec, "num_nodes", lo=1)
    edges = field(spec, "edges")
    if not isinstance(edges, list):
        raise SpecError(f"edges must be a list of [u, v] pairs, got {edges!r}")
    neighbours: list[set[int]] = [set() for _ in range(size)]
    for i, edge in enumerate(edges):
        if not (isinstance(edge, list) and len(edge) == 2):
            raise SpecError(f"edges[{i}] must be a pair [u, v], got {edge!r}")
        u, v = (check_int(node, f"edges[{i}] node", 0, size - 1) for node in edge)
        if u != v:
            neighbours[u].add(v)
            neighbours[v].add(u)
    return [sorted(n) for n in neighbours], int_field(spec, "start", 0, size - 1)


def bfs(neighbours: list[list[int]], start: int) -> list[int]:
    order, seen, queue = [], {start}, collections.deque([start])
    while queue:
        node = queue.popleft()
        order.append(node)
        for nxt in neighbours[node]:
            if nxt not in seen:
                seen.add(nxt)
                queue.append(nxt)
    return order


def dfs(neighbours: list[list[int]], start: int) -> list[int]:
    """Recursive preorder, run with an explicit stack of neighbour iterators (no recursion limit)."""
    order, seen = [start], {start}
    stack = [iter(neighbours[start])]
    while stack:
        for nxt in stack[-1]:
            if nxt not in seen:
                seen.add(nxt)
                order.append(nxt)
                stack.append(iter(neighbours[nxt]))
                break
        else:
            stack.pop()
    return order


def solve_bfs(spec: dict) -> list[int]:
    return bfs(*adjacency(spec))


def solve_dfs(spec: dict) -> list[int]:
    return dfs(*adjacency(spec))


def generate(rng: random.Random, length: int) -> dict:
    """A random spanning tree on `length` nodes plus about length // 2 extra distinct edges."""
    nodes = list(range(length))
    rng.shuffle(nodes)
    edges = {tuple(sorted((nodes[i], nodes[rng.randrange(i)]))) for i in range(1, length)}
    missing = length * (length - 1) // 2 - len(edges)
    for _ in range(min(length // 2, missing)):
        while True:
            u, v = sorted(rng.sample(range(length), 2))
            if (u, v) not in edges:
                edges.add((u, v))
                break
    return {"num_nodes": length, "edges": [list(e) for e in sorted(edges)], "start": rng.randrange(length)}


DEFINITION = (
    "An undirected graph has nodes numbered 0 to n-1 and edges joining pairs of nodes; the neighbours "
    "of a node are the nodes it shares an edge with."
)
RULES = (
    "Neighbours are always taken in ascending order. Breadth-first search (BFS) from a start node: "
    "mark the start visited and put it in a FIFO queue; repeatedly take the node at the front of the "
    "queue, record it, and append each of its not yet visited neighbours in ascending order, marking "
    "them visited when they are appended. Depth-first search (DFS) from a start node: record the node "
    "and mark it visited, then for each neighbour in ascending order that is not yet visited, run DFS "
    "from that neighbour (completing its whole branch before moving to the next neighbour). Only "
    "nodes reachable from the start are recorded."
)


def _prompt(method: str) -> Callable[[dict], PromptParts]:
    def prompt(spec: dict) -> PromptParts:
        edges = ", ".join(f"{u}-{v}" for u, v in spec["edges"]) or "(none)"
        return PromptParts(
            definition=DEFINITION,
            rules=RULES,
            name="undirected graph",
            setup=f"The graph has {spec['num_nodes']} nodes, numbered 0 to {spec['num_nodes'] - 1}, and "
                  f"these edges: {edges}.",
            question=f"In which order does {method} starting from node {spec['start']} visit the nodes, "
                     "taking neighbours in ascending order?",
            answer_format="a list of integers: the nodes in visiting order, starting with the start node",
        )
    return prompt


register(Task(category="Network", structure="graph", name="bfs", answer_type="list[int]",
              generate=generate, solve=solve_bfs, prompt=_prompt("breadth-first search (BFS)"),
              doc="Spec {num_nodes, edges, start}: the BFS visiting order, neighbours ascending."))
register(Task(category="Network", structure="graph", name="dfs", answer_type="list[int]",
              generate=generate, solve=solve_dfs, prompt=_prompt("depth-first search (DFS)"),
              doc="Spec {num_nodes, edges, start}: the recursive DFS preorder, neighbours ascending."))
