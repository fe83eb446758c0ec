"""Trie (Associative): a compound sequence of insert and delete, and prefix counting.

Words are lower-case (generated ones use the letters a-e, so that prefixes are shared).

Rules (stated in the prompt): the trie holds a set of words over lower-case letters; each node is
labelled with the prefix it spells, the root with the empty string (as in DSR-Bench); a node where
a stored word ends gets a trailing `*` in its label; children are ordered alphabetically.
Inserting a stored word changes nothing; deleting a word unmarks its end and removes the nodes
that no longer lead to any stored word; deleting an absent word changes nothing.

Specs:
    trie/compound      {"operations": [["insert", word] | ["delete", word]]} -> tree:nary
                       [label, [child, ...]]; length = number of operations.
    trie/prefix_count  {"words": [word], "prefixes": [str]} -> list[int]: for each prefix, how
                       many distinct stored words start with it (a word starts with itself; the
                       empty prefix counts every word); length = number of inserted words.
                       Added to the seed's task list because it asks for an aggregate read off
                       the structure rather than the structure's serialization.
    trie/compound_preorder  (suite "extended", DSR-Bench's answer shape) the trie/compound spec ->
                       list[str]: the nodes in preorder (children alphabetical), each written as the
                       letter on its incoming edge, the root as "".
"""
from __future__ import annotations

import dataclasses
import random
import string

from transforms.bench.registry import PromptParts, SpecError, Task, check_str, field, operations_field, register

ALPHABET = "abcde"  # generated words; specs may use any lower-case letters
LETTERS = string.ascii_lowercase
DEFINITION = ("A trie (prefix tree) stores words character by character: each edge adds one letter, so every node "
              "spells the prefix read on the path from the root, and words with a common prefix share those nodes.")
RULES = ("Each node is labelled with the prefix it spells; the root is the empty string \"\". A node where a stored "
         "word ends has a trailing * in its label (e.g. \"ab*\"). Children are in alphabetical order. Inserting a "
         "word already stored changes nothing; deleting a word unmarks it and removes nodes that no longer lead to "
         "any stored word; deleting an absent word changes nothing.")
COUNT_RULES = ("The trie stores a set of words (a repeated insert changes nothing). A word starts with itself, and "
               "the empty prefix is shared by every word.")


def _words_tree(words: set[str]) -> list:
    def node(prefix: str) -> list:
        below = {w[len(prefix)] for w in words if len(w) > len(prefix) and w.startswith(prefix)}
        label = prefix + ("*" if prefix in words and prefix else "")
        return [label, [node(prefix + c) for c in sorted(below)]]
    return node("")


def stored_words(spec: dict) -> set[str]:
    words: set[str] = set()
    for i, op in enumerate(operations_field(spec, {"insert": (str,), "delete": (str,)})):
        check_str(op[1], f"operations[{i}] word", LETTERS)
        if not op[1]:
            raise SpecError(f"operations[{i}]: words must not be empty")
        (words.add if op[0] == "insert" else words.discard)(op[1])
    return words


def solve_compound(spec: dict) -> list:
    return _words_tree(stored_words(spec))


def solve_prefix_count(spec: dict) -> list[int]:
    words, prefixes = field(spec, "words"), field(spec, "prefixes")
    if not isinstance(words, list) or not isinstance(prefixes, list):
        raise SpecError("words and prefixes must be lists of strings")
    stored = {check_str(w, f"words[{i}]", LETTERS) for i, w in enumerate(words)}
    return [sum(w.startswith(check_str(p, f"prefixes[{i}]", LETTERS)) for w in stored)
            for i, p in enumerate(prefixes)]


def _word(rng: random.Random) -> str:
    return "".join(rng.choice(ALPHABET) for _ in range(rng.randint(2, 5)))


def generate_compound(rng: random.Random, length: int) -> dict:
    stored: list[str] = []
    ops: list[list] = []
    for _ in range(length):
        roll = rng.random()
        if stored and roll < 0.25:
            word = rng.choice(stored)
            stored.remove(word)
            ops.append(["delete", word])
        elif roll < 0.3:
            ops.append(["delete", _word(rng)])
            if ops[-1][1] in stored:
                stored.remove(ops[-1][1])
        else:
            word = rng.choice(stored) if stored and roll < 0.35 else _word(rng)
            if word not in stored:
                stored.append(word)
            ops.append(["insert", word])
    return {"operations": ops}


def preorder_letters(tree: list) -> list[str]:
    """A trie written [label, [child, ...]] -> each node's last letter in preorder (the root's is "")."""
    label, children = tree
    return [label.rstrip("*")[-1:]] + [letter for child in children for letter in preorder_letters(child)]


def solve_compound_preorder(spec: dict) -> list[str]:
    return preorder_letters(solve_compound(spec))


def generate_prefix_count(rng: random.Random, length: int) -> dict:
    words = [_word(rng) for _ in range(length)]
    prefixes = []
    for _ in range(rng.randint(3, 5)):
        word = rng.choice(words)
        prefixes.append(word[:rng.randint(1, len(word))] if rng.random() < 0.8 else _word(rng)[:2])
    return {"words": words, "prefixes": prefixes}


def prompt_compound(spec: dict) -> PromptParts:
    steps = "; ".join(f"{n}. {op[0]} \"{op[1]}\"" for n, op in enumerate(spec["operations"], 1))
    return PromptParts(definition=DEFINITION, name="trie", setup=f"The trie is initially empty. Apply these operations in order: {steps}.",
                       question="What is the trie after all operations?",
                       answer_format=("a tree [label, [child, ...]] of strings, e.g. [\"\", [[\"a\", [[\"ab*\", []]]]]] "
                                      "for the trie holding only \"ab\""), rules=RULES)


def prompt_compound_preorder(spec: dict) -> PromptParts:
    parts = prompt_compound(spec)
    return dataclasses.replace(
        parts, question="Which letters does the trie hold after all operations, node by node in preorder?",
        answer_format=("a list of strings: the root as \"\", then every node as the letter on the edge into it, "
                       "in preorder with children in alphabetical order, e.g. [\"\", \"a\", \"b\", \"c\"] for "
                       "the trie holding \"ab\" and \"c\""))


def prompt_prefix_count(spec: dict) -> PromptParts:
    words = ", ".join(f"\"{w}\"" for w in spec["words"])
    prefixes = ", ".join(f"\"{p}\"" for p in spec["prefixes"])
    return PromptParts(definition=DEFINITION, name="trie", setup=f"Insert these words into an empty trie in order: {words}.",
                       question=f"For each of the prefixes {prefixes}, how many stored words start with it?",
                       answer_format="a list of integers, one per prefix in the order given", rules=COUNT_RULES)


register(Task(category="Associative", structure="trie", name="compound", answer_type="tree:nary",
              generate=generate_compound, solve=solve_compound, prompt=prompt_compound, doc=__doc__))
register(Task(category="Associative", structure="trie", name="prefix_count", answer_type="list[int]",
              generate=generate_prefix_count, solve=solve_prefix_count, prompt=prompt_prefix_count, doc=__doc__))
register(Task(category="Associative", structure="trie", name="compound_preorder", answer_type="list[str]",
              generate=generate_compound, solve=solve_compound_preorder, prompt=prompt_compound_preorder,
              doc=__doc__, suite="extended"))
