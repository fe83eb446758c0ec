import collections
import functools

from tests.bench._samples import specs
from transforms.bench.registry import get_task

solve = get_task("bloom_filter/compound").solve


def _hashes(x, m, k):
    h = functools.reduce(lambda acc, ch: acc * 131 + ord(ch), str(x), 0)
    return [(h + i) % m for i in range(k)]


def test_counts_equal_the_members_hashes():
    """Replaying the rule independently: counters = multiset of hash positions of effective members."""
    for spec in specs("bloom_filter/compound"):
        m, k = spec["m"], spec["k"]
        counters = collections.Counter()
        effective = 0
        for op in spec["operations"]:
            spots = _hashes(op[1], m, k)
            if op[0] == "insert":
                counters.update(spots)
                effective += 1
            elif all(counters[s] > 0 for s in spots):
                counters.subtract(spots)
                effective -= 1
        answer = solve(spec)
        assert answer == [counters[i] for i in range(m)]
        assert sum(answer) == k * effective


def test_worked_example():
    # str(5) = "5": h = 53; m = 10, k = 3 -> counters 3, 4, 5. Deleting 7 (h = 55 -> 5, 6, 7) is refused.
    spec = {"m": 10, "k": 3, "operations": [["insert", 5], ["delete", 7]]}
    assert solve(spec) == [0, 0, 0, 1, 1, 1, 0, 0, 0, 0]
