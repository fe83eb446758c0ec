"""Answer extraction: the shapes models really produce, and refusals to guess."""
import pytest

from transforms.scoring.parse import extract_answer, relaxed_loads


@pytest.mark.parametrize("response, expected", [
    ('{"final_answer": [1, 2, 3]}', [1, 2, 3]),
    ('Here you go:\n```json\n{\n  "final_answer": [3, 4]\n}\n```\nHope this helps {x}.', [3, 4]),
    ('{"steps": ["push 1", "pop"], "final_answer": 7}', 7),
    ("{'final_answer': [None, 'R', True]}", [None, "R", True]),
    ("{'final_answer': [(1, 2), (2, 3)]}", [[1, 2], [2, 3]]),
    ('Working...\n**Final Answer:** `[1, 2, 3]`.', [1, 2, 3]),
    ("The answer is below:\n```\n[5, 6]\n```", [5, 6]),
    ('answer: 42', 42),
    ('[1, 2, 3]', [1, 2, 3]),
    ('{"final_answer": null}', None),
    ('First {"final_answer": 1}, but on reflection {"final_answer": 2}', 2),
    ('<think>maybe {"final_answer": 1}</think>\n{"final_answer": 2}', 2),
    ('{"Final Answer": [0]}', [0]),
    ('{"final_answer": "it\'s [1]"}', "it's [1]"),
    ('{"result": {"final_answer": [4]}, "note": "x"}', [4]),
    ("{'final_answer': [1, 2,],}", [1, 2]),
])
def test_extracts_answer(response, expected):
    extraction = extract_answer(response)
    assert extraction.ok, extraction.error
    assert extraction.value == expected


@pytest.mark.parametrize("response, error", [
    (None, "empty response"),
    ("   ", "empty response"),
    ("I am not sure about this one.", "no final_answer found"),
    ('{"steps": ["a"]}', "JSON object without final_answer"),
    ("Final answer: twelve", "final answer line is not JSON"),
    ('{"final_answer": [1, 2', "no final_answer found"),
    ("<think>still thinking {\"final_answer\": 3}", "reasoning never closed"),
])
def test_refuses_to_guess(response, error):
    extraction = extract_answer(response)
    assert not extraction.ok
    assert extraction.value is None
    assert extraction.error.startswith(error)


def test_relaxed_loads_keeps_quotes_inside_strings():
    assert relaxed_loads("""{'a': 'say "hi"', 'b': False}""") == {"a": 'say "hi"', "b": False}
    with pytest.raises(ValueError):
        relaxed_loads("[1, 2")
