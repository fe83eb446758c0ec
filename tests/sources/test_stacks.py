"""Stacks Project source on a tiny checkout: chapters, shared subsection counter, tags and links."""
import pathlib
import shutil

import pytest

from transforms.latex.model import Limits
from transforms.sources import stacks

CHECKOUT = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "stacks"


def test_parse_tags_skips_comments_and_reports_bad_lines():
    tags, bad = stacks.parse_tags("# comment\n0001,topology-section-phantom\n\nnot a tag line\n01AB , algebra-lemma-x\n")
    assert tags == {"topology-section-phantom": "0001", "algebra-lemma-x": "01AB"}
    assert bad == ["not a tag line"]


def test_chapter_order_from_chapters_tex():
    order = stacks.chapter_order((CHECKOUT / "chapters.tex").read_text())
    assert order == {"introduction": 1, "topology": 2, "more-algebra": 3}


def test_one_submission_per_chapter_in_book_order():
    subs = list(stacks.read([str(CHECKOUT)]))
    # book.tex includes the chapters: it is the whole book, not a chapter
    assert [s.paper_id for s in subs] == ["stacks:topology", "stacks:more-algebra"]
    topology = subs[0]
    assert sorted(topology.files) == ["preamble.tex", "topology.tex"]
    assert topology.metadata["title"] == "Topology"
    assert topology.metadata["chapter_number"] == 2
    assert topology.url == "https://stacks.math.columbia.edu/tag/0001"
    # "more-algebra-..." labels do not leak into a chapter whose name is a prefix
    assert "lemma-flat-colimit" not in topology.metadata["tags"]


def extracted():
    return {s.source_id: stacks.extract(s, Limits()) for s in stacks.read([str(CHECKOUT)])}


def test_statements_share_the_subsection_counter_and_carry_tags():
    results = extracted()
    topology = [(s.kind, s.number, s.label, s.tag) for s in results["topology"].statements]
    assert topology == [
        ("lemma", "2.2.1", "lemma-closure-union", "0003"),
        ("definition", "2.2.2", "definition-quasi-compact", "0004"),
        ("lemma", "2.2.4", "lemma-irreducible-closure", "0005"),        # after subsection 2.3
        ("remark", "2.2.5", "remark-no-tag", None),
        ("theorem", "2.3.1", "theorem-hochster", "0006"),
    ]
    algebra = [(s.kind, s.number, s.tag, s.url) for s in results["more-algebra"].statements]
    assert algebra == [("lemma", "3.1.1", "005B", "https://stacks.math.columbia.edu/tag/005B"),
                       ("example", "3.1.2", "005C", "https://stacks.math.columbia.edu/tag/005C")]


def test_slogan_and_reference_are_not_in_the_statement():
    statements = {s.label: s for s in extracted()["topology"].statements}
    lemma = statements["lemma-irreducible-closure"]
    assert lemma.slogan == "Closures of irreducibles are irreducible."
    assert "slogan" not in lemma.statement_latex and "Closures of" not in lemma.statement_text
    assert statements["theorem-hochster"].title == "Hochster"
    assert "Hochster, Theorem 6" not in statements["theorem-hochster"].statement_text


def test_preamble_macros_are_expanded():
    lemma = extracted()["more-algebra"].statements[0]
    assert r"\colim" in lemma.statement_latex_raw
    assert r"\mathop{\mathrm{colim}}\nolimits M_i" in lemma.statement_latex


def test_without_chapters_list_numbers_are_those_of_the_chapter_alone(tmp_path):
    checkout = tmp_path / "stacks"
    shutil.copytree(CHECKOUT, checkout)
    (checkout / "chapters.tex").unlink()
    (checkout / "tags" / "tags").unlink()
    subs = list(stacks.read([str(checkout)]))
    assert [s.paper_id for s in subs] == ["stacks:more-algebra", "stacks:topology"]
    assert any(e.error_class == "missing-tags" for e in subs[0].events)
    numbers = [s.number for s in stacks.extract(subs[1], Limits()).statements]
    assert numbers == ["2.1", "2.2", "2.4", "2.5", "3.1"]
    assert all(s.tag is None for s in stacks.extract(subs[1], Limits()).statements)


@pytest.mark.parametrize("make", ["missing", "no-preamble"])
def test_bad_checkout_is_a_recorded_failure(tmp_path, make):
    path = tmp_path / "nothing"
    if make == "no-preamble":
        path.mkdir()
    [sub] = list(stacks.read([str(path)]))
    assert sub.events[0].fatal and sub.events[0].error_class == "FileNotFoundError"
    assert stacks.extract(sub, Limits()).statements == []
