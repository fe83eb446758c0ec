"""The heuristic policy answers as its docstring states (the example report relies on it)."""
import json

from benchmarks.heuristic_policy import heuristic_answer, respond
from transforms.bench.instances import build_instance
from transforms.bench.registry import get_task
from transforms.scoring.parse import extract_answer


def prompt_of(task_id):
    return build_instance(get_task(task_id), "easy", 0, 1)["prompt"]


def test_echoes_the_input_by_answer_shape():
    setup = "The array is [3, 39, 23].\nWhat is the element at index 1?"
    integer = f"Intro.\n\n{setup}\n\nRespond ...; final_answer is an integer."
    listed = f"Intro.\n\n{setup}\n\nRespond ...; final_answer is a list of integers."
    tree = f"Intro.\n\n{setup}\n\nRespond ...; final_answer is a nested list: null for an empty tree."
    assert heuristic_answer(integer) == 1
    assert heuristic_answer(listed) == [3, 39, 23, 1]
    assert heuristic_answer(listed, sort_lists=True) == [1, 3, 23, 39]
    assert heuristic_answer(tree) is None


def test_responses_parse_back_to_the_answer_except_the_refusals():
    prompts = [prompt_of(t) for t in ("array/access", "bst/insert", "queue/compound", "graph/bfs")]
    prompts += [p + f" variant {i}" for p in prompts for i in range(6)]
    refusals = 0
    for prompt in prompts:
        request = {"model": "heuristic-echo", "messages": [{"role": "user", "content": prompt}]}
        extraction = extract_answer(respond(request))
        if extraction.ok:
            assert json.dumps(extraction.value) == json.dumps(heuristic_answer(prompt))
        else:
            refusals += 1
    assert refusals < len(prompts) / 4
