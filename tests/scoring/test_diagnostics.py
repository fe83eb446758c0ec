"""Diagnostics: mean and std over trials of per-trial means, several models side by side."""
import pytest

from transforms.scoring.diagnostics import error_counts, side_by_side, summarize


def row(model, trial, exact, **keys):
    base = {"model": model, "trial": trial, "exact": exact, "partial": exact, "structural": exact,
            "suite": "main", "category": "Linear", "task": "access", "difficulty": "easy", "length": 5}
    return {**base, **keys}


def test_std_is_over_trial_means_not_instances():
    rows = [row("m", 0, 1.0), row("m", 0, 0.0),      # trial 0: mean 0.5
            row("m", 1, 1.0), row("m", 1, 1.0)]      # trial 1: mean 1.0
    (stats,) = summarize(rows)
    assert stats.mean["exact"] == pytest.approx(0.75)
    assert stats.std["exact"] == pytest.approx(0.25)
    assert (stats.trials, stats.predictions) == (2, 4)


def test_groups_sorted_with_difficulty_order_and_models_side_by_side():
    rows = [row("b", 0, 1.0, difficulty="hard"), row("b", 0, 0.0, difficulty="easy"),
            row("a", 0, 0.5, difficulty="medium"), row("m", 0, None, difficulty="easy")]
    stats = summarize(rows, ("difficulty",))
    assert [(s.model, s.key) for s in stats] == [("a", ("medium",)), ("b", ("easy",)), ("b", ("hard",))]
    models, keys, table = side_by_side(stats)
    assert models == ["a", "b"]
    assert keys == [("easy",), ("medium",), ("hard",)]
    assert "a" not in table[("easy",)] and table[("hard",)]["b"].mean["exact"] == 1.0


def test_error_counts_group_messages_by_kind():
    rows = [row("m", 0, 0.0, parse_error="list[int]: expected a list, got 5"),
            row("m", 1, 0.0, parse_error="list[int]: expected a list, got 7"),
            row("m", 2, 0.0, parse_error="request failed: timeout after 3 attempt(s): no answer"),
            row("m", 3, 1.0, parse_error=None)]
    assert error_counts(rows) == {"m": [("list[int]: expected a list", 2),
                                        ("request failed: timeout after 3 attempt(s)", 1)]}
