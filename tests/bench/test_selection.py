"""run-bench subsets as plain functions (no model); the progress line: tests/test_progress.py."""
import io

import pytest

from transforms.bench.selection import Selection, SelectionError, parse_list, select


def rows():
    out = []
    for structure, task, suite in (("bst", "insert", "main"), ("array", "insert", "main"), ("kd_tree", "spatial_construct", "spatial")):
        for difficulty in ("easy", "hard"):
            for variant in (("1d", "moons") if suite == "spatial" else ("",)):
                for index in (2, 0, 1):
                    out.append({"instance_id": f"{structure}.{task}.{difficulty}.{variant}.{index}", "suite": suite,
                                "structure": structure, "task": task, "difficulty": difficulty,
                                "variant": variant or None, "index": index})
    return out


def test_task_ids_and_structures_select_and_limit_takes_the_lowest_indices_per_cell():
    chosen = select(rows(), Selection(tasks=parse_list("bst/insert,kd_tree"), difficulties=frozenset({"hard"}), limit=2))
    assert chosen == {"bst.insert.hard..0", "bst.insert.hard..1", "kd_tree.spatial_construct.hard.1d.0",
                      "kd_tree.spatial_construct.hard.1d.1", "kd_tree.spatial_construct.hard.moons.0",
                      "kd_tree.spatial_construct.hard.moons.1"}
    assert len(select(rows(), Selection(suites=frozenset({"main"})))) == 12
    assert len(select(rows(), Selection(limit=1))) == 8       # one per cell: 2 + 2 main cells, 4 spatial


def test_unknown_names_and_empty_selections_are_errors():
    with pytest.raises(SelectionError, match="no tasks heap/insert; it has array/insert, bst/insert"):
        select(rows(), Selection(tasks=frozenset({"heap/insert"})))
    with pytest.raises(SelectionError, match="no difficulties medium"):
        select(rows(), Selection(difficulties=frozenset({"medium"})))
    with pytest.raises(SelectionError, match="matches no instance"):
        select(rows(), Selection(tasks=frozenset({"kd_tree"}), suites=frozenset({"main"})))
    with pytest.raises(SelectionError, match="at least 1"):
        Selection(limit=0)
