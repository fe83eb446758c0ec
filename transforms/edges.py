"""A paper's statements to `edges` rows: what each statement (and its proof) uses and cites.

Methods, each deterministic and per document: `ref` (a `\\ref`-like command naming the label of a
statement), `name` (a written mention such as "by Lemma 2.3", matched by printed number), `cite` (a
`\\cite` key, resolved through the `.bbl`/`.bib` to an arXiv id or DOI; the corpus job joins a DOI
with the papers' `doi`) and `blueprint` (leanblueprint's
`\\uses{...}`). leanblueprint's `\\lean{...}`, `\\leanok`, `\\mathlibok` and `\\notready` give a statement's
`formal_decls` and `formal_status`.
"""
from __future__ import annotations

import collections
import re
from typing import Iterable, Iterator, Optional

from transforms.latex.model import ExtractionResult, Statement
from transforms.latex.scan import split_top_level
from transforms.sources.arxiv_ids import paper_id as arxiv_paper_id

_REF_RE = re.compile(r"\\(?:[cCvV]ref|ref|autoref|Autoref|labelcref|nameref|Nameref)\*?\s*\{([^{}]*)\}")
_CITE_RE = re.compile(r"\\(?:[A-Za-z]*[cC]ite[A-Za-z]*)\*?\s*(?:\[[^\[\]]*\]\s*){0,2}\{([^{}]*)\}")
_USES_RE = re.compile(r"\\uses\s*\{([^{}]*)\}")
_LEAN_RE = re.compile(r"\\lean\s*\{([^{}]*)\}")
_NUMBER = r"(\d+(?:\.\d+)*[a-z]?|[A-Z](?:\.\d+)*)(?![\w.]*\w)"
_DOI_RE = re.compile(r"10\.\d{4,9}/[^\s,;]+")


def doi_keys(field: Optional[str]) -> list[str]:
    """The DOIs of a `doi` field, lowercased (DOIs are case-insensitive; arXiv's metadata lists
    several separated by spaces): the keys on which cite edges meet papers."""
    return [doi.rstrip(".").lower() for doi in _DOI_RE.findall(field or "")]


def needs_cited_paper(edge: dict) -> bool:
    """A cite edge that names a DOI but no corpus paper yet."""
    return edge["relation"] == "cites" and bool(edge.get("dst_doi")) and not edge.get("dst_paper_id")


def cited_doi(edge: dict) -> str:
    """The key of a cite edge's DOI (as `doi_keys` makes them)."""
    return next(iter(doi_keys(edge["dst_doi"])), "")


def with_cited_paper(edge: dict, paper_ids: Iterable[str]) -> dict:
    """The edge with `dst_paper_id` set to the corpus paper carrying its DOI (the first id, when
    several versions or copies carry it); unchanged when none does."""
    found = sorted(set(paper_ids))
    return {**edge, "dst_paper_id": found[0]} if found else edge


class _NameFinder:
    """(name, number) of every "Lemma 2.3" naming one of a document's display names, any case.

    ASCII text (nearly all LaTeX) is searched lowered with a case-sensitive pattern, tried only where
    `str.find` sees a name: the regex engine would try every alternative at every word (60 ns a
    character). The positions are tried in order and the search resumes after each match, so the
    matches are those of the pattern's `finditer`; the groups are read from the original text at the
    same spans. Other text, or non-ASCII names (whose case folding reaches beyond ASCII), use the
    case-insensitive pattern.
    """

    def __init__(self, names: list[str]):
        alternatives = "|".join(map(re.escape, names))
        self.folded = re.compile(r"\b(" + alternatives + r")s?(?:~|\s)+" + _NUMBER, re.I)
        self.lowered = None
        if all(n.isascii() for n in names):
            number = _NUMBER.replace("[A-Z]", "[a-z]")
            self.lowered = re.compile(r"\b(" + alternatives.lower() + r")s?(?:~|\s)+" + number)
            self.lowered_names = sorted({n.lower() for n in names})

    def finditer(self, text: str) -> Iterator[tuple[str, str]]:
        if self.lowered is not None and text.isascii():
            lowered = text.lower()
            resume = 0
            for start in sorted({i for name in self.lowered_names for i in _occurrences(lowered, name)}):
                m = self.lowered.match(lowered, start) if start >= resume else None
                if m:
                    resume = m.end()
                    yield text[m.start(1):m.end(1)], text[m.start(2):m.end(2)]
        else:
            for m in self.folded.finditer(text):
                yield m.group(1), m.group(2)


def _occurrences(text: str, word: str) -> Iterator[int]:
    i = text.find(word)
    while i >= 0:
        yield i
        i = text.find(word, i + 1)


def _name_finder(display_names: Iterable[str]) -> Optional[_NameFinder]:
    names = sorted({n for n in display_names if n and n[0].isalpha()}, key=len, reverse=True)
    return _NameFinder(names) if names else None


def formal_fields(st: Statement) -> dict:
    """`formal_decls` and `formal_status` from the leanblueprint commands of a statement and its proof."""
    body, proof = st.statement_latex_raw, st.proof_latex or ""
    decls = [d.strip() for m in _LEAN_RE.finditer(body) for d in split_top_level(m.group(1)) if d.strip()]
    if "\\mathlibok" in body:
        status = "mathlib"
    elif "\\leanok" in proof:
        status = "proved"
    elif "\\leanok" in body:
        status = "stated"
    elif "\\notready" in body:
        status = "not-ready"
    elif decls or "\\uses" in body or "\\uses" in proof:
        status = "informal"
    else:
        status = None
    return {"formal_decls": decls or None, "formal_status": status}


def _edge(src: str, relation: str, method: str, location: str, count: int, *, dst: Optional[str] = None,
          label: Optional[str] = None, paper: Optional[str] = None, doi: Optional[str] = None,
          key: Optional[str] = None) -> dict:
    return {"src_theorem_id": src, "dst_theorem_id": dst, "dst_label": label, "dst_paper_id": paper,
            "dst_doi": doi, "cite_key": key, "relation": relation, "method": method, "location": location,
            "count": count}


def statement_edges(result: ExtractionResult, theorem_ids: dict[int, str]) -> list[dict]:
    """The edges of one document (without the paper's columns), one row per (src, target, method, location)."""
    by_label = {label: t.ordinal for label, t in result.labels.items()
                if t.kind == "statement" and t.ordinal is not None}
    by_name = {(st.display_name.lower(), st.number): st.ordinal for st in result.statements if st.number}
    names = _name_finder(st.display_name for st in result.statements)
    rows: list[dict] = []
    for st in result.statements:
        src = theorem_ids.get(st.ordinal)
        if src is None:
            continue
        for location, latex in (("statement", st.statement_latex_raw), ("proof", st.proof_latex or "")):
            if not latex:
                continue
            counts: collections.Counter = collections.Counter()
            has_ref = "ref" in latex                    # each pattern needs its word: most texts skip the scans
            for method, pattern, needed in (("ref", _REF_RE, has_ref), ("blueprint", _USES_RE, "\\uses" in latex)):
                for m in pattern.finditer(latex) if needed else ():
                    for label in split_top_level(m.group(1)):
                        label = label.strip()
                        if label and (method == "blueprint" or label in by_label):
                            counts[(method, label)] += 1
            if names is not None:
                for name, number in names.finditer(_REF_RE.sub(" ", latex) if has_ref else latex):
                    ordinal = by_name.get((name.lower(), number))
                    if ordinal is not None:
                        counts[("name", f"{name} {number}", ordinal)] += 1
            for (method, label, *ordinal), count in counts.items():
                dst_ordinal = ordinal[0] if ordinal else by_label.get(label)
                if dst_ordinal == st.ordinal:
                    continue                      # a statement's own label (or proof naming it) is no edge
                rows.append(_edge(src, "uses", method, location, count, dst=theorem_ids.get(dst_ordinal),
                                  label=label))
            cites: collections.Counter = collections.Counter(
                key.strip() for m in (_CITE_RE.finditer(latex) if "ite" in latex else ())  # in every cite command's name
                for key in split_top_level(m.group(1)) if key.strip())
            for key, count in cites.items():
                work = result.cited_works.get(key, {})
                rows.append(_edge(src, "cites", "cite", location, count, key=key, doi=work.get("doi"),
                                  paper=arxiv_paper_id(work["arxiv"]) if work.get("arxiv") else None))
    return rows
