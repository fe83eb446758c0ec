"""The HoTT book: statement numbers against the first edition's own `\\newlabel{label}{number}` list.

The labels that count are found independently of the extractor: every `\\label` inside a
`\\begin{X}...\\end{X}` of a theorem-like X the book declares (`\\newtheorem`, or its `\\defthm`
wrapper), outside comments, unless an `\\item` or a numbered display comes first (then the label
names that). A label the extraction misses counts as wrong.
"""
import re

import pytest

from transforms.latex.model import Limits
from transforms.sources import latex_project

pytestmark = pytest.mark.shared

# hott-online.tex is what the book's build compiles (web preamble: opt-letter, colour links); main.tex
# says of itself that it is included by one of the hott-*.tex files and is not to be processed alone.
ROOT = "hott-online.tex"
_NEWLABEL_RE = re.compile(r"\\newlabel\{([^{}]+)\}\{([^{}]*)\}")
_DECLARED_RE = re.compile(r"^\s*\\(?:defthm|newtheorem)\{(\w+)\}", re.M)
_COMMENT_RE = re.compile(r"(?<!\\)%[^\n]*")
_LABEL_RE = re.compile(r"\\label\{([^{}]+)\}")
_REFERENCE_RE = re.compile(r"\\(?:[cC]ref|ref|autoref)\{([^{}]+)\}")
# A label after these names a list item or an equation, not the statement.
_NOT_THE_STATEMENT_RE = re.compile(r"\\item|\\begin\{(?:equation|align|gather|multline|narrowmultline|eqnarray)")


def theorem_labels(book) -> set[str]:
    """Labels sitting on theorem-like environments, by reading the book's sources."""
    envs = set(_DECLARED_RE.findall(_COMMENT_RE.sub("", (book / "macros.tex").read_text())))
    begin_re = re.compile(r"\\begin\{(" + "|".join(sorted(envs)) + r")\}")
    labels = set()
    for path in book.glob("*.tex"):
        text = _COMMENT_RE.sub("", path.read_text(errors="replace"))
        for m in begin_re.finditer(text):
            end = text.find("\\end{" + m.group(1) + "}", m.end())
            first = _LABEL_RE.search(text, m.end(), end if end >= 0 else len(text))
            if first and not _NOT_THE_STATEMENT_RE.search(text, m.end(), first.start()):
                labels.add(first.group(1))
    return labels


def test_first_edition_numbers(shared_corpora):
    book = shared_corpora / "books" / "hott-book"
    truth = dict(_NEWLABEL_RE.findall((book / "main.labelnumbers.first-edition").read_text()))
    counted = theorem_labels(book) & truth.keys()
    assert len(counted) >= 480                         # "about 500" in the first edition

    sub = latex_project.project_submission(str(book / ROOT))
    assert sub.paper_id == "latex-project:hott-book"
    result = latex_project.extract(sub, Limits())
    assert not any(e.fatal for e in result.events)
    numbers = {s.label: s.number for s in result.statements if s.label}
    exact = {label for label in counted if numbers.get(label) == truth[label]}
    share = len(exact) / len(counted)
    wrong = sorted((label, numbers.get(label), truth[label]) for label in counted - exact)
    print(f"HoTT first edition: {len(exact)}/{len(counted)} = {share:.1%} exact; wrong: {wrong[:10]}")
    assert share >= 0.97, wrong[:20]

    # Every reference to a labelled statement prints the first-edition number, in the text as in the PDF.
    statement_labels = {label for label, target in result.labels.items() if target.kind == "statement"}
    assert {label: result.labels[label].number for label in counted} == {label: truth[label] for label in counted}
    references = [(s, label) for s in result.statements for m in _REFERENCE_RE.finditer(s.statement_latex)
                  for label in m.group(1).split(",") if label.strip() in statement_labels & truth.keys()]
    assert len(references) >= 50
    unprinted = [(s.label, label) for s, label in references if truth[label.strip()] not in s.statement_text]
    assert unprinted == []
