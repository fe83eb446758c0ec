"""Graph BFS/DFS against networkx with neighbours sorted ascending."""
import random

import networkx as nx
import pytest

from transforms.bench.registry import get_task
from transforms.bench.structures import graph  # noqa: F401  (registers its tasks)

BFS, DFS = get_task("graph/bfs"), get_task("graph/dfs")


def networkx_orders(spec):
    graph = nx.Graph()
    graph.add_nodes_from(range(spec["num_nodes"]))
    graph.add_edges_from((u, v) for u, v in spec["edges"] if u != v)
    start = spec["start"]
    bfs = [start] + [v for _, v in nx.bfs_edges(graph, start, sort_neighbors=sorted)]
    dfs = list(nx.dfs_preorder_nodes(graph, start, sort_neighbors=sorted))
    return bfs, dfs


def random_spec(rng):
    """Any graph, possibly disconnected, with repeated edges and self-loops."""
    size = rng.randint(1, 30)
    edges = [[rng.randrange(size), rng.randrange(size)] for _ in range(rng.randint(0, 2 * size))]
    return {"num_nodes": size, "edges": edges, "start": rng.randrange(size)}


def test_orders_match_networkx_on_arbitrary_graphs():
    rng = random.Random(42)
    for _ in range(300):
        spec = random_spec(rng)
        assert (BFS.solve(spec), DFS.solve(spec)) == networkx_orders(spec)


def test_orders_match_networkx_on_generated_graphs():
    rng = random.Random(43)
    for length in range(5, 31):
        spec = BFS.generate(rng, length)
        bfs, dfs = networkx_orders(spec)
        assert BFS.solve(spec) == bfs and DFS.solve(spec) == dfs
        assert sorted(bfs) == list(range(length)), "generated graphs are connected"


def test_dfs_finishes_a_branch_before_the_next_neighbour():
    spec = {"num_nodes": 5, "edges": [[0, 1], [0, 2], [1, 3], [2, 3], [3, 4]], "start": 0}
    assert DFS.solve(spec) == [0, 1, 3, 2, 4]
    assert BFS.solve(spec) == [0, 1, 2, 3, 4]


def test_generator_covers_every_length():
    rng = random.Random(44)
    for length in range(5, 31):
        spec = DFS.generate(rng, length)
        assert spec["num_nodes"] == length
        assert len(spec["edges"]) == len({tuple(e) for e in spec["edges"]}) >= length - 1
        assert all(u < v for u, v in spec["edges"]) and spec["edges"] == sorted(spec["edges"])


@pytest.mark.parametrize("spec, message", [
    ({"edges": [], "start": 0}, "num_nodes"),
    ({"num_nodes": 0, "edges": [], "start": 0}, "num_nodes"),
    ({"num_nodes": 3, "edges": [[0, 3]], "start": 0}, "edges"),
    ({"num_nodes": 3, "edges": [[0, 1, 2]], "start": 0}, "edges"),
    ({"num_nodes": 3, "edges": [], "start": 5}, "start"),
])
def test_invalid_specs_are_rejected(spec, message):
    for task in (BFS, DFS):
        with pytest.raises(ValueError, match=message):
            task.solve(spec)


def test_prompt_states_the_tie_break():
    parts = DFS.prompt(DFS.generate(random.Random(1), 6))
    assert "ascending order" in parts.rules and "ascending order" in parts.question
