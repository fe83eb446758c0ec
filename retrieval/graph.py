"""The statement graph around one statement: what it uses, what uses it, to a given depth.

A breadth-first walk over the `edges` view, one query per level (the frontier bound as a list), so
a deep neighbourhood costs as many queries as levels, never one per statement.
"""
from __future__ import annotations

import dataclasses
import json

import duckdb

from schemas.errors import UsageError

DIRECTIONS = ("uses", "used-by", "both")
_NODE_COLUMNS = "theorem_id, paper_id, display_name, number, label, title"


@dataclasses.dataclass
class Graph:
    start: str
    nodes: dict[str, dict]              # theorem_id -> its row and "depth"
    edges: list[dict]                   # src, dst, method, location, count


def find_statement(con: duckdb.DuckDBPyConnection, key: str, paper_id: str | None = None) -> str:
    """A theorem id from an id or a label (with `paper_id` when the label is used by several papers)."""
    rows = con.execute("SELECT theorem_id, paper_id FROM theorems WHERE theorem_id = ? OR (label = ? AND "
                       "(? IS NULL OR paper_id = ?))", [key, key, paper_id, paper_id]).fetchall()
    exact = [r for r in rows if r[0] == key]
    if exact:
        return key
    if not rows:
        raise UsageError(f"no statement with id or label {key!r}" + (f" in {paper_id}" if paper_id else ""))
    if len(rows) > 1:
        papers = ", ".join(sorted({r[1] for r in rows})[:5])
        raise UsageError(f"label {key!r} is used in several papers ({papers}): name one with --paper")
    return rows[0][0]


def neighbourhood(con: duckdb.DuckDBPyConnection, start: str, direction: str = "uses", depth: int = 1) -> Graph:
    """Statements within `depth` `uses` edges of `start`, following them forwards, backwards or both."""
    if direction not in DIRECTIONS:
        raise UsageError(f"--direction: one of {', '.join(DIRECTIONS)}")
    depths = {start: 0}
    edges: dict[tuple, dict] = {}
    frontier = [start]
    for level in range(1, depth + 1):
        if not frontier:
            break
        found = con.execute(
            "SELECT src_theorem_id, dst_theorem_id, method, location, sum(count) FROM edges "
            "WHERE relation = 'uses' AND dst_theorem_id IS NOT NULL AND src_theorem_id <> dst_theorem_id AND ("
            "(? AND src_theorem_id IN (SELECT unnest(?))) OR (? AND dst_theorem_id IN (SELECT unnest(?)))) "
            "GROUP BY ALL ORDER BY ALL",
            [direction != "used-by", frontier, direction != "uses", frontier]).fetchall()
        nxt = []
        for src, dst, method, location, count in found:
            edges[(src, dst, method, location)] = {"src": src, "dst": dst, "method": method, "location": location,
                                                   "count": int(count)}
            for node in (src, dst):
                if node not in depths:
                    depths[node] = level
                    nxt.append(node)
        frontier = nxt
    rows = con.execute(f"SELECT {_NODE_COLUMNS} FROM theorems WHERE theorem_id IN (SELECT unnest(?))",
                       [list(depths)]).fetchall()
    names = _NODE_COLUMNS.split(", ")
    nodes = {r[0]: {**dict(zip(names, r)), "depth": depths[r[0]]} for r in rows}
    return Graph(start, dict(sorted(nodes.items(), key=lambda kv: (kv[1]["depth"], kv[0]))), list(edges.values()))


def _name(node: dict) -> str:
    printed = f"{node['display_name'] or ''} {node['number'] or ''}".strip()
    return printed + (f" [{node['label']}]" if node.get("label") else "")


def as_json(graph: Graph) -> str:
    return json.dumps({"start": graph.start, "nodes": list(graph.nodes.values()), "edges": graph.edges},
                      ensure_ascii=False, indent=1)


def as_dot(graph: Graph) -> str:
    lines = ["digraph uses {", "  rankdir=LR;"]
    for theorem_id, node in graph.nodes.items():
        style = ", style=bold" if theorem_id == graph.start else ""
        lines.append(f"  {json.dumps(theorem_id)} [label={json.dumps(_name(node))}{style}];")
    for edge in graph.edges:
        lines.append(f"  {json.dumps(edge['src'])} -> {json.dumps(edge['dst'])} [label={json.dumps(edge['method'])}];")
    return "\n".join(lines + ["}"])


def as_table(graph: Graph) -> str:
    lines = [f"{'depth':>5}  {'statement':<40}  {'paper':<24}  uses / used by (methods)"]
    for theorem_id, node in graph.nodes.items():
        out = sorted({_name(graph.nodes[e["dst"]]) for e in graph.edges if e["src"] == theorem_id
                      and e["dst"] in graph.nodes})
        into = sorted({_name(graph.nodes[e["src"]]) for e in graph.edges if e["dst"] == theorem_id
                       and e["src"] in graph.nodes})
        links = "; ".join(filter(None, [("uses " + ", ".join(out)) if out else "",
                                         ("used by " + ", ".join(into)) if into else ""]))
        lines.append(f"{node['depth']:>5}  {_name(node):<40}  {node['paper_id']:<24}  {links}")
    return "\n".join(lines)
