from tests.bench._samples import specs
from transforms.bench.registry import get_task


def _walk(node, depth=0):
    yield node, depth
    for child in node[1]:
        yield from _walk(child, depth + 1)


def test_trie_holds_exactly_the_final_word_set():
    for spec in specs("trie/compound"):
        words = set()
        for op in spec["operations"]:
            (words.add if op[0] == "insert" else words.discard)(op[1])
        tree = get_task("trie/compound").solve(spec)
        assert tree[0] == ""
        marked = {label[:-1] for (label, _), _ in _walk(tree) if label.endswith("*")}
        assert marked == words
        for (label, children), depth in _walk(tree):
            prefix = label.rstrip("*")
            assert len(prefix) == depth and any(w.startswith(prefix) for w in words | {""})
            assert [c[0] for c in children] == sorted(c[0] for c in children)
            if not children and depth:
                assert label.endswith("*")  # no dangling nodes after deletes


def test_worked_example():
    spec = {"operations": [["insert", "ab"], ["insert", "abc"], ["insert", "b"], ["delete", "abc"], ["delete", "zz"]]}
    assert get_task("trie/compound").solve(spec) == ["", [["a", [["ab*", []]]], ["b*", []]]]


def test_prefix_count_against_brute_force():
    for spec in specs("trie/prefix_count"):
        words = set(spec["words"])
        assert get_task("trie/prefix_count").solve(spec) == [
            len([w for w in words if w[:len(p)] == p]) for p in spec["prefixes"]]
    assert get_task("trie/prefix_count").solve({"words": ["ab", "ab", "a"], "prefixes": ["", "a", "ab", "b"]}) == [2, 2, 1, 0]
