"""DAWG (Hybrid): a compound sequence of insert and delete, answered as the minimal word graph.

Rules (as in DSR-Bench's released answers, and stated in the prompt): the DAWG (directed acyclic
word graph) stores a set of words; after all operations it is minimized once, i.e. it is the
minimal deterministic acyclic automaton of the final word set (states with the same finality and
the same outgoing letters to the same states are merged). States are numbered breadth-first from
the start state 0, following edges in letter order, and written in that order as
[is_final, [[letter, target], ...]] with edges in letter order. An empty set is [[false, []]].

Spec: {"operations": [["insert", word] | ["delete", word]]}, lower-case words (generated over "abcd") -> json
[[bool, [[str, int], ...]], ...]. length = number of operations.
dawg/compound_states (suite "extended", DSR-Bench's answer shape): the same spec -> json
[[word, "T" | "F"], ...]: every state in the order above, named by the first word that reaches it
breadth-first (the shortest, then alphabetically first), with "T" when it is final.
"""
from __future__ import annotations

import collections
import dataclasses
import random

from transforms.bench.registry import PromptParts, Task, register
from transforms.bench.structures.trie import stored_words

ALPHABET = "abcd"  # generated words: few letters, so that suffixes are shared
DEFINITION = ("A DAWG (directed acyclic word graph) stores a set of words as an automaton: edges carry letters, a "
              "word is stored when its letters lead from the start state to a final state, and equivalent states "
              "are shared, so common prefixes and common suffixes are stored once.")
RULES = ("Apply all operations to the word set first, then build the minimal DAWG of the final set once (states "
         "with the same finality and the same letters leading to the same states are merged). Number the states "
         "breadth-first from the start state 0, following edges in letter order, and write each state in that order "
         "as [is_final, [[letter, target state], ...]] with edges in letter order.")


def minimal_dawg(words: set[str]) -> list[list]:
    """Minimize the trie of `words` by merging states with equal signatures, then number breadth-first."""
    classes: dict[tuple, int] = {}
    edges_of: list[tuple] = []
    final_of: list[bool] = []

    def state(prefix: str) -> int:
        letters = sorted({w[len(prefix)] for w in words if len(w) > len(prefix) and w.startswith(prefix)})
        signature = (prefix in words, tuple((c, state(prefix + c)) for c in letters))
        if signature not in classes:
            classes[signature] = len(classes)
            final_of.append(signature[0])
            edges_of.append(signature[1])
        return classes[signature]

    start = state("")
    number = {start: 0}
    queue, order = collections.deque([start]), []
    while queue:
        current = queue.popleft()
        order.append(current)
        for _, target in edges_of[current]:
            if target not in number:
                number[target] = len(number)
                queue.append(target)
    return [[final_of[s], [[c, number[t]] for c, t in edges_of[s]]] for s in order]


def solve(spec: dict) -> list[list]:
    return minimal_dawg(stored_words(spec))


def _word(rng: random.Random) -> str:
    return "".join(rng.choice(ALPHABET) for _ in range(rng.randint(2, 4)))


def state_words(automaton: list[list]) -> list[list[str]]:
    """[word, "T"|"F"] per state of a breadth-first numbered automaton: visiting states in number order
    replays the breadth-first search, so the first word that reaches a state is its shortest."""
    words = {0: ""}
    for state, (_, edges) in enumerate(automaton):
        for letter, target in edges:
            words.setdefault(target, words[state] + letter)
    return [[words[state], "T" if final else "F"] for state, (final, _) in enumerate(automaton)]


def solve_states(spec: dict) -> list[list[str]]:
    return state_words(solve(spec))


def generate(rng: random.Random, length: int) -> dict:
    stored: list[str] = []
    ops: list[list] = []
    for _ in range(length):
        if stored and rng.random() < 0.25:
            word = rng.choice(stored)
            stored.remove(word)
            ops.append(["delete", word])
        else:
            word = _word(rng)
            if word not in stored:
                stored.append(word)
            ops.append(["insert", word])
    return {"operations": ops}


def prompt(spec: dict) -> PromptParts:
    steps = "; ".join(f"{n}. {op[0]} \"{op[1]}\"" for n, op in enumerate(spec["operations"], 1))
    return PromptParts(definition=DEFINITION, name="DAWG", setup=f"The DAWG is initially empty. Apply these operations in order: {steps}.",
                       question="What is the minimized DAWG after all operations?",
                       answer_format=("a list of states, each [is_final, [[letter, target], ...]], e.g. "
                                      "[[false, [[\"a\", 1]]], [true, []]] for the set {\"a\"}"), rules=RULES)


def prompt_states(spec: dict) -> PromptParts:
    return dataclasses.replace(
        prompt(spec), question="What are the states of the minimized DAWG after all operations, and which are final?",
        answer_format=("a list with one [word, \"T\" or \"F\"] per state in state-number order, naming each state by "
                       "the first word that reaches it breadth-first (the shortest, then alphabetically first) and "
                       "marking final states \"T\", e.g. [[\"\", \"F\"], [\"a\", \"T\"]] for the set {\"a\"}"))


register(Task(category="Hybrid", structure="dawg", name="compound_states", answer_type="json",
              generate=generate, solve=solve_states, prompt=prompt_states, doc=__doc__, suite="extended"))
register(Task(category="Hybrid", structure="dawg", name="compound", answer_type="json",
              generate=generate, solve=solve, prompt=prompt, doc=__doc__))
