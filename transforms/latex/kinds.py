"""Display title (or environment name) to canonical kind from `schemas.theorems.KINDS`.

"Main Theorem", "Theorem A" and "Key Lemma" name a theorem and a lemma: the first word of the title
that names a kind decides. Titles in a few other languages and the usual abbreviations count too.
"""
from __future__ import annotations

import re
import unicodedata
from typing import Optional

from schemas.theorems import KINDS

PROOF = "proof"

_WORD_KINDS = {
    "theorem": "theorem", "theorems": "theorem", "thm": "theorem", "theo": "theorem",
    "satz": "theorem", "theoreme": "theorem", "teorema": "theorem", "theor": "theorem",
    "lemma": "lemma", "lemmas": "lemma", "lem": "lemma", "lemme": "lemma", "sublemma": "lemma",
    "proposition": "proposition", "prop": "proposition", "propositions": "proposition",
    "corollary": "corollary", "corollaries": "corollary", "cor": "corollary", "coro": "corollary",
    "corol": "corollary", "korollar": "corollary", "corollaire": "corollary", "porism": "corollary",
    "definition": "definition", "definitions": "definition", "defn": "definition",
    "def": "definition", "dfn": "definition", "defi": "definition", "defin": "definition",
    "conjecture": "conjecture", "conj": "conjecture", "vermutung": "conjecture",
    "claim": "claim", "claims": "claim", "subclaim": "claim",
    "remark": "remark", "remarks": "remark", "rem": "remark", "rmk": "remark", "note": "remark",
    "notes": "remark", "bemerkung": "remark", "remarque": "remark", "comment": "remark",
    "example": "example", "examples": "example", "ex": "example", "exa": "example",
    "exmp": "example", "eg": "example", "beispiel": "example", "exemple": "example",
    "nonexample": "example", "counterexample": "example",
    "exercise": "exercise", "exercises": "exercise", "exer": "exercise", "exerc": "exercise",
    "fact": "fact", "facts": "fact",
    "observation": "observation", "observations": "observation", "obs": "observation",
    "assumption": "assumption", "assumptions": "assumption", "ass": "assumption",
    "axiom": "axiom", "axioms": "axiom", "ax": "axiom", "postulate": "axiom",
    "notation": "notation", "notations": "notation", "convention": "notation",
    "conventions": "notation", "terminology": "notation",
    "problem": "problem", "problems": "problem", "prob": "problem", "prb": "problem",
    "question": "question", "questions": "question", "quest": "question", "qn": "question",
    "hypothesis": "hypothesis", "hypotheses": "hypothesis", "hyp": "hypothesis",
    "proof": PROOF, "pf": PROOF, "beweis": PROOF, "preuve": PROOF, "demonstration": PROOF,
}
# Compound titles that read as one word.
_PREFIXES = (("theorem", "theorem"), ("lemma", "lemma"), ("corollary", "corollary"),
             ("definition", "definition"), ("proposition", "proposition"))
_WORD_RE = re.compile(r"[a-z]+")
_COMMAND_RE = re.compile(r"\\[A-Za-z@]+\*?|[{}]")

assert set(_WORD_KINDS.values()) <= set(KINDS) | {PROOF}


def _words(title: str) -> list[str]:
    plain = unicodedata.normalize("NFKD", _COMMAND_RE.sub(" ", title))
    plain = "".join(c for c in plain if not unicodedata.combining(c)).lower()
    return _WORD_RE.findall(plain)


def _kind_of_words(words: list[str]) -> Optional[str]:
    for word in words:
        if word in _WORD_KINDS:
            return _WORD_KINDS[word]
    for word in words:
        for prefix, kind in _PREFIXES:
            if word.startswith(prefix):
                return kind
    return None


def kind_for(display_name: str, env_name: str = "") -> str:
    """Canonical kind for a title such as "Main Theorem"; "proof" for proofs; else "other"."""
    kind = _kind_of_words(_words(display_name or ""))
    if kind is None:
        env_words = re.split(r"[^a-z]+", (env_name or "").lower())
        kind = _kind_of_words([w for w in env_words if w])
    return kind or "other"
