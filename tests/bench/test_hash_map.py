from tests.bench._samples import specs
from transforms.bench.registry import get_task

solve = get_task("hash_map/compound").solve


def test_against_insertion_ordered_dict():
    """A dict keeps a key's place on update and moves it to the end on delete + put: chaining's order."""
    for spec in specs("hash_map/compound"):
        table = {}
        for op in spec["operations"]:
            if op[0] == "put":
                table[op[1]] = op[2]
            else:
                table.pop(op[1], None)
        n = spec["buckets"]
        assert solve(spec) == [[[k, v] for k, v in table.items() if k % n == b] for b in range(n)]


def test_update_keeps_place():
    spec = {"buckets": 3, "operations": [["put", 1, 10], ["put", 4, 40], ["put", 1, 11], ["delete", 9]]}
    assert solve(spec) == [[], [[1, 11], [4, 40]], []]
