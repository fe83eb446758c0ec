"""ProofWiki export: streamed pages to theorem and definition statements."""
import bz2
import io
import pathlib

from transforms.latex.model import Limits
from transforms.sources import proofwiki

FIXTURE = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "proofwiki" / "export.xml"


def results():
    return [(sub, proofwiki.extract(sub, Limits())) for sub in proofwiki.read([str(FIXTURE)])]


def test_only_theorem_and_definition_pages_become_submissions():
    ids = [sub.paper_id for sub, _ in results()]
    # category page, redirect and main page are not statements
    assert ids == ["proofwiki:Sum of Sequence of Odd Numbers", "proofwiki:Zorn's Lemma",
                   "proofwiki:Definition:Group"]


def test_submission_carries_url_year_and_page_text():
    sub, _ = results()[1]
    assert sub.source == "proofwiki"
    assert sub.url == "https://proofwiki.org/wiki/Zorn's_Lemma"
    assert sub.year == 2019
    assert sub.files[proofwiki.PAGE_FILE].decode().startswith("== Theorem ==")
    first, _ = results()[0]
    assert first.metadata["categories"] == ["Odd_Integers"] and first.metadata["title"] == first.source_id


def test_theorem_statement_with_math_kept_and_links_resolved():
    _, result = results()[0]
    [statement] = result.statements
    assert statement.kind == "theorem"
    assert statement.number is None and statement.title == "Sum of Sequence of Odd Numbers"
    assert statement.statement_text.startswith("The sum of the first $n$ odd numbers is $n^2$:")
    assert r"\left(2 j - 1\right) = n^2$" in statement.statement_latex       # site macro \paren expanded
    assert r"\paren {2 j - 1}" in statement.statement_latex_raw               # raw keeps what was written
    assert "[[" not in statement.statement_latex and "Definition:" not in statement.statement_latex
    assert statement.line == 2
    assert statement.url == "https://proofwiki.org/wiki/Sum_of_Sequence_of_Odd_Numbers"


def test_proof_equation_templates_become_display_math():
    _, result = results()[0]
    proof = result.statements[0].proof_latex
    assert r"$$ \sum_{j \mathop = 1}^n \paren {2 j - 1} = 2 \sum_{j \mathop = 1}^n j - n $$" in proof
    assert "$$ = n^2 $$" in proof
    assert "qed" not in proof and "{{" not in proof


def test_math_tags_refs_and_bold_and_first_of_several_proofs():
    _, result = results()[1]
    [statement] = result.statements
    assert statement.kind == "lemma"                      # from the page title "Zorn's Lemma"
    assert statement.statement_text == (
        r"Let $\left(S, \preceq\right)$ be a non-empty ordered set in which every chain has an upper "
        r"bound. Then $S$ has a maximal element.")
    assert statement.proof_latex == "Use the Axiom of Choice."


def test_definition_page():
    _, result = results()[2]
    [statement] = result.statements
    assert statement.kind == "definition" and statement.title == "Group"
    assert statement.statement_text == (r"A group is a semigroup $\left(G, \circ\right)$ with an identity "
                                        r"in which every element has an inverse.")


def test_bz2_export_and_broken_export_keep_what_was_read(tmp_path):
    data = FIXTURE.read_bytes()
    compressed = tmp_path / "dump.xml.bz2"
    compressed.write_bytes(bz2.compress(data))
    assert len(list(proofwiki.read([str(compressed)]))) == 3
    cut = data[: data.index(b"<title>Definition:Group")]
    subs = list(proofwiki.read_export(io.BytesIO(cut), "cut.xml", Limits()))
    assert [s.paper_id for s in subs[:2]] == ["proofwiki:Sum of Sequence of Odd Numbers", "proofwiki:Zorn's Lemma"]
    assert subs[-1].events and subs[-1].events[0].fatal and subs[-1].events[0].stage == "read"
    missing = list(proofwiki.read([str(tmp_path / "absent.xml")]))
    assert missing[0].events[0].error_class == "FileNotFoundError"


def test_page_over_the_size_limit_is_recorded_not_read():
    subs = list(proofwiki.read([str(FIXTURE)], Limits(max_file_bytes=100)))
    assert all(not s.files and s.events[0].error_class == "file-too-large" for s in subs)
    assert proofwiki.extract(subs[0], Limits()).statements == []


def test_many_pages_stream_through_one_at_a_time():
    page = FIXTURE.read_text().split("<page>")[1].split("</page>")[0]
    body = "".join(f"<page>{page.replace('Sum of Sequence', f'Sum {i} of Sequence')}</page>" for i in range(3000))
    xml = f'<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.11/">{body}</mediawiki>'
    count = sum(1 for _ in proofwiki.read_export(io.BytesIO(xml.encode()), "big.xml", Limits()))
    assert count == 3000
