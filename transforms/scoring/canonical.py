"""Canonical forms of typed answers, so that scoring compares values, not formatting.

Each answer type of `transforms.bench.registry.ANSWER_TYPES` has one canonical value: integral
floats become ints, red-black colours are upper-case "R"/"B", edge lists are sorted with each
pair ordered, JSON text inside a string is decoded once. A value that does not fit its type
raises `AnswerShapeError` (the prediction then scores 0 with that message stored).
"""
from __future__ import annotations

import json
import math
from typing import Any

_COLOURS = {"r": "R", "red": "R", "b": "B", "black": "B"}


class AnswerShapeError(ValueError):
    """The parsed value does not have the shape its answer type requires."""


def canonicalize(value: Any, answer_type: str) -> Any:
    """The canonical value of `value` read as `answer_type` (unknown types compare as JSON)."""
    if isinstance(value, str) and answer_type != "str":
        value = _decode_embedded_json(value)
    convert = _CONVERTERS.get(answer_type, _json_value)
    return convert(value)


def serialize(canonical: Any) -> str:
    """The one text spelling of a canonical value (compact JSON, sorted keys)."""
    return json.dumps(canonical, separators=(",", ":"), sort_keys=True, ensure_ascii=False)


def _decode_embedded_json(text: str) -> Any:
    stripped = text.strip()
    if stripped[:1] in "[{" or stripped in ("null", "true", "false") or _looks_numeric(stripped):
        try:
            return json.loads(stripped)
        except json.JSONDecodeError:
            return text
    return text


def _looks_numeric(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _shape(expected: str, value: Any) -> AnswerShapeError:
    shown = json.dumps(value)[:60] if _jsonable(value) else repr(value)[:60]
    return AnswerShapeError(f"expected {expected}, got {shown}")


def _jsonable(value: Any) -> bool:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False
    return True


def _int(value: Any) -> int:
    if isinstance(value, bool):
        raise _shape("an integer", value)
    if isinstance(value, int):
        return value
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            pass
    raise _shape("an integer", value)


def _bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    raise _shape("true or false", value)


def _str(value: Any) -> str:
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(_scalar(value))
    raise _shape("a string", value)


def _scalar(value: Any) -> Any:
    """A JSON scalar with integral floats as ints (labels, keys and node names)."""
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        return value.strip()
    return value


def _json_value(value: Any) -> Any:
    if isinstance(value, list):
        return [_json_value(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _json_value(v) for k, v in value.items()}
    return _scalar(value)


def _list_of(item):
    def convert(value: Any) -> list:
        if not isinstance(value, list):
            raise _shape("a list", value)
        return [item(v) for v in value]
    return convert


def _binary_key(key: Any) -> Any:
    if isinstance(key, list) and len(key) == 2 and isinstance(key[1], str) and key[1].strip().lower() in _COLOURS:
        return [_json_value(key[0]), _COLOURS[key[1].strip().lower()]]
    return _json_value(key)


def _binary_tree(value: Any) -> Any:
    if value is None or value == []:
        return None
    if not isinstance(value, list) or len(value) != 3:
        raise _shape("a binary tree [key, left, right] or null", value)
    return [_binary_key(value[0]), _binary_tree(value[1]), _binary_tree(value[2])]


def _nary_tree(value: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, list) and len(value) == 1:
        return [_json_value(value[0]), []]
    if not isinstance(value, list) or len(value) != 2 or not isinstance(value[1], list):
        raise _shape("a tree [label, [children]]", value)
    return [_json_value(value[0]), [_nary_tree_node(child) for child in value[1]]]


def _nary_tree_node(value: Any) -> Any:
    node = _nary_tree(value)
    if node is None:
        raise _shape("a child [label, [children]]", value)
    return node


def _order_key(value: Any) -> tuple:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return (0, value, "")
    if isinstance(value, str):
        return (1, 0, value)
    return (2, 0, serialize(value))


def _edges(value: Any) -> list:
    if not isinstance(value, list):
        raise _shape("a list of edges [u, v]", value)
    edges = set()
    for edge in value:
        if not isinstance(edge, list) or len(edge) < 2:
            raise _shape("an edge [u, v]", edge)
        ends = sorted((_json_value(edge[0]), _json_value(edge[1])), key=_order_key)
        edges.add(serialize(ends + [_json_value(x) for x in edge[2:]]))
    canonical = [json.loads(e) for e in edges]
    return sorted(canonical, key=lambda e: [_order_key(x) for x in e])


_CONVERTERS = {
    "int": _int,
    "bool": _bool,
    "str": _str,
    "list[int]": _list_of(_int),
    "list[str]": _list_of(_str),
    "list[list[int]]": _list_of(_list_of(_int)),
    "tree:binary": _binary_tree,
    "tree:nary": _nary_tree,
    "edges": _edges,
    "json": _json_value,
}
