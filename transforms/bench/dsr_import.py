"""Readers for DSR-Bench's released instance files: plain text and Python literals, never executed.

A checkout of DSR-Bench's repository keeps one file per task and difficulty: under `generation/`
a file such as `priority_queue/compound/compound_easy.txt` holds blocks of operations followed by
the answer as a Python literal; under `natural/` a file such as `bst/natural-easy.txt` holds the
stories' events the same way; BST and graph files take their inputs from a sibling input file
(`bst_input_{d}.txt`, `graph_input_{d}.txt`), block k with block k. Each `FileFormat` cuts a file
into blocks and parses each into `DsrItem`s: the thmforge task and spec that state the same input,
and DSR-Bench's answer written in the task's answer shape (a traversal turned into the tree it
determines, labels renumbered 0..n-1 where thmforge numbers its elements). Literals are read with
`ast.literal_eval` only.

Read: array (access, delete, insert, reverse, search), stack, queue, priority queue, heap
(compound, heapify), BST (insert, remove, traversals and depth, compound), red-black tree
(construct, compound, and insert, delete and compound on a given coloured tree), B+ tree, hash map, LRU cache,
skip list, DSU, graph BFS/DFS, geometric-graph BFS (1, 2, 3, 5 D), trie and DAWG (in DSR-Bench's
answer shapes: the trie's letters in preorder, the DAWG's states named by their first word),
suffix tree (edge labels in preorder), counting Bloom filter, K-D tree (1-5 D and shaped point
sets), K-D heap, ball tree, and the three natural-language stories. Not read (listed as skipped by
the importer): array sorting (the files hold only the sorted arrays, not the arrays to sort), and
the `archived/` and superseded folders.

A block that cannot be read raises `DsrFormatError` naming the line; the importer records it as
failed and goes on.
"""
from __future__ import annotations

import ast
import dataclasses
import re
from typing import Any, Callable

from transforms.bench.registry import SpecError, get_task
from transforms.bench.structures import bst, red_black_tree
from transforms.bench.structures.ball_tree import DECIMALS

DIFFICULTY = re.compile(r"(easy|medium|hard)")


class DsrFormatError(ValueError):
    """A block of a DSR-Bench file that does not have the expected shape."""


@dataclasses.dataclass(frozen=True)
class DsrItem:
    """One DSR-Bench instance stated as a thmforge spec, with DSR-Bench's answer in the task's shape."""

    task_id: str
    spec: dict
    answer: Any
    length: int
    line: int                 # 1-based line of the block's first line in the file


Line = tuple[int, str]          # (1-based line number, stripped text)


@dataclasses.dataclass(frozen=True)
class FileFormat:
    """Files matching `pattern` (a regex on the path relative to the checkout): `split` cuts the
    text into blocks of lines, `parse` turns one block into a DsrItem (or raises DsrFormatError)."""

    pattern: str
    split: Callable[[str], list[list[Line]]]
    parse: Callable[..., DsrItem | list[DsrItem]]   # (block) or, with `inputs`, (block, its input block)
    variant: Callable[[re.Match], str] = lambda match: ""
    inputs: str | None = None        # the file holding each block's input (same order), "{d}" = difficulty
    split_inputs: Callable[[str], list[list[Line]]] | None = None


def literal(text: str, line: int) -> Any:
    try:
        return ast.literal_eval(text.strip())
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError) as exc:
        raise DsrFormatError(f"line {line}: not a Python literal ({type(exc).__name__}): {text.strip()[:60]!r}") from None


def _lines(text: str) -> list[Line]:
    return [(n, line.strip()) for n, line in enumerate(text.splitlines(), 1) if line.strip()]


def answer_terminated(text: str) -> list[list[Line]]:
    """Blocks that end with their answer, the first line starting with '[' (a trailing block
    without one is kept, and fails to parse)."""
    blocks, block = [], []
    for number, line in _lines(text):
        block.append((number, line))
        if line.startswith("["):
            blocks.append(block)
            block = []
    return blocks + ([block] if block else [])


def headed(prefix: str) -> Callable[[str], list[list[Line]]]:
    """Blocks that start at each line beginning with `prefix`."""
    def split(text: str) -> list[list[Line]]:
        blocks: list[list[Line]] = []
        for number, line in _lines(text):
            if line.startswith(prefix) or not blocks:
                blocks.append([])
            blocks[-1].append((number, line))
        return blocks
    return split


def blank_separated(text: str) -> list[list[Line]]:
    """Blocks separated by blank lines."""
    blocks: list[list[Line]] = [[]]
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip():
            blocks[-1].append((number, line.strip()))
        elif blocks[-1]:
            blocks.append([])
    return [b for b in blocks if b]


def fixed_size(size: int) -> Callable[[str], list[list[Line]]]:
    """Blocks of `size` non-empty lines."""
    def split(text: str) -> list[list[Line]]:
        lines = _lines(text)
        return [lines[i:i + size] for i in range(0, len(lines), size)]
    return split


def _answer(block: list[Line]) -> Any:
    number, line = block[-1]
    if not line.startswith("["):
        raise DsrFormatError(f"line {number}: the block has no answer line (a list)")
    return literal(line, number)


def _body(block: list[Line], header: re.Pattern | None = None) -> tuple[re.Match | None, list[Line]]:
    """The block's header match (when a header is expected) and its operation lines."""
    if header is None:
        return None, block[:-1]
    found = header.match(block[0][1])
    if not found:
        raise DsrFormatError(f"line {block[0][0]}: expected a header like {header.pattern!r}, got {block[0][1]!r}")
    return found, block[1:-1]


def _ints(parts: list[str], line: int) -> list[int]:
    try:
        return [int(p) for p in parts]
    except ValueError:
        raise DsrFormatError(f"line {line}: expected integers, got {' '.join(parts)!r}") from None


def _unknown(what: str, number: int, line: str) -> DsrFormatError:
    return DsrFormatError(f"line {number}: unknown {what} operation {line!r}")


# --- generation/ files ---------------------------------------------------------------------------

def _simple_operations(body: list[Line], names: dict[str, tuple[str, int]], what: str) -> list[list]:
    """'name [int]' lines -> thmforge operations; `names` maps DSR-Bench's name to (ours, argument count)."""
    operations = []
    for number, line in body:
        name, *args = line.split()
        if name not in names or len(args) != names[name][1]:
            raise _unknown(what, number, line)
        operations.append([names[name][0], *_ints(args, number)])
    return operations


def parse_queue(block: list[Line]) -> DsrItem:
    operations = _simple_operations(_body(block)[1], {"enqueue": ("enqueue", 1), "dequeue": ("dequeue", 0)}, "queue")
    return DsrItem("queue/compound", {"initial": [], "operations": operations}, _answer(block), len(operations),
                   block[0][0])


def parse_stack(block: list[Line]) -> DsrItem:
    operations = _simple_operations(_body(block)[1], {"push": ("push", 1), "pop": ("pop", 0)}, "stack")
    return DsrItem("stack/compound", {"initial": [], "operations": operations}, _answer(block), len(operations),
                   block[0][0])


def parse_heap(block: list[Line]) -> DsrItem:
    """A min-heap from empty; DSR-Bench's delete removes the root (thmforge's extract)."""
    body = _body(block, re.compile(r"^Heap \d+$"))[1]
    operations = _simple_operations(body, {"insert": ("insert", 1), "delete": ("extract", 0)}, "heap")
    return DsrItem("heap/compound", {"kind": "min", "values": [], "operations": operations}, _answer(block),
                   len(operations), block[0][0])


PQ_OP = re.compile(r"^(insert|raise_key|decrease_key)\s*\(\s*(-?\d+)\s*,\s*(-?\d+)\s*\)$")
PQ_NAMES = {"insert": "insert", "raise_key": "increase_key", "decrease_key": "decrease_key"}


def parse_priority_queue(block: list[Line]) -> DsrItem:
    operations = []
    for number, line in _body(block, re.compile(r"^PriorityQueue \d+$"))[1]:
        found = PQ_OP.match(line)
        if line == "delete":
            operations.append(["delete"])
        elif found:
            operations.append([PQ_NAMES[found[1]], int(found[2]), int(found[3])])
        else:
            raise _unknown("priority-queue", number, line)
    return DsrItem("priority_queue/compound", {"initial": [], "operations": operations}, _answer(block),
                   len(operations), block[0][0])


def parse_bloom_filter(block: list[Line]) -> DsrItem:
    sizes, body = _body(block, re.compile(r"^CountingBloomFilter \d+ \(m: (\d+), k: (\d+)\)$"))
    operations = []
    for number, line in body:
        name, *args = line.split()
        if name not in ("insert", "delete") or len(args) != 1:
            raise _unknown("Bloom-filter", number, line)
        operations.append([name, *_ints(args, number)])
    spec = {"m": int(sizes[1]), "k": int(sizes[2]), "operations": operations, "delete_rule": "clamped"}
    return DsrItem("bloom_filter/compound_clamped", spec, _answer(block), len(operations), block[0][0])


KD_HEAP_INSERT = re.compile(r"^insert\s*\(\s*(-?\d+)\s*,\s*(\[[-\d,\s]*\])\s*\)$")


def parse_kd_heap(block: list[Line]) -> DsrItem:
    operations = []
    for number, line in _body(block, re.compile(r"^Heap \d+, Dimension: \d+$"))[1]:
        found = KD_HEAP_INSERT.match(line)
        if line == "delete":
            operations.append(["extract"])
        elif found:
            operations.append(["insert", int(found[1]), literal(found[2], number)])
        else:
            raise _unknown("K-D heap", number, line)
    return DsrItem("kd_heap/labelled_compound", {"operations": operations}, _answer(block), len(operations),
                   block[0][0])


def _prefixed(line: Line, prefix: str) -> Any:
    number, text = line
    if not text.startswith(prefix):
        raise DsrFormatError(f"line {number}: expected {prefix!r}, got {text[:40]!r}")
    return literal(text[len(prefix):], number)


def parse_ball_tree(block: list[Line]) -> DsrItem:
    head = re.match(r"^Tree \d+, M = (\d+)$", block[0][1])
    if len(block) != 3 or not head:
        raise DsrFormatError(f"line {block[0][0]}: expected 'Tree N, M = K', 'Points: ...', 'Traversal: ...'")
    spec = {"points": _prefixed(block[1], "Points:"), "leaf_size": int(head[1])}
    centroids = _prefixed(block[2], "Traversal:")
    answer = [[round(c, DECIMALS) for c in centroid] for centroid in centroids]
    return DsrItem("ball_tree/construct", spec, answer, len(spec["points"]), block[0][0])


def numbered_blocks(text: str) -> list[list[Line]]:
    """Blocks that start with a line holding only the instance number (the array files)."""
    blocks: list[list[Line]] = []
    for number, line in _lines(text):
        if line.isdigit() or not blocks:
            blocks.append([])
        blocks[-1].append((number, line))
    return blocks


def _labelled(block: list[Line], labels: tuple[str, ...]) -> tuple[list, dict[str, Any], Any]:
    """(the array, {label: value}, the answer) of a block 'N / [array] / Label: value ... / Answer: v'."""
    if len(block) != 3 + len(labels):
        raise DsrFormatError(f"line {block[0][0]}: expected a number, an array, "
                             + "".join(f"'{label}: ...', " for label in labels) + "and 'Answer: ...'")
    values = {label: _prefixed(line, f"{label}:") for label, line in zip(labels, block[2:-1])}
    return literal(block[1][1], block[1][0]), values, _prefixed(block[-1], "Answer:")


def _array_item(task: str, block: list[Line], labels: tuple[str, ...],
                spec: Callable[[list, dict[str, Any]], dict]) -> DsrItem:
    array, values, answer = _labelled(block, labels)
    return DsrItem(f"array/{task}", spec(array, values), answer, len(array), block[0][0])


def _first_index(array: list, value: Any, line: int) -> int:
    """DSR-Bench deletes by value (the first occurrence); thmforge's delete takes its index."""
    if value not in array:
        raise DsrFormatError(f"line {line}: the element to delete, {value!r}, is not in the array")
    return array.index(value)


ARRAY_TASKS = {
    "access": (("Index",), lambda a, v, line: {"array": a, "index": v["Index"]}),
    "delete": (("Element",), lambda a, v, line: {"array": a, "index": _first_index(a, v["Element"], line)}),
    "insert": (("Index", "Element"), lambda a, v, line: {"array": a, "index": v["Index"], "value": v["Element"]}),
    "reverse": ((), lambda a, v, line: {"array": a}),
    "search": (("Element",), lambda a, v, line: {"array": a, "value": v["Element"]}),
}


def array_parser(task: str) -> Callable[[list[Line]], DsrItem]:
    labels, make = ARRAY_TASKS[task]
    return lambda block: _array_item(task, block, labels, lambda a, v: make(a, v, block[0][0]))


HASH_ADD = re.compile(r"^add key (-?\d+) value (-?\d+)$")


def parse_hash_map(block: list[Line]) -> DsrItem:
    """'HashMap N with B buckets', 'add key k value v' / 'remove k', 'Final HashMap: [[(k, v), ...], ...]'."""
    head = re.match(r"^HashMap \d+ with (\d+) buckets$", block[0][1])
    if not head or not block[-1][1].startswith("Final HashMap:"):
        raise DsrFormatError(f"line {block[0][0]}: expected 'HashMap N with B buckets', operations, 'Final HashMap: ...'")
    operations = []
    for number, line in block[1:-1]:
        found = HASH_ADD.match(line)
        if found:
            operations.append(["put", int(found[1]), int(found[2])])
        elif re.match(r"^remove -?\d+$", line):
            operations.append(["delete", int(line.split()[1])])
        else:
            raise _unknown("hash map", number, line)
    buckets = _prefixed(block[-1], "Final HashMap:")
    answer = [[list(pair) for pair in bucket] for bucket in buckets]
    return DsrItem("hash_map/compound", {"buckets": int(head[1]), "operations": operations}, answer,
                   len(operations), block[0][0])


def median_tree(preorder: list) -> list | None:
    """The median-split K-D tree whose preorder is given: a node over m points has m // 2 points on
    its left and the rest (less itself) on its right, so the shape follows from the count alone."""
    if not preorder:
        return None
    left = len(preorder) // 2
    return [preorder[0], median_tree(preorder[1:1 + left]), median_tree(preorder[1 + left:])]


KD_VARIANTS = {"1d": "1d", "2d": "2d", "3d": "3d", "5d": "5d", "blob": "blobs", "circle": "circles", "moon": "moons"}


def parse_kd_tree(block: list[Line]) -> DsrItem:
    """'Tree N', 'Points: [...]', 'Traversal: [...]' (the tree's points in preorder)."""
    if len(block) != 3 or not re.match(r"^Tree \d+$", block[0][1]):
        raise DsrFormatError(f"line {block[0][0]}: expected 'Tree N', 'Points: ...', 'Traversal: ...'")
    points, preorder = _prefixed(block[1], "Points:"), _prefixed(block[2], "Traversal:")
    return DsrItem("kd_tree/construct", {"points": points}, median_tree(preorder), len(points), block[0][0])


def parse_skip_list(block: list[Line]) -> DsrItem:
    """'SkipList N (Max Level: M)', 'insert v' (then 'Level generation probabilities: p, ...' for a new
    value), 'delete v', and the levels TOP level first (thmforge lists level 0 first)."""
    head = re.match(r"^SkipList \d+ \(Max Level: (\d+)\)$", block[0][1])
    if not head:
        raise DsrFormatError(f"line {block[0][0]}: expected 'SkipList N (Max Level: M)', got {block[0][1]!r}")
    operations: list[list] = []
    for number, line in block[1:-1]:
        if line.startswith("Level generation probabilities:"):
            if not operations or operations[-1][0] != "insert" or operations[-1][2]:
                raise DsrFormatError(f"line {number}: coin values that follow no insert")
            try:
                operations[-1][2] = [float(c) for c in line.split(":", 1)[1].split(",")]
            except ValueError:
                raise DsrFormatError(f"line {number}: coin values must be numbers") from None
        elif re.match(r"^(insert|delete) -?\d+$", line):
            name, value = line.split()
            operations.append(["insert", int(value), []] if name == "insert" else ["delete", int(value)])
        else:
            raise _unknown("skip list", number, line)
    levels = _answer(block)
    return DsrItem("skip_list/compound", {"max_level": int(head[1]), "operations": operations}, levels[::-1],
                   len(operations), block[0][0])


def _search_readings(items: list, start: int, low: Any, high: Any):
    """Every way items[start:] begins with a search subtree whose keys lie in [low, high] (None for an
    empty one), as (tree, index after it); an equal key is tried in the right subtree first."""
    if start < len(items) and (low is None or items[start][0] >= low) and (high is None or items[start][0] <= high):
        key, colour = items[start]
        for left, after_left in [(None, start + 1), *_nonempty(_search_readings(items, start + 1, low, key))]:
            for right, after in _search_readings(items, after_left, key, high):
                yield [[key, colour], left, right], after
    yield None, start


def _nonempty(readings):
    return ((tree, after) for tree, after in readings if tree is not None)


def _coloured_tree(preorder: list, task_id: str | None = None, spec: dict | None = None) -> list | None:
    """The red-black tree with this preorder of [key, colour] as thmforge's null | [[key, "R"|"B"], left,
    right]. Distinct keys determine it; a repeated key may sit in either subtree of an equal one (rotations
    move it), so every search-tree reading whose colours make a red-black tree is a candidate: DSR-Bench's
    preorder cannot tell them apart, so when the operations of `spec` produce one of them, that one is it,
    else the first (equal keys to the right first, where insertion puts them)."""
    items = [[key, str(colour).upper()[:1]] for key, colour in preorder]
    candidates = []
    for tree, after in _search_readings(items, 0, None, None):
        if after == len(items):
            try:
                red_black_tree.RedBlackTree.load(tree)
            except SpecError:
                continue
            candidates.append(tree)
    if not candidates:
        raise DsrFormatError("the preorder is not that of a red-black tree (no search-tree reading has valid colours)")
    if len(candidates) > 1 and task_id is not None:
        try:
            produced = get_task(task_id).solve(spec)
        except SpecError:
            produced = None
        if produced in candidates:
            return produced
    return candidates[0]


def parse_rb_construct(block: list[Line]) -> DsrItem:
    if len(block) != 3 or not re.match(r"^Tree \d+$", block[0][1]):
        raise DsrFormatError(f"line {block[0][0]}: expected 'Tree N', 'Values: [...]', 'Pre-order: [...]'")
    spec = {"keys": _prefixed(block[1], "Values:")}
    answer = _coloured_tree(_prefixed(block[2], "Pre-order:"), "red_black_tree/construct", spec)
    return DsrItem("red_black_tree/construct", spec, answer, len(spec["keys"]), block[0][0])


def parse_rb_compound(block: list[Line], tree: list[Line] | None = None) -> DsrItem:
    """'Tree N', 'Insert: k' / 'Delete: k' lines, 'Pre-order: [[k, colour], ...]': from an empty tree, or
    (construct_compound) from input tree N given with its colours."""
    operations = []
    for number, line in block[1:-1]:
        name, _, key = line.partition(":")
        if name not in ("Insert", "Delete"):
            raise _unknown("red-black tree", number, line)
        operations.append([name.lower(), *_ints([key.strip()], number)])
    if tree is None:
        task_id, spec = "red_black_tree/compound", {"keys": [], "operations": operations}
    else:
        task_id, spec = "red_black_tree/tree_compound", {"tree": coloured_input_tree(tree), "operations": operations}
    answer = _coloured_tree(_prefixed(block[-1], "Pre-order:"), task_id, spec)
    return DsrItem(task_id, spec, answer, len(operations), block[0][0])


def nodes_to_tree(level_order: list[list[int]]) -> list:
    """B+ tree nodes listed level by level -> thmforge's [keys, [children]]: going through the list,
    each node takes the next len(keys) + 1 unclaimed nodes as its children until none are left."""
    nodes = [[list(keys), []] for keys in level_order]
    claimed = 1
    for node in nodes:
        if claimed >= len(nodes):
            break
        node[1] = nodes[claimed:claimed + len(node[0]) + 1]
        claimed += len(node[0]) + 1
    if claimed != len(nodes) and len(nodes) > 1:
        raise DsrFormatError(f"the {len(nodes)} nodes do not form a B+ tree (children counts do not add up)")
    return nodes[0] if nodes else [[], []]


def parse_bplus_tree(block: list[Line]) -> DsrItem:
    """'BPlusTree N (Order: m)', 'insert k' / 'delete k', then the nodes' keys level by level."""
    order, body = _body(block, re.compile(r"^BPlusTree \d+ \(Order: (\d+)\)$"))
    operations = _simple_operations(body, {"insert": ("insert", 1), "delete": ("delete", 1)}, "B+ tree")
    return DsrItem("bplus_tree/compound", {"order": int(order[1]), "operations": operations},
                   nodes_to_tree(_answer(block)), len(operations), block[0][0])


def parse_heapify(block: list[Line]) -> DsrItem:
    if len(block) != 3 or not re.match(r"^Heap \d+$", block[0][1]):
        raise DsrFormatError(f"line {block[0][0]}: expected 'Heap N', the values and the heapified array")
    values = literal(block[1][1], block[1][0])
    return DsrItem("heap/heapify", {"kind": "min", "values": values}, _answer(block), len(values), block[0][0])


def parse_lru(block: list[Line]) -> DsrItem:
    head = re.match(r"^LRU Cache Simulation \d+, Cache Size: (\d+)$", block[0][1])
    if not head or not block[-1][1].startswith("Final Cache:"):
        raise DsrFormatError(f"line {block[0][0]}: expected 'LRU Cache Simulation N, Cache Size: C', accesses, "
                             "'Final Cache: [...]'")
    accesses = _simple_operations(block[1:-1], {"access": ("access", 1)}, "LRU cache")
    return DsrItem("lru_cache/access", {"capacity": int(head[1]), "accesses": [op[1] for op in accesses]},
                   _prefixed(block[-1], "Final Cache:"), len(accesses), block[0][0])


def _positions(labels: list, what: str, line: int) -> dict:
    if len(set(labels)) != len(labels):
        raise DsrFormatError(f"line {line}: the {what} labels repeat")
    return {label: i for i, label in enumerate(labels)}


def _relabel(values: list, index: dict, line: int) -> list[int]:
    unknown = [v for v in values if v not in index]
    if unknown:
        raise DsrFormatError(f"line {line}: labels {unknown[:5]} are not among the elements")
    return [index[v] for v in values]


DSU_UNION = re.compile(r"^union\((-?\d+),\s*(-?\d+)\)$")


def parse_dsu(block: list[Line]) -> DsrItem:
    """The elements' labels, 'union(a, b)' lines, then find(x) of each element (labels: DSR-Bench asks
    for each element's root, not its parent); thmforge numbers the elements 0..n-1 by their position
    in the label list."""
    labels = literal(block[0][1], block[0][0])
    index = _positions(labels, "element", block[0][0])
    operations = []
    for number, line in block[1:-1]:
        found = DSU_UNION.match(line)
        if not found:
            raise _unknown("DSU", number, line)
        operations.append(["union", *_relabel([int(found[1]), int(found[2])], index, number)])
    roots = _relabel(_answer(block), index, block[-1][0])
    return DsrItem("dsu/compound_roots", {"size": len(labels), "operations": operations}, roots, len(operations),
                   block[0][0])


def parse_traversal(task_id: str) -> Callable[[list[Line], list[Line]], DsrItem]:
    """'Graph N: Source = s' and the visiting order (labels); thmforge numbers the nodes 0..n-1 in
    ascending label order, so 'neighbours in ascending order' means the same in both."""
    def parse(block: list[Line], graph: list[Line]) -> DsrItem:
        head = re.match(r"^Graph \d+: Source = (-?\d+)$", block[0][1])   # the input: 'Graph N', labels, 'u, v' edges
        if len(block) != 2 or not head or len(graph) < 2:
            raise DsrFormatError(f"line {block[0][0]}: expected 'Graph N: Source = s' and the visiting order")
        labels = sorted(_ints(graph[1][1].split(), graph[1][0]))
        index = _positions(labels, "node", graph[1][0])
        edges = [_relabel(_ints(line.replace(",", " ").split(), number), index, number) for number, line in graph[2:]]
        spec = {"num_nodes": len(labels), "edges": edges, "start": _relabel([int(head[1])], index, block[0][0])[0]}
        return DsrItem(task_id, spec, _relabel(_answer(block), index, block[1][0]), len(labels), block[0][0])
    return parse


# --- red-black trees given with their colours: rbt_input_{d}.txt, one block per instance ---------
# DSR-Bench evaluates construct_compound from these files but has no evaluation for insert and delete:
# the released rbt_input files come from another draw than the insert/delete answers (their key sets
# differ, while the insert and delete files agree with each other), so those blocks fail, each named.

COLOURS = {"b": "B", "r": "R"}


def coloured_input_tree(tree: list[Line]) -> list | None:
    """'Tree N', then the nodes in preorder as 'key colour' with '#' for an empty subtree ->
    null | [[key, "R"|"B"], left, right]."""
    lines = iter(tree[1:])

    def node():
        number, line = next(lines, (tree[-1][0], None))
        if line is None:
            raise DsrFormatError(f"input line {number}: the tree ends before all its subtrees are given")
        if line == "#":
            return None
        key, _, colour = line.partition(" ")
        if colour.strip().lower() not in COLOURS:
            raise DsrFormatError(f"input line {number}: expected 'key b|r' or '#', got {line!r}")
        return [[_ints([key], number)[0], COLOURS[colour.strip().lower()]], node(), node()]
    built = node()
    left_over = next(lines, None)
    if left_over:
        raise DsrFormatError(f"input line {left_over[0]}: a line after the tree is complete")
    return built


def _bare_list(line: Line, prefix: str) -> list[str]:
    """'Prefix: [a,b,c]' with unquoted items -> ['a', 'b', 'c']."""
    number, text = line
    found = re.match(rf"^{re.escape(prefix)}\s*\[(.*)\]$", text)
    if not found:
        raise DsrFormatError(f"line {number}: expected {prefix} [...], got {text[:40]!r}")
    return [item.strip() for item in found[1].split(",") if item.strip()]


def _coloured_answer(block: list[Line], task_id: str, spec: dict) -> list | None:
    """'Pre-order: [keys]' and 'Pre-color: [b,r,...]' (lines 2 and 3 of the block) -> the coloured tree."""
    keys = _ints(_bare_list(block[1], "Pre-order:"), block[1][0])
    colours = _bare_list(block[2], "Pre-color:")
    if len(colours) != len(keys) or any(c.lower() not in COLOURS for c in colours):
        raise DsrFormatError(f"line {block[2][0]}: expected one colour b or r per key of the pre-order")
    return _coloured_tree([[key, colour] for key, colour in zip(keys, colours)], task_id, spec)


def rb_one_operation(name: str) -> Callable[[list[Line], list[Line]], DsrItem]:
    """'Insert: k' (or 'Delete: k'), then the tree after it: pre-order keys and colours, post-order
    keys and colours (the post-order repeats what the pre-order determines)."""
    def parse(block: list[Line], tree: list[Line]) -> DsrItem:
        if len(block) != 5:
            raise DsrFormatError(f"line {block[0][0]}: expected '{name.title()}: k', Pre-order, Pre-color, "
                                 "Post-order and Post-color lines")
        key = _prefixed(block[0], f"{name.title()}:")
        given = coloured_input_tree(tree)
        spec = {"tree": given, name: key}
        answer = _coloured_answer(block, f"red_black_tree/{name}", spec)
        before, after = sorted(_keys(given)), _keys(answer)
        expected = sorted(before + [key]) if name == "insert" else _without(before, key)
        if sorted(after) != expected:
            raise DsrFormatError(f"line {block[0][0]}: the answer's keys are not the input tree's keys with {key} "
                                 f"{name}d (input {tree[0][1]!r} does not belong to this answer)")
        return DsrItem(f"red_black_tree/{name}", spec, answer,
                       len(before), block[0][0])
    return parse


def _keys(tree: list | None) -> list[int]:
    return [] if tree is None else [tree[0][0], *_keys(tree[1]), *_keys(tree[2])]


def _without(keys: list[int], key: int) -> list[int]:
    return keys[:keys.index(key)] + keys[keys.index(key) + 1:] if key in keys else keys


# --- strings: trie, DAWG, suffix tree ------------------------------------------------------------

WORD_OPERATION = re.compile(r"^(insert|delete) ([a-z]+)$")


def _word_operations(body: list[Line], what: str) -> list[list]:
    operations = []
    for number, line in body:
        found = WORD_OPERATION.match(line)
        if not found:
            raise _unknown(what, number, line)
        operations.append([found[1], found[2]])
    return operations


def parse_trie(block: list[Line]) -> DsrItem:
    """'TrieTree N', 'insert w' / 'delete w', then the trie's letters in preorder (root '')."""
    operations = _word_operations(_body(block, re.compile(r"^TrieTree \d+$"))[1], "trie")
    return DsrItem("trie/compound_preorder", {"operations": operations}, _answer(block), len(operations),
                   block[0][0])


def parse_dawg(block: list[Line]) -> DsrItem:
    """'DAWG N', 'insert w' / 'delete w', then [[word, 'T'|'F'], ...] per state."""
    operations = _word_operations(_body(block, re.compile(r"^DAWG \d+$"))[1], "DAWG")
    states = _answer(block)
    if not all(isinstance(s, list) and len(s) == 2 for s in states):
        raise DsrFormatError(f"line {block[-1][0]}: the answer is not a list of [word, 'T'|'F'] pairs")
    return DsrItem("dawg/compound_states", {"operations": operations}, states, len(operations), block[0][0])


def parse_suffix_tree(block: list[Line]) -> DsrItem:
    """'SuffixTree N', the string with its '$', the edge labels in preorder."""
    number, text = block[1] if len(block) == 3 else (block[0][0], "")
    if len(block) != 3 or not re.match(r"^SuffixTree \d+$", block[0][1]) or not re.match(r"^[a-z]*\$$", text):
        raise DsrFormatError(f"line {number}: expected 'SuffixTree N', the string ending in '$', the edge labels")
    return DsrItem("suffix_tree/construct_preorder", {"string": text[:-1]}, _answer(block), len(text) - 1,
                   block[0][0])


# --- geometric graphs: BFS over points within a distance threshold --------------------------------

def parse_geometric_bfs(block: list[Line]) -> DsrItem:
    """'Graph N', 'Nodes: [points]', 'Threshold: t', 'From: point', 'BFS: [points]'; thmforge numbers
    the points by their position, so the visiting order becomes node numbers."""
    if len(block) != 5 or not re.match(r"^Graph \d+$", block[0][1]):
        raise DsrFormatError(f"line {block[0][0]}: expected 'Graph N', Nodes, Threshold, From and BFS lines")
    points = _prefixed(block[1], "Nodes:")
    points = [p if isinstance(p, list) else [p] for p in points]
    index = {tuple(p): i for i, p in reversed(list(enumerate(points)))}
    if len(index) != len(points):
        raise DsrFormatError(f"line {block[1][0]}: points repeat, so the visiting order by point is ambiguous")

    def numbered(point: Any, number: int) -> int:
        key = tuple(point) if isinstance(point, list) else (point,)
        if key not in index:
            raise DsrFormatError(f"line {number}: {point!r} is not one of the nodes")
        return index[key]
    spec = {"points": points, "threshold": _prefixed(block[2], "Threshold:"),
            "start": numbered(_prefixed(block[3], "From:"), block[3][0])}
    answer = [numbered(p, block[4][0]) for p in _prefixed(block[4], "BFS:")]
    return DsrItem("geometric_graph/bfs", spec, answer, len(points), block[0][0])


# --- binary search trees: the input trees live in bst_input_{d}.txt, one block per instance ------

BST_NODE = re.compile(r"^(-?\d+) (None|-?\d+) (None|-?\d+)$")


def input_keys(tree: list[Line]) -> list[int]:
    """The keys of an input tree ('Tree N', then 'key left right' per node, in preorder): inserting them in that order rebuilds the same BST,
    which is checked against the stated children."""
    nodes = []
    for number, line in tree[1:]:
        found = BST_NODE.match(line)
        if not found:
            raise DsrFormatError(f"input line {number}: expected 'key left right', got {line!r}")
        nodes.append(tuple(None if v == "None" else int(v) for v in found.groups()))
    keys = [node[0] for node in nodes]
    stated = {key: (left, right) for key, left, right in nodes}
    rebuilt, stack = [], [bst.build(keys)]
    while stack:
        node = stack.pop()
        if node is not None:
            rebuilt.append((node.key, node.left and node.left.key, node.right and node.right.key))
            stack += [node.right, node.left]
    if any(stated.get(key) != (left, right) for key, left, right in rebuilt) or len(rebuilt) != len(nodes):
        raise DsrFormatError(f"input line {tree[0][0]}: the tree is not the BST its preorder insertion builds")
    return keys


def _tree_from_preorder(keys: list[int]) -> list | None:
    return bst.serialize(bst.build(keys))


def parse_bst_insert(block: list[Line], tree: list[Line]) -> DsrItem:
    """'Insert: k', 'Pre-order: [...]', 'Post-order: [...]': DSR-Bench answers with traversals of
    the tree after the insertion; thmforge answers the tree, which the preorder determines."""
    if len(block) != 3:
        raise DsrFormatError(f"line {block[0][0]}: expected 'Insert: k', 'Pre-order: [...]', 'Post-order: [...]'")
    key, preorder = _prefixed(block[0], "Insert:"), _prefixed(block[1], "Pre-order:")
    keys = input_keys(tree)
    return DsrItem("bst/insert", {"keys": keys, "insert": [key]}, _tree_from_preorder(preorder), len(keys) + 1,
                   block[0][0])


def parse_bst_remove(block: list[Line], tree: list[Line]) -> DsrItem:
    """'Remove: k', 'Pre-order: [...]', 'Post-order: [...]' about the input tree after the removal."""
    if len(block) != 3:
        raise DsrFormatError(f"line {block[0][0]}: expected 'Remove: k', 'Pre-order: [...]', 'Post-order: [...]'")
    key, preorder = _prefixed(block[0], "Remove:"), _prefixed(block[1], "Pre-order:")
    keys = input_keys(tree)
    return DsrItem("bst/remove", {"keys": keys, "remove": [key]}, _tree_from_preorder(preorder), len(keys),
                   block[0][0])


def parse_bst_compound(block: list[Line]) -> DsrItem:
    """'Insert: k' / 'Delete: k' lines from an empty tree, then the final tree's preorder."""
    operations = []
    for number, line in _body(block)[1]:
        name, _, key = line.partition(":")
        if name not in ("Insert", "Delete"):
            raise _unknown("BST", number, line)
        operations.append(["insert" if name == "Insert" else "remove", *_ints([key.strip()], number)])
    return DsrItem("bst/compound", {"keys": [], "operations": operations}, _tree_from_preorder(_answer(block)),
                   len(operations), block[0][0])


TRAVERSALS = (("Pre-order:", "bst/preorder"), ("In-order:", "bst/inorder"), ("Post-order:", "bst/postorder"),
              ("Depth:", "bst/depth"))


def parse_bst_traversal(block: list[Line], tree: list[Line]) -> list[DsrItem]:
    """One block answers four tasks about one input tree: its three traversals and its depth."""
    if len(block) != len(TRAVERSALS):
        raise DsrFormatError(f"line {block[0][0]}: expected Pre-order, In-order, Post-order and Depth lines")
    keys = input_keys(tree)
    return [DsrItem(task_id, {"keys": keys}, _prefixed(line, prefix), len(keys), line[0])
            for (prefix, task_id), line in zip(TRAVERSALS, block)]


# --- natural/ files ------------------------------------------------------------------------------

CLINIC_INSERT = re.compile(r"^insert (.+) (\d\d:\d\d)$")


def parse_clinic(block: list[Line]) -> DsrItem:
    """'insert NAME HH:MM' / 'delete NAME' lines, then the answer [(name, time), ...] in preorder;
    thmforge's clinic answer is the names alone."""
    events = []
    for number, line in _body(block)[1]:
        found = CLINIC_INSERT.match(line)
        if found:
            events.append(["book", found[2], found[1], 0])
        elif line.startswith("delete "):
            events.append(["cancel", line[len("delete "):].strip(), 0])
        else:
            raise _unknown("clinic", number, line)
    pairs = _answer(block)
    if not all(isinstance(p, tuple) and len(p) == 2 for p in pairs):
        raise DsrFormatError(f"line {block[-1][0]}: the answer is not a list of (name, time) pairs")
    return DsrItem("bst/natural_clinic", {"events": events}, [name for name, _ in pairs],
                   sum(1 for e in events if e[0] == "book"), block[0][0])


def parse_natural_queue(block: list[Line]) -> DsrItem:
    """'enqueue NAME' / 'dequeue NAME' lines, then the names in line; a dequeue serves the front
    (the name it gives is DSR-Bench's expectation of who that is, not an instruction)."""
    events = []
    for number, line in _body(block)[1]:
        name, _, who = line.partition(" ")
        if name == "enqueue" and who:
            events.append(["join", who, 0])
        elif name == "dequeue":
            events.append(["serve", 0])
        else:
            raise _unknown("queue story", number, line)
    return DsrItem("queue/natural_ice_cream", {"initial": [], "events": events}, _answer(block), len(events),
                   block[0][0])


def parse_natural_graph(block: list[Line]) -> DsrItem:
    """'nodes: [...]', 'edges: [(a, b), ...]', 'source: NAME', 'traversal: [...]' (planet stories)."""
    if len(block) != 4:
        raise DsrFormatError(f"line {block[0][0]}: expected nodes, edges, source and traversal lines")
    planets, edges = _prefixed(block[0], "nodes:"), _prefixed(block[1], "edges:")
    number, source = block[2]
    if not source.startswith("source:"):
        raise DsrFormatError(f"line {number}: expected 'source: NAME', got {source[:40]!r}")
    if not all(isinstance(e, tuple) and len(e) == 2 for e in edges):
        raise DsrFormatError(f"line {block[1][0]}: edges must be (name, name) pairs")
    spec = {"planets": planets, "start": source[len("source:"):].strip(),
            "events": [["tunnel", a, b, 0] for a, b in edges]}
    return DsrItem("graph/natural_tunnels", spec, _prefixed(block[3], "traversal:"), len(planets), block[0][0])


FORMATS = (
    *(FileFormat(rf"^generation/array/{task}/{task}_(easy|medium|hard)\.txt$", numbered_blocks, array_parser(task))
      for task in ARRAY_TASKS),
    FileFormat(r"^generation/queue/compound/compound_(easy|medium|hard)\.txt$", answer_terminated, parse_queue),
    FileFormat(r"^generation/stack/compound/compound_(easy|medium|hard)\.txt$", answer_terminated, parse_stack),
    FileFormat(r"^generation/heap/compound/compound_(easy|medium|hard)\.txt$", answer_terminated, parse_heap),
    FileFormat(r"^generation/priority_queue/compound/compound_(easy|medium|hard)\.txt$", answer_terminated,
               parse_priority_queue),
    FileFormat(r"^generation/bloom_filter/compound/compound_(easy|medium|hard)\.txt$", answer_terminated,
               parse_bloom_filter),
    FileFormat(r"^generation/kd_heap/compound_(\d)d/compound_(easy|medium|hard)\.txt$", answer_terminated,
               parse_kd_heap, variant=lambda match: f"{match[1]}d"),
    FileFormat(r"^generation/ball_tree/construction/bt_construction_(easy|medium|hard)\.txt$", fixed_size(3),
               parse_ball_tree),
    FileFormat(r"^generation/kd_tree/construct_(1d|2d|3d|5d|blob|circle|moon)/construct_(easy|medium|hard)\.txt$",
               fixed_size(3), parse_kd_tree, variant=lambda match: KD_VARIANTS[match[1]]),
    FileFormat(r"^generation/skip_list/compound/compound_(easy|medium|hard)\.txt$", answer_terminated, parse_skip_list),
    FileFormat(r"^generation/rb_tree/construct/rbt_construct_(easy|medium|hard)\.txt$", fixed_size(3), parse_rb_construct),
    FileFormat(r"^generation/rb_tree/compound/rbt_compound_(easy|medium|hard)\.txt$", headed("Tree "), parse_rb_compound),
    *(FileFormat(rf"^generation/rb_tree/{name}/rbt_{name}_(easy|medium|hard)\.txt$", fixed_size(5),
                 rb_one_operation(name), inputs="generation/rb_tree/rbt_input_{d}.txt", split_inputs=headed("Tree "))
      for name in ("insert", "delete")),
    FileFormat(r"^generation/rb_tree/construct_compound/rbt_construct_compound_(easy|medium|hard)\.txt$",
               headed("Tree "), parse_rb_compound, inputs="generation/rb_tree/rbt_input_{d}.txt",
               split_inputs=headed("Tree ")),
    FileFormat(r"^generation/trie/compound/compound_(easy|medium|hard)\.txt$", answer_terminated, parse_trie),
    FileFormat(r"^generation/dawg/compound/compound_(easy|medium|hard)\.txt$", answer_terminated, parse_dawg),
    FileFormat(r"^generation/suffix_tree/construct/construct_(easy|medium|hard)\.txt$", fixed_size(3),
               parse_suffix_tree),
    FileFormat(r"^generation/geom_graph/construct_(1d|2d|3d|5d)/construct_(easy|medium|hard)\.txt$", fixed_size(5),
               parse_geometric_bfs, variant=lambda match: match[1]),
    FileFormat(r"^generation/b_plus_tree/compound/compound_(easy|medium|hard)\.txt$", answer_terminated,
               parse_bplus_tree),
    FileFormat(r"^generation/hashmap/compound/compound_(easy|medium|hard)\.txt$", blank_separated, parse_hash_map),
    FileFormat(r"^generation/lru_cache/cache/lru_(easy|medium|hard)\.txt$", headed("LRU Cache Simulation"), parse_lru),
    FileFormat(r"^generation/dsu/compound/compound_(easy|medium|hard)\.txt$", blank_separated, parse_dsu),
    *(FileFormat(rf"^generation/graph/{name}/{name}_(easy|medium|hard)\.txt$", fixed_size(2), parse_traversal(f"graph/{name}"),
                 inputs="generation/graph/graph_input_{d}.txt", split_inputs=headed("Graph ")) for name in ("bfs", "dfs")),
    FileFormat(r"^natural/bst/natural-(easy|medium|hard)\.txt$", answer_terminated, parse_clinic),
    FileFormat(r"^natural/queue/natural-(easy|medium|hard)\.txt$", answer_terminated, parse_natural_queue),
    FileFormat(r"^natural/graph/natural-(easy|medium|hard)\.txt$", blank_separated, parse_natural_graph),
    FileFormat(r"^generation/heap/heapify/heapify_(easy|medium|hard)\.txt$", headed("Heap "), parse_heapify),
    FileFormat(r"^generation/binary_tree/remove/bst_remove_(easy|medium|hard)\.txt$", fixed_size(3), parse_bst_remove,
               inputs="generation/binary_tree/bst_generation/bst_input_{d}.txt", split_inputs=headed("Tree ")),
    FileFormat(r"^generation/binary_tree/compound/bst_compound_(easy|medium|hard)\.txt$", answer_terminated,
               parse_bst_compound),
    FileFormat(r"^generation/binary_tree/insert/bst_insert_(easy|medium|hard)\.txt$", fixed_size(3), parse_bst_insert,
               inputs="generation/binary_tree/bst_generation/bst_input_{d}.txt", split_inputs=headed("Tree ")),
    FileFormat(r"^generation/binary_tree/traversal/bst_traversal_(easy|medium|hard)\.txt$", fixed_size(4),
               parse_bst_traversal, inputs="generation/binary_tree/bst_generation/bst_input_{d}.txt",
               split_inputs=headed("Tree ")),
)


# files that hold no instances: the arrays of array_input_{d}.txt are repeated in every array task's blocks
NOT_INSTANCE_FILES = re.compile(r"^generation/array/array_input_\w+\.txt$")


def file_format(relative_path: str) -> tuple[FileFormat, re.Match] | None:
    for candidate in FORMATS:
        match = re.match(candidate.pattern, relative_path)
        if match:
            return candidate, match
    return None


def difficulty_of(relative_path: str) -> str:
    found = DIFFICULTY.findall(relative_path)
    return found[-1] if found else "easy"
