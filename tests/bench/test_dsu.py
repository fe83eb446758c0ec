"""Disjoint-set union against brute-force connectivity, plus the rank and compression rules."""
import random

import networkx as nx
import pytest

from transforms.bench.registry import get_task
from transforms.bench.structures import dsu  # noqa: F401  (registers its tasks)

COMPOUND = get_task("dsu/compound")


def root(parent, x):
    while parent[x] != x:
        x = parent[x]
    return x


def random_spec(rng, size, length):
    operations = [["union", rng.randrange(size), rng.randrange(size)] if rng.random() < 0.6
                  else ["find", rng.randrange(size)] for _ in range(length)]
    return {"size": size, "operations": operations}


def test_sets_match_brute_force_connectivity():
    rng = random.Random(17)
    for _ in range(300):
        spec = random_spec(rng, rng.randint(1, 20), rng.randint(0, 40))
        parent = COMPOUND.solve(spec)
        graph = nx.Graph()
        graph.add_nodes_from(range(spec["size"]))
        graph.add_edges_from(op[1:] for op in spec["operations"] if op[0] == "union")
        for component in nx.connected_components(graph):
            assert len({root(parent, x) for x in component}) == 1
        assert len({root(parent, x) for x in range(spec["size"])}) == nx.number_connected_components(graph)


def test_find_compresses_its_whole_path():
    rng = random.Random(18)
    for _ in range(200):
        spec = random_spec(rng, 12, 20)
        x = rng.randrange(12)
        spec["operations"].append(["find", x])
        parent = COMPOUND.solve(spec)
        assert parent[x] == root(parent, x)


def test_union_by_rank_with_ties_to_x():
    ops = [["union", 0, 1], ["union", 2, 3], ["union", 1, 3]]
    assert COMPOUND.solve({"size": 4, "operations": ops}) == [0, 0, 0, 2]
    # rank 2 root 0 absorbs rank 0 root 4 even when 4 is x
    assert COMPOUND.solve({"size": 5, "operations": ops + [["union", 4, 3]]}) == [0, 0, 0, 0, 0]
    assert COMPOUND.solve({"size": 4, "operations": ops + [["find", 3]]}) == [0, 0, 0, 0]
    assert COMPOUND.solve({"size": 2, "operations": [["union", 1, 0]]}) == [1, 1]


def test_generator_covers_every_length():
    rng = random.Random(19)
    for length in range(5, 31):
        spec = COMPOUND.generate(rng, length)
        assert len(spec["operations"]) == length and spec["size"] == length // 2 + 3
        assert len(COMPOUND.solve(spec)) == spec["size"]


@pytest.mark.parametrize("spec, message", [
    ({"operations": []}, "size"),
    ({"size": 3, "operations": [["union", 0, 3]]}, "element"),
    ({"size": 3, "operations": [["union", 0]]}, "operations"),
    ({"size": 3, "operations": [["merge", 0, 1]]}, "operations"),
])
def test_invalid_specs_are_rejected(spec, message):
    with pytest.raises(ValueError, match=message):
        COMPOUND.solve(spec)


def test_prompt_states_the_rules():
    parts = COMPOUND.prompt(COMPOUND.generate(random.Random(2), 5))
    assert "path compression" in parts.rules and "y's root becomes a child of x's root" in parts.rules
