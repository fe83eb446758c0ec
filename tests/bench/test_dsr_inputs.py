"""The extended suite: DSR-Bench inputs the default tasks could not express, each prompt stating its rule."""
import random

import pytest

from transforms.bench.prompts import render
from transforms.bench.registry import SpecError, get_task


def test_a_key_change_to_the_current_priority_is_a_stated_no_op():
    task = get_task("priority_queue/compound")
    spec = {"initial": [], "operations": [["insert", 1, 5], ["insert", 2, 5], ["increase_key", 1, 5],
                                          ["decrease_key", 2, 5]]}
    assert task.solve(spec) == [[2, 5], [1, 5]]
    assert "changes nothing" in render(task.prompt(spec))
    plain = {"initial": [], "operations": [["insert", 1, 5], ["increase_key", 1, 7]]}
    assert "changes nothing" not in render(task.prompt(plain))
    with pytest.raises(SpecError, match="goes the wrong way"):
        task.solve({"initial": [[1, 5]], "operations": [["increase_key", 1, 3]]})


def test_the_no_op_task_generates_no_ops():
    task = get_task("priority_queue/compound_no_op")
    specs = [task.make_spec(random.Random(i), 20) for i in range(20)]
    assert any("changes nothing" in task.prompt(s).rules for s in specs)


def test_bloom_filter_delete_rules_differ_and_the_prompt_says_which():
    task = get_task("bloom_filter/compound")
    # value 1 hashes to counters 1, 2 and value 2 to counters 2, 3 (m = 4, k = 2)
    spec = {"m": 4, "k": 2, "operations": [["insert", 1], ["delete", 2]]}
    assert task.solve(spec) == [0, 1, 1, 0]
    assert task.solve({**spec, "delete_rule": "clamped"}) == [0, 1, 0, 0]
    assert "only if all of them are above 0" in task.prompt(spec).rules
    assert "stays 0" in task.prompt({**spec, "delete_rule": "clamped"}).rules
    with pytest.raises(SpecError, match="delete_rule"):
        task.solve({**spec, "delete_rule": "sometimes"})
    clamped = get_task("bloom_filter/compound_clamped")
    assert clamped.make_spec(random.Random(1), 8)["delete_rule"] == "clamped"


def test_labelled_kd_heap_items_share_points_and_the_answer_lists_labels():
    task = get_task("kd_heap/labelled_compound")
    spec = {"operations": [["insert", 0, [3, 4]], ["insert", 1, [1, 1]], ["insert", 2, [3, 4]],
                           ["insert", 3, [0, 0]], ["extract"]]}
    assert task.solve(spec) == [1, 0, 2]
    assert "insert item 2 at (3, 4)" in task.prompt(spec).setup
    with pytest.raises(SpecError):
        task.solve({"operations": [["insert", [1, 2]]]})


def test_ball_tree_centroids_follow_the_stated_pivot_rule():
    task = get_task("ball_tree/construct")
    spec = {"points": [[0, 0], [10, 0], [0, 10], [10, 10], [5, 5]], "leaf_size": 2}
    assert task.solve(spec) == [[5, 5], [6.25, 6.25], [5, 8.33], [7.5, 7.5], [0, 10], [10, 0], [0, 0]]
    assert task.solve({**spec, "leaf_size": 5}) == [[5, 5]]
    rules = task.prompt(spec).rules
    assert "farthest from the node's first point" in rules and "at least as close to B" in rules
    with pytest.raises(SpecError, match="leaf_size"):
        task.solve({"points": [[1, 2]], "leaf_size": 0})


def test_clinic_cancellations_remove_with_the_in_order_successor():
    task = get_task("bst/natural_clinic")
    events = [["book", "10:00", "Adams", 0], ["book", "09:00", "Baker", 1], ["book", "11:00", "Chen", 2],
              ["book", "10:30", "Diaz", 0], ["cancel", "Adams", 1]]
    assert task.solve({"events": events}) == ["Diaz", "Baker", "Chen"]
    again = events + [["book", "08:00", "Adams", 0]]
    assert task.solve({"events": again}) == ["Diaz", "Baker", "Adams", "Chen"]
    parts = task.prompt({"events": events})
    assert "Adams calls to cancel the appointment." in parts.setup and "in-order successor" in parts.rules
    assert "in-order successor" not in task.prompt({"events": events[:4]}).rules
    with pytest.raises(SpecError, match="no appointment"):
        task.solve({"events": [["cancel", "Adams", 0]]})
    with pytest.raises(SpecError, match="already has an appointment"):
        task.solve({"events": events[:1] + [["book", "12:00", "Adams", 0]]})
