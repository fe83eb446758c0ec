"""Extraction on ../shared/corpora: the arXiv bundles (unpacked in memory) and every book and paper.

Expected counts per arXiv paper were obtained by reading the sources: `\\begin{X}` of the declared
theorem environments in the files the main file includes, outside `%` comments, `comment`
environments and `\\iffalse`; math9901999's image.tex has one more after `\\endinput` (never typeset).
"""
import gzip
import io
import re
import tarfile
from collections import Counter

import pytest

from transforms.latex.comments import strip_comments
from transforms.latex.extract import extract_submission

pytestmark = pytest.mark.shared

EXPECTED_COUNTS = {
    "2101.99001": 43, "2101.99002": 28, "2101.99003": 7, "2101.99004": 34, "2101.99005": 299,
    "2101.99006": 218, "2101.99008": 490, "math9901999": 510,
}
# (paper, kind, number, title, label, file, line, start of the plain text), picked by reading the sources.
# 2101.99001's `\cnewtheorem` runs `\expandafter\let\csname c@#1\endcsname\c@thm`: every environment
# steps the theorem counter, so the theorem after two definitions and three lemmas of section 3 is 3.7.
PICKED = [
    ("2101.99001", "theorem", "3.7", "Hausdorff Maximality Theorem", "thm:hau", "main_a.tex", 615,
     "Every nonempty partially ordered set contains a maximal totally ordered subset."),
    ("2101.99006", "lemma", "1.1", "Concavity", "concave", "chapter/jensen.tex", 5,
     "$h$ is strictly concave on $[0,\\infty)$."),
    ("2101.99008", "definition", "1.1", "Representable functor", "def.representable", "P1-Polynomials.tex", 33,
     "For a set $S$, we denote by"),
    ("2101.99003", "other", "1", None, None, "2101.99003.tex", 490, "There is no match between functions"),
]
BOOKS = {
    "books/cring": "CRing.tex", "books/hott-book": "hott-online.tex", "books/napkin": "Napkin.tex",
    "books/openlogic": "open-logic-complete.tex", "books/symmetry-book": "book.tex",
    "papers/equational-theories": "paper/main.tex", "papers/pfr-blueprint": "blueprint/src/print.tex",
    "papers/poly-book": "Book-Poly.tex", "papers/rijke-hott-intro": "Book/hott-intro.tex",
    "papers/shulman-catlog": "catlog.tex", "papers/synthetic-zariski": None,
}


def _submissions(bundle):
    """(paper id, files or None for PDF-only) of an arXiv bundle, unpacked in memory."""
    with tarfile.open(bundle) as outer:
        for member in outer:
            if not member.isfile():
                continue
            paper = member.name.split("/")[-1].rsplit(".", 1)[0]
            if member.name.endswith(".pdf"):
                yield paper, None
                continue
            raw = gzip.decompress(outer.extractfile(member).read())
            try:
                with tarfile.open(fileobj=io.BytesIO(raw)) as inner:
                    yield paper, {m.name: inner.extractfile(m).read() for m in inner if m.isfile()}
            except tarfile.ReadError:
                yield paper, {paper + ".tex": raw}


@pytest.fixture(scope="module")
def arxiv_results(shared_corpora):
    results = {}
    for bundle in sorted((shared_corpora / "arxiv").glob("*.tar")):
        for paper, files in _submissions(bundle):
            results[paper] = None if files is None else extract_submission(files)
    return results


def test_every_arxiv_submission_accounted_for(arxiv_results):
    assert sorted(arxiv_results) == sorted(EXPECTED_COUNTS) + ["2101.99007"] or \
        set(arxiv_results) == set(EXPECTED_COUNTS) | {"2101.99007"}
    assert arxiv_results["2101.99007"] is None                      # PDF-only
    counts = {p: len(r.statements) for p, r in arxiv_results.items() if r is not None}
    assert counts == EXPECTED_COUNTS
    for result in arxiv_results.values():
        if result is not None:
            assert not [e for e in result.events if e.fatal]
            assert [s.ordinal for s in result.statements] == list(range(len(result.statements)))


@pytest.mark.parametrize("paper,kind,number,title,label,file,line,text", PICKED)
def test_picked_arxiv_statements_found(arxiv_results, paper, kind, number, title, label, file, line, text):
    hits = [s for s in arxiv_results[paper].statements if s.file == file and s.line == line]
    assert len(hits) == 1
    s = hits[0]
    assert (s.kind, s.number, s.title, s.label) == (kind, number, title, label)
    assert s.statement_text.startswith(text)


def _begins_outside_comments_and_verbatim(text, envs):
    text = strip_comments(text)
    text = re.sub(r"\\begin\{(verbatim|lstlisting|minted)\}.*?\\end\{\1\}", "", text, flags=re.S)
    return Counter(m.group(1) for m in re.finditer(r"\\begin\{([^{}]+)\}", text) if m.group(1) in envs)


@pytest.mark.parametrize("project", sorted(BOOKS))
def test_every_declared_environment_extracted_or_listed(shared_corpora, project):
    root = shared_corpora / project
    files = {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}
    result = extract_submission(files, main_file=BOOKS[project], render=False)
    assert not [e for e in result.events if e.fatal] and len(result.statements) > 20
    envs = {s.env_name for s in result.statements} | {env for env, _ in result.skipped_environments}
    # distinct places: a file included twice (Open Logic reuses sections) yields its statements twice
    extracted = Counter(file for file, _ in {(s.file, s.line) for s in result.statements})
    unextracted = len(result.skipped_environments)
    for file in extracted:
        text = files[file].decode("utf-8", "replace")
        expected = sum(_begins_outside_comments_and_verbatim(text, envs).values())
        assert expected - unextracted <= extracted[file] <= expected, file
