"""Canonical values: formatting differences vanish, shape errors are reported."""
import pytest

from transforms.scoring.canonical import AnswerShapeError, canonicalize, serialize


@pytest.mark.parametrize("answer_type, a, b", [
    ("int", 3, 3.0),
    ("int", 3, " 3 "),
    ("bool", True, "true"),
    ("list[int]", [1, 2], [1.0, "2"]),
    ("list[int]", [1, 2], "[1, 2]"),
    ("list[list[int]]", [[1], []], [[1.0], []]),
    ("tree:binary", [[5, "B"], [[3, "R"], None, None], None], [[5, "black"], [[3, "r"], None, None], []]),
    ("tree:nary", ["", [["a", []]]], ["", [["a"]]]),
    ("edges", [[1, 2], [2, 3]], [[3, 2], [2, 1], [1, 2]]),
    ("edges", [["Mars", "Venus"]], [["Venus", "Mars"]]),
    ("json", {"b": 1, "a": [2.0]}, {"a": [2], "b": 1}),
])
def test_equal_after_canonicalization(answer_type, a, b):
    assert serialize(canonicalize(a, answer_type)) == serialize(canonicalize(b, answer_type))


@pytest.mark.parametrize("answer_type, a, b", [
    ("list[int]", [1, 2], [2, 1]),
    ("tree:binary", [1, [2, None, None], None], [1, None, [2, None, None]]),
    ("list[list[int]]", [[1, 2]], [[2, 1]]),
])
def test_order_that_matters_is_kept(answer_type, a, b):
    assert serialize(canonicalize(a, answer_type)) != serialize(canonicalize(b, answer_type))


@pytest.mark.parametrize("answer_type, value", [
    ("int", True),
    ("int", 2.5),
    ("int", [1]),
    ("list[int]", 5),
    ("list[int]", [1, "x"]),
    ("tree:binary", [1, None]),
    ("tree:nary", ["a", "b"]),
    ("edges", [[1]]),
    ("bool", 1),
])
def test_shape_errors(answer_type, value):
    with pytest.raises(AnswerShapeError):
        canonicalize(value, answer_type)
