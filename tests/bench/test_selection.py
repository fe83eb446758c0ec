"""run-bench subsets and the progress line, as plain functions (no model, no clock waits)."""
import io

import pytest

from transforms.bench.progress import Progress
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


def test_progress_reports_rate_and_eta_at_intervals():
    now = [100.0]
    out = io.StringIO()
    progress = Progress(200, "run-bench m", every_s=5.0, clock=lambda: now[0], out=out)
    now[0] = 102.0
    assert progress.update(10) is None                       # within the interval: quiet
    now[0] = 110.0
    assert progress.update(40) == "run-bench m: 50/200 (5.0/s, ETA 30s)"
    now[0] = 140.0
    assert progress.update(150) == "run-bench m: 200/200 (5.0/s, done)"
    assert out.getvalue().splitlines() == ["run-bench m: 50/200 (5.0/s, ETA 30s)", "run-bench m: 200/200 (5.0/s, done)"]
