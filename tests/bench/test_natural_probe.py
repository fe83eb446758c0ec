import re

import networkx as nx

from tests.bench._samples import specs
from transforms.bench.probes import natural
from transforms.bench.registry import get_task


def test_ice_cream_line_matches_a_direct_replay_and_ignores_distractors():
    asides = 0
    for spec in specs("queue/natural_ice_cream"):
        line = list(spec["initial"])
        for event in spec["events"]:
            if event[0] == "join":
                line.append(event[1])
            elif event[0] == "serve":
                line.pop(0)
            asides += event[0] == "aside"
        assert get_task("queue/natural_ice_cream").solve(spec) == line
    assert asides > 0


def _preorder_by_string_keys(bookings):
    root = None
    def insert(node, key):
        if node is None:
            return [key, None, None]
        node[1 if key < node[0] else 2] = insert(node[1 if key < node[0] else 2], key)
        return node
    for key in bookings:
        root = insert(root, key)
    out, stack = [], [root]
    while stack:
        node = stack.pop()
        if node:
            out.append(node[0][1])
            stack.extend([node[2], node[1]])
    return out


def test_clinic_preorder_uses_time_then_name_as_strings():
    for spec in specs("bst/natural_clinic"):
        bookings = [(e[1], e[2]) for e in spec["events"] if e[0] == "book"]
        assert get_task("bst/natural_clinic").solve(spec) == _preorder_by_string_keys(bookings)
    same_time = {"events": [["book", "09:00", "Weber", 0], ["book", "09:00", "Adams", 1], ["aside", "Zhou", 0],
                            ["book", "08:30", "Xu", 2]]}
    assert get_task("bst/natural_clinic").solve(same_time) == ["Weber", "Adams", "Xu"]


def test_tunnels_dfs_against_networkx_with_alphabetical_neighbours():
    for spec in specs("graph/natural_tunnels"):
        graph = nx.Graph()
        graph.add_nodes_from(spec["planets"])
        graph.add_edges_from((e[1], e[2]) for e in spec["events"] if e[0] == "tunnel")
        ordered = nx.Graph()
        ordered.add_nodes_from(sorted(graph))
        ordered.add_edges_from(sorted(tuple(sorted(e)) for e in graph.edges))
        sorted_adjacency = {n: sorted(graph[n]) for n in graph}
        order, seen, stack = [], set(), [spec["start"]]
        while stack:
            node = stack.pop()
            if node not in seen:
                seen.add(node)
                order.append(node)
                stack.extend(reversed(sorted_adjacency[node]))
        assert get_task("graph/natural_tunnels").solve(spec) == order
        assert set(order) == set(nx.node_connected_component(graph, spec["start"]))


def test_stories_use_several_wordings_and_distractor_names():
    task = get_task("graph/natural_tunnels")
    texts = [task.prompt(s).setup for s in specs("graph/natural_tunnels", per_difficulty=5)]
    for wording in natural.TUNNEL_WORDINGS["tunnel"]:
        literal = max(re.split(r"\{\d\}", wording), key=len)
        assert any(literal in t for t in texts), literal
    spec = next(specs("graph/natural_tunnels", per_difficulty=1))
    aside = next(e for e in spec["events"] if e[0] == "aside")
    assert aside[1] not in spec["planets"] and aside[1] in task.prompt(spec).setup
