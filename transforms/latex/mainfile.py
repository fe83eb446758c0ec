"""Which .tex file of a submission is the document: a score over the candidates.

A real main file has `\\documentclass` and `\\begin{document}`; among several, the one that is not
included by another file, has a title, sections and theorem environments wins, while beamer talks,
referee replies and drafts lose. Ties break by path depth, a conventional name, then size and name,
so the choice is deterministic.
"""
from __future__ import annotations

import posixpath
import re
from typing import Mapping, Optional

TEX_EXTENSIONS = (".tex", ".ltx", ".latex")
_CONVENTIONAL_STEMS = {"main", "ms", "paper", "article", "manuscript", "root", "book", "thesis"}
_PENALIZED_NAME_RE = re.compile(r"referee|reply|response|rebuttal|cover.?letter|poster|slides|talk|"
                                r"supplement|draft|old|backup|copy|template|sample", re.I)
_DOCUMENTCLASS_RE = re.compile(r"\\document(?:class|style)\s*(?:\[[^\]]{0,2000}\])?\s*\{\s*([^}\s]{1,64})\s*\}")
_INCLUDE_ARG_RE = re.compile(r"\\(?:input|include|subfile|import\s*\{[^}]*\}|subimport\s*\{[^}]*\})\s*\{([^}]{1,300})\}")
_SECTION_RE = re.compile(r"\\(?:chapter|section)\*?\s*[\[{]")
_THEOREM_RE = re.compile(r"\\(?:newtheorem|declaretheorem|spnewtheorem)|\\begin\{(?:theorem|lemma|proposition)\}")


def is_tex_name(path: str) -> bool:
    return path.lower().endswith(TEX_EXTENSIONS)


def document_class(text: str) -> Optional[str]:
    m = _DOCUMENTCLASS_RE.search(text[:200_000])
    return m.group(1) if m else None


def _included_stems(texts: Mapping[str, str]) -> set[str]:
    """Stems (path without .tex) that some other file includes, for the inclusion-graph penalty."""
    stems = set()
    for text in texts.values():
        for m in _INCLUDE_ARG_RE.finditer(text):
            name = posixpath.normpath(m.group(1).strip().lstrip("./") or ".")
            stems.add(name[:-4] if name.endswith(".tex") else name)
            stems.add(posixpath.basename(name[:-4] if name.endswith(".tex") else name))
    return stems


def score_main_candidate(path: str, text: str, included: set[str]) -> int:
    """Points that make `path` look like the main file; <= 0 means not a document at all."""
    score = 0
    cls = document_class(text)
    if cls is not None:
        score += 10
        if cls in ("beamer", "standalone", "subfiles"):
            score -= 12 if cls != "beamer" else 6
    if "\\begin{document}" in text:
        score += 10
    if score <= 0:
        return 0
    if "\\title" in text:
        score += 2
    if "\\maketitle" in text:
        score += 1
    score += min(len(_SECTION_RE.findall(text)), 5)
    score += min(len(_THEOREM_RE.findall(text)), 3)
    stem = path[:-4] if path.endswith(".tex") else path
    if stem in included or posixpath.basename(stem) in included:
        score -= 8
    if _PENALIZED_NAME_RE.search(posixpath.basename(path)):
        score -= 4
    return score


def rank_main_candidates(texts: Mapping[str, str]) -> list[tuple[str, int]]:
    """(path, score) of every file that could be the main file, best first."""
    included = _included_stems(texts)
    scored = [(path, score_main_candidate(path, text, included)) for path, text in texts.items()]
    scored = [(p, s) for p, s in scored if s > 0]

    def order(item: tuple[str, int]) -> tuple:
        path, score = item
        stem = posixpath.splitext(posixpath.basename(path))[0].lower()
        return (-score, path.count("/"), stem not in _CONVENTIONAL_STEMS, -len(texts[path]), path)

    return sorted(scored, key=order)


def find_main_file(texts: Mapping[str, str]) -> Optional[str]:
    """The best candidate, or the only text file when there is exactly one; else None."""
    ranked = rank_main_candidates(texts)
    if ranked:
        return ranked[0][0]
    if len(texts) == 1:
        return next(iter(texts))
    return None
