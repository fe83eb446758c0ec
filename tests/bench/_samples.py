"""Generated specs of a task for tests: a few per difficulty, from the release's own generator."""
from transforms.bench.instances import draw_spec
from transforms.bench.registry import get_task


def specs(task_id: str, per_difficulty: int = 20, seed: int = 7):
    task = get_task(task_id)
    for difficulty, variant in task.cells:
        for index in range(per_difficulty):
            yield draw_spec(task, difficulty, variant, seed, index)[1]
