"""Suffix tree (Associative): construct the suffix tree of a string.

Rules (as in DSR-Bench's released answers, and stated in the prompt): the terminator `$` is
appended to the string; the tree is the compressed trie of all suffixes of `string$`: every edge
is labelled with a non-empty substring, no two edges out of a node start with the same character,
and every internal node other than the root has at least two children. A node is written
[edge label, [child, ...]] with the root's label "", children ordered by their edge label with `$`
before every letter.

Spec: {"string": lower-case letters, without `$`} (generated over "abc") -> tree:nary. length = len(string).
suffix_tree/construct_preorder (suite "extended", DSR-Bench's answer shape): the same spec -> list[str],
the edge labels of the nodes below the root in preorder (children ordered as above).
"""
from __future__ import annotations

import dataclasses
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


def preorder_labels(tree: list) -> list[str]:
    """The edge labels of every node below the root of a [label, [child, ...]] tree, in preorder."""
    return [label for child in tree[1] for label in [child[0], *preorder_labels(child)]]


def solve_preorder(spec: dict) -> list[str]:
    return preorder_labels(solve(spec))


def generate(rng: random.Random, length: int) -> dict:
    return {"string": "".join(rng.choice(ALPHABET) for _ in range(length))}


def prompt(spec: dict) -> PromptParts:
    return PromptParts(definition=DEFINITION, name="suffix tree", setup=f"The string is \"{spec['string']}\".",
                       question="What is the suffix tree of the string (with $ appended)?",
                       answer_format=("a tree [label, [child, ...]] of strings, e.g. [\"\", [[\"$\", []], [\"a$\", []]]] "
                                      "for the string \"a\""), rules=RULES)


def prompt_preorder(spec: dict) -> PromptParts:
    return dataclasses.replace(
        prompt(spec), question="What are the edge labels of the suffix tree of the string (with $ appended), in preorder?",
        answer_format=("a list of strings: the edge label into every node below the root, in preorder with children "
                       "ordered by edge label ($ first), e.g. [\"$\", \"a\", \"$\", \"a$\", \"a$\"] for the string \"aa\""))


register(Task(category="Associative", structure="suffix_tree", name="construct_preorder", answer_type="list[str]",
              generate=generate, solve=solve_preorder, prompt=prompt_preorder, doc=__doc__, suite="extended"))
register(Task(category="Associative", structure="suffix_tree", name="construct", answer_type="tree:nary",
              generate=generate, solve=solve, prompt=prompt, doc=__doc__))
