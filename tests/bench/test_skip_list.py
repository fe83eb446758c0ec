from tests.bench._samples import specs
from transforms.bench.registry import get_task

solve = get_task("skip_list/compound").solve


def test_levels_are_nested_and_level_zero_is_the_set():
    for spec in specs("skip_list/compound"):
        present = set()
        for op in spec["operations"]:
            (present.add if op[0] == "insert" else present.discard)(op[1])
        levels = solve(spec)
        assert levels[0] == sorted(present)
        for lower, upper in zip(levels, levels[1:]):
            assert upper and set(upper) <= set(lower) and upper == sorted(upper)
        assert len(levels) <= spec["max_level"] + 1


def test_heights_follow_leading_heads_and_reinsert_uses_no_coins():
    spec = {"max_level": 2, "operations": [
        ["insert", 5, [0.1, 0.2, 0.3]],   # capped at 2
        ["insert", 7, [0.6]],             # level 0 only
        ["insert", 7, [0.1, 0.1]],        # present: ignored
        ["insert", 3, [0.4, 0.9]],        # level 1
        ["delete", 42],                   # absent: ignored
    ]}
    assert solve(spec) == [[3, 5, 7], [3, 5], [5]]
    assert solve({"max_level": 3, "operations": [["insert", 1, [0.1]], ["delete", 1]]}) == [[]]
