"""Checks an LLM description against the house style; a rejection carries a reason for the retry.

Style (from the seed system): at most four sentences, plain ASCII, no LaTeX or symbols, no
reference to "this theorem". Light non-ASCII (an accented name) is transliterated, not rejected.
"""
from __future__ import annotations

import re
import unicodedata
from typing import Optional

MAX_SENTENCES = 4
MAX_CHARS = 800
MAX_NON_ASCII_FRACTION = 0.05

_LATEX_COMMAND = re.compile(r"\\[A-Za-z]+|\\[\[\]()]")
_MATH_CHARS = re.compile(r"[\^_{}]")
_SENTENCE_END = re.compile(r"[.!?]+(?=\s+[A-Z(\"']|\s*$)")
_SELF_REFERENCE = re.compile(
    r"\b(this|the above|the following|the present)\s+(theorem|lemma|proposition|corollary|result|statement|claim|definition)\b",
    re.IGNORECASE)
_PREFACE = re.compile(r"^\s*(description|slogan|answer)\s*:\s*", re.IGNORECASE)


def clean_answer(text: Optional[str]) -> str:
    """Strip a "Description:" preface, surrounding quotes and extra whitespace."""
    text = _PREFACE.sub("", (text or "").strip())
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'`":
        text = text[1:-1]
    return " ".join(text.split())


def count_sentences(text: str) -> int:
    return len(_SENTENCE_END.findall(text)) or (1 if text.strip() else 0)


def rejection_reason(text: str, *, max_sentences: int = MAX_SENTENCES, max_chars: int = MAX_CHARS) -> Optional[str]:
    """Why a cleaned answer is not an acceptable description, or None when it is."""
    if not text:
        return "empty answer"
    if len(text) > max_chars:
        return f"overlong: {len(text)} characters (at most {max_chars})"
    sentences = count_sentences(text)
    if sentences > max_sentences:
        return f"overlong: {sentences} sentences (at most {max_sentences})"
    non_ascii = sum(1 for c in text if ord(c) > 127)
    if non_ascii > MAX_NON_ASCII_FRACTION * len(text):
        return f"not plain ASCII: {non_ascii} non-ASCII characters"
    if "$" in text or _LATEX_COMMAND.search(text) or len(_MATH_CHARS.findall(text)) >= 3:
        return "contains LaTeX or math symbols"
    match = _SELF_REFERENCE.search(text)
    if match:
        return f"refers to {match.group(0)!r}"
    return None


def to_ascii(text: str) -> str:
    """Transliterate the few non-ASCII characters an accepted answer may have (e -> e, dashes, quotes)."""
    replacements = {"\u2013": "-", "\u2014": "-", "\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'}
    text = "".join(replacements.get(c, c) for c in text)
    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
