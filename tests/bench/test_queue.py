import queue

import pytest

from tests.bench._samples import specs
from transforms.bench.registry import SpecError, get_task


def test_against_stdlib_queue():
    for spec in specs("queue/compound"):
        q = queue.SimpleQueue()
        for value in spec["initial"]:
            q.put(value)
        for op in spec["operations"]:
            q.put(op[1]) if op[0] == "enqueue" else q.get_nowait()
        expected = [q.get_nowait() for _ in range(q.qsize())]
        assert get_task("queue/compound").solve(spec) == expected


def test_empty_dequeue_rejected():
    with pytest.raises(SpecError, match="dequeues an empty queue"):
        get_task("queue/compound").solve({"initial": [], "operations": [["dequeue"]]})
