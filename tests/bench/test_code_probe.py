import contextlib
import io
import json

import pytest

from tests.bench._samples import specs
from transforms.bench.registry import SpecError, all_tasks, get_task


def _program(task, spec):
    setup = task.prompt(spec).setup
    return setup.removeprefix("```python\n").removesuffix("```")


@pytest.mark.parametrize("task", all_tasks("code"), ids=lambda t: t.id)
def test_reference_matches_running_the_shown_program(task):
    for spec in specs(task.id, per_difficulty=10):
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            exec(compile(_program(task, spec), task.id, "exec"), {})
        assert json.loads(printed.getvalue()) == task.solve(spec)


def test_programs_show_implementation_details():
    assert get_task("stack/code_array_stack").solve({"capacity": 3, "operations": [["push", 5], ["pop"]]}) == [5, 0, 0]
    assert get_task("queue/code_ring_buffer").solve(
        {"capacity": 2, "operations": [["enqueue", 1], ["enqueue", 2], ["enqueue", 3]]}) == [3, 2]
    probing = get_task("hash_map/code_linear_probing")
    assert probing.solve({"size": 4, "operations": [["add", 1], ["add", 5], ["remove", 1], ["add", 9]]}) == [-1, 9, 5, -1]
    with pytest.raises(SpecError, match="loop forever"):
        probing.solve({"size": 1, "operations": [["add", 1], ["remove", 2]]})
