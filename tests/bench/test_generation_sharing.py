"""The release builder shares each index's k-shot exemplars among its difficulties: same rows as
building every instance on its own, and every (cell, index) built exactly once."""
import collections

from pipelines.bench import shards
from transforms.bench.instances import Exemplars, build_instance, canonical_json, draw_spec
from transforms.bench.registry import get_task
from transforms.bench.release import release_cells


def test_shared_exemplars_give_the_rows_of_separate_builds():
    for task_id, variant in (("bst/insert", ""), ("kd_tree/construct", "moons"), ("array/reverse", "")):
        task = get_task(task_id)
        for index in (0, 7):
            shared = Exemplars(task, variant, index, 3)
            for difficulty in task.difficulties:
                assert build_instance(task, difficulty, index, 3, variant, shared) == \
                    build_instance(task, difficulty, index, 3, variant)


def test_exemplars_skip_the_instance_own_spec_and_draw_another():
    task = get_task("array/reverse")
    first_text = canonical_json(draw_spec(task, task.difficulties[0], "", "exemplar", 0, 5, 0)[1])
    pool = Exemplars(task, "", 5, 0)
    plain = pool.avoiding("")
    avoided = pool.avoiding(first_text)
    assert len(avoided) == 3 and avoided[:2] == plain[1:] and avoided[2] not in plain


def test_shards_cover_every_cell_index_once():
    cells = release_cells(per_cell=40)
    built = collections.Counter()
    for task_id, variant, counts, start, stop in shards(cells, size=7):
        for index in range(start, stop):
            for difficulty, count in counts:
                if index < count:
                    built[(task_id, difficulty, variant, index)] += 1
    expected = {(c.task_id, c.difficulty, c.variant, i) for c in cells for i in range(c.count)}
    assert set(built) == expected and set(built.values()) == {1}
