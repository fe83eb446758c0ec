import collections

from tests.bench._samples import specs
from transforms.bench.registry import get_task


def test_access_against_ordered_dict():
    for spec in specs("lru_cache/access"):
        cache = collections.OrderedDict()
        for key in spec["accesses"]:
            if key in cache:
                cache.move_to_end(key)
            else:
                if len(cache) == spec["capacity"]:
                    cache.popitem(last=False)
                cache[key] = True
        assert get_task("lru_cache/access").solve(spec) == list(cache)


def test_compound_against_ordered_dict():
    hits = 0
    for spec in specs("lru_cache/compound"):
        cache, results = collections.OrderedDict(), []
        for op in spec["operations"]:
            if op[0] == "get":
                results.append(cache.get(op[1], -1))
                if op[1] in cache:
                    cache.move_to_end(op[1])
            else:
                if op[1] not in cache and len(cache) == spec["capacity"]:
                    cache.popitem(last=False)
                cache[op[1]] = op[2]
                cache.move_to_end(op[1])
        assert get_task("lru_cache/compound").solve(spec) == results
        hits += sum(r != -1 for r in results)
    assert hits > 0
