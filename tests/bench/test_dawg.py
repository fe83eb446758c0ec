import collections

from tests.bench._samples import specs
from transforms.bench.registry import get_task

solve = get_task("dawg/compound").solve


def _language(states, state=0, prefix=""):
    final, edges = states[state]
    if final:
        yield prefix
    for letter, target in edges:
        yield from _language(states, target, prefix + letter)


def test_accepts_exactly_the_words_with_the_minimal_number_of_states():
    for spec in specs("dawg/compound"):
        words = set()
        for op in spec["operations"]:
            (words.add if op[0] == "insert" else words.discard)(op[1])
        states = solve(spec)
        assert sorted(_language(states)) == sorted(words)
        prefixes = {w[:i] for w in words for i in range(len(w) + 1)} | {""}
        right_languages = {frozenset(w[len(p):] for w in words if w.startswith(p)) for p in prefixes}
        assert len(states) == len(right_languages)  # Myhill-Nerode: the minimal automaton's size


def test_states_are_numbered_breadth_first():
    for spec in specs("dawg/compound", per_difficulty=5):
        states = solve(spec)
        seen, queue = [0], collections.deque([0])
        while queue:
            for _, target in states[queue.popleft()][1]:
                if target not in seen:
                    seen.append(target)
                    queue.append(target)
        assert seen == list(range(len(states)))


def test_worked_example_shares_suffixes():
    assert solve({"operations": [["insert", "ab"], ["insert", "cb"]]}) == [
        [False, [["a", 1], ["c", 1]]], [False, [["b", 2]]], [True, []]]
    assert solve({"operations": []}) == [[False, []]]
