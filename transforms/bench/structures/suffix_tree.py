"""Suffix tree (Associative): construct the suffix tree of a string.

Rules (as in DSR-Bench's released answers, and stated in the prompt): the terminator `$` is
appended to the string; the tree is the compressed trie of all suffixes of `string$`: every edge
is labelled with a non-empty substring, no two edges out of a node start with the same character,
and every internal node other than the root has at least two children. A node is written
[edge label, [child, ...]] with the root's label "", children ordered by their edge label with `$`
before every letter.

Spec: {"string": lower-case letters, without `$`} (generated over "abc") -> tree:nary. length = len(string).
"""
from __future__ import annotations

import random
import string

from transforms.bench.registry import PromptParts, Task, register, str_field

ALPHABET = "abc"  # generated strings: few letters, so that suffixes branch
DEFINITION = ("A suffix tree of a string is the compressed trie of all its suffixes: every path from the root to a "
              "leaf spells one suffix, edges carry substrings, and a node with a single child is merged into its edge.")
RULES = ("Append the terminator $ to the string first, so every suffix ends at a leaf. Write each node as "
         "[edge label, [child, ...]], the root as [\"\", [...]]; order children by edge label, with $ before every letter.")


def _compressed(trie: dict, label: str) -> list:
    while len(trie) == 1:
        (char, below), = trie.items()
        label += char
        trie = below
    return [label, [_compressed(trie[c], c) for c in sorted(trie)]]


def suffix_tree(text: str) -> list:
    """Naive construction (insert every suffix into a trie, then merge unary chains): O(n^2), n <= 30."""
    trie: dict = {}
    text += "$"
    for start in range(len(text)):
        node = trie
        for char in text[start:]:
            node = node.setdefault(char, {})
    return ["", [_compressed(trie[c], c) for c in sorted(trie)]]


def solve(spec: dict) -> list:
    return suffix_tree(str_field(spec, "string", string.ascii_lowercase))


def generate(rng: random.Random, length: int) -> dict:
    return {"string": "".join(rng.choice(ALPHABET) for _ in range(length))}


def prompt(spec: dict) -> PromptParts:
    return PromptParts(definition=DEFINITION, name="suffix tree", setup=f"The string is \"{spec['string']}\".",
                       question="What is the suffix tree of the string (with $ appended)?",
                       answer_format=("a tree [label, [child, ...]] of strings, e.g. [\"\", [[\"$\", []], [\"a$\", []]]] "
                                      "for the string \"a\""), rules=RULES)


register(Task(category="Associative", structure="suffix_tree", name="construct", answer_type="tree:nary",
              generate=generate, solve=solve, prompt=prompt, doc=__doc__))
