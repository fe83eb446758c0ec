import pytest

from tests.bench._samples import specs
from transforms.bench.registry import SpecError, get_task


def test_against_list_methods():
    for spec in specs("array/access"):
        assert get_task("array/access").solve(spec) == spec["array"][spec["index"]]
    for spec in specs("array/delete"):
        expected = list(spec["array"])
        del expected[spec["index"]]
        assert get_task("array/delete").solve(spec) == expected
    for spec in specs("array/insert"):
        expected = list(spec["array"])
        expected.insert(spec["index"], spec["value"])
        assert get_task("array/insert").solve(spec) == expected
    for spec in specs("array/reverse"):
        assert get_task("array/reverse").solve(spec) == list(reversed(spec["array"]))


def test_search_first_occurrence_or_minus_one():
    solve = get_task("array/search").solve
    assert solve({"array": [4, 7, 4], "value": 4}) == 0
    assert solve({"array": [4, 7, 4], "value": 5}) == -1
    found = [solve(s) for s in specs("array/search")]
    assert any(i == -1 for i in found) and any(i >= 0 for i in found)


def test_insert_at_end_appends_and_bad_index_is_rejected():
    assert get_task("array/insert").solve({"array": [1, 2], "index": 2, "value": 9}) == [1, 2, 9]
    with pytest.raises(SpecError, match="index must be in 0..1"):
        get_task("array/access").solve({"array": [1, 2], "index": 2})
    with pytest.raises(SpecError, match="no field 'array'"):
        get_task("array/reverse").solve({"values": [1]})
