"""Which .tex file of a submission is the document: a score over the candidates.

A real main file has `\\documentclass` and `\\begin{document}`; among several, the one that is not
included by another file, has a title, sections and theorem environments wins, while beamer talks,
referee replies and drafts lose. Ties break by path depth, a conventional name, then size and name,
so the choice is deterministic.
"""
from __future__ import annotations

import itertools
import posixpath
import re
from typing import Mapping, Optional

TEX_EXTENSIONS = (".tex", ".ltx", ".latex")
# Files LaTeX reads as source. Past a file limit these are kept and figures are not, so a submission
# with thousands of figure files keeps its statements.
SOURCE_EXTENSIONS = TEX_EXTENSIONS + (".sty", ".cls", ".def", ".cfg", ".clo", ".bbl")
_CONVENTIONAL_STEMS = {"main", "ms", "paper", "article", "manuscript", "root", "book", "thesis"}
_PENALIZED_NAME_RE = re.compile(r"referee|reply|response|rebuttal|cover.?letter|poster|slides|talk|"
                                r"supplement|draft|old|backup|copy|template|sample", re.I)
_DOCUMENTCLASS_RE = re.compile(r"\\document(?:class|style)\s*(?:\[[^\]]{0,2000}\])?\s*\{\s*([^}\s]{1,64})\s*\}")
_INCLUDE_ARG_RE = re.compile(r"\\(?:input|include|subfile|import\s*\{[^}]*\}|subimport\s*\{[^}]*\})\s*\{([^}]{1,300})\}")
_SECTION_RE = re.compile(r"\\(?:chapter|section)\*?\s*[\[{]")
_THEOREM_RE = re.compile(r"\\(?:newtheorem|declaretheorem|spnewtheorem)|\\begin\{(?:theorem|lemma|proposition)\}")


def is_tex_name(path: str) -> bool:
    return path.lower().endswith(TEX_EXTENSIONS)


def is_source_name(path: str) -> bool:
    return path.lower().endswith(SOURCE_EXTENSIONS)


def document_class(text: str) -> Optional[str]:
    m = _DOCUMENTCLASS_RE.search(text, 0, 200_000)
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


def _stem(path: str) -> str:
    return path[:-4] if path.endswith(".tex") else path


def _includes(path: str, text: str, stems: dict[str, str]) -> list[str]:
    found = []
    for m in _INCLUDE_ARG_RE.finditer(text):
        name = m.group(1).strip()
        for base in (posixpath.dirname(path), ""):
            target = stems.get(_stem(posixpath.normpath(posixpath.join(base, name))))
            if target:
                found.append(target)
                break
    return found


def _with_includes(path: str, texts: Mapping[str, str], stems: dict[str, str], limit: int = 200) -> str:
    """`path`'s text followed by the texts it includes, transitively (sections often live there)."""
    seen, order, todo = {path}, [path], [path]
    while todo and len(order) < limit:
        current = todo.pop()
        for target in _includes(current, texts[current], stems):
            if target not in seen:
                seen.add(target)
                order.append(target)
                todo.append(target)
    return "\n".join(texts[p] for p in order)


def score_main_candidate(path: str, text: str, included: set[str], content: Optional[str] = None) -> int:
    """Points that make `path` look like the main file; <= 0 means not a document at all.

    `content` is the text with its includes, where sections and theorems are counted.
    """
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
    content = text if content is None else content
    score += _count_upto(_SECTION_RE, content, 5)
    score += _count_upto(_THEOREM_RE, content, 3)
    score += min(len(content) // 100_000, 5)          # the document that reaches the most text
    stem = path[:-4] if path.endswith(".tex") else path
    if stem in included or posixpath.basename(stem) in included:
        score -= 8
    if _PENALIZED_NAME_RE.search(posixpath.basename(path)):
        score -= 4
    return score


def _count_upto(pattern: re.Pattern, text: str, cap: int) -> int:
    """Matches of `pattern` in `text`, counted up to `cap` (the search stops there)."""
    return sum(1 for _ in itertools.islice(pattern.finditer(text), cap))


def _wrapper_scores(texts: Mapping[str, str], own: dict[str, int]) -> dict[str, int]:
    """Files without \\documentclass that \\input a document (HoTT's hott-online.tex sets options, then
    inputs main.tex): such a root scores one more than the document it wraps."""
    stems = {(p[:-4] if p.endswith(".tex") else p): p for p in texts}
    scores = {}
    for path, text in texts.items():
        if document_class(text) is not None:
            continue
        for m in _INCLUDE_ARG_RE.finditer(text):
            name = posixpath.normpath(posixpath.join(posixpath.dirname(path), m.group(1).strip()))
            target = stems.get(name[:-4] if name.endswith(".tex") else name)
            if target and own.get(target, 0) > 0:
                scores[path] = max(scores.get(path, 0), own[target] + 1)
    return scores


def rank_main_candidates(texts: Mapping[str, str]) -> list[tuple[str, int]]:
    """(path, score) of every file that could be the main file, best first."""
    included = _included_stems(texts)
    stems = {_stem(p): p for p in texts}
    documents = [p for p, t in texts.items() if document_class(t) is not None or "\\begin{document}" in t]
    content = {p: _with_includes(p, texts, stems) for p in documents}
    own = {p: score_main_candidate(p, texts[p], set(), content[p]) for p in documents}
    scored = [(p, score_main_candidate(p, texts[p], included, content[p])) for p in documents]
    scored += list(_wrapper_scores(texts, own).items())
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
