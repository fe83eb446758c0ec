"""Row building and per-paper isolation of `transforms.corpus` (no Beam)."""
import hashlib

from schemas import FAILURES, PAPERS, THEOREMS
from transforms.corpus import content_hash, normalize_latex, process_submission, statement_url
from transforms.latex.model import Event, ExtractionResult, Limits, Statement, Submission
from transforms.sources.arxiv import Arxiv


def submission(**changes) -> Submission:
    values = dict(paper_id="arxiv:2101.00001", source="arxiv", source_id="2101.00001",
                  files={"main.tex": b"\\begin{document}\\end{document}"}, bundle="/in/arXiv_src_2101_001.tar",
                  member="2101/2101.00001.gz", year=2021, url="https://arxiv.org/abs/2101.00001")
    values.update(changes)
    return Submission(**values)


def statement(ordinal=0, latex="Every  bounded\nsequence.", **changes) -> Statement:
    values = dict(ordinal=ordinal, kind="theorem", env_name="thm", display_name="Theorem", number="1.2",
                  title=None, label="thm:b", section_path=["Intro"], file="main.tex", line=7,
                  statement_latex_raw=latex, statement_latex=latex, statement_text=latex)
    values.update(changes)
    return Statement(**values)


def test_theorem_rows_have_stable_ids_hashes_and_links():
    found = ExtractionResult([statement(), statement(1, "x", label=None), statement(2, "y", label=None, number=None)],
                             main_file="main.tex", encoding="utf-8")
    outcome = process_submission(submission(), lambda sub, limits: found, Limits())
    first, second, third = outcome.theorems
    digest = hashlib.sha256(b"Every bounded sequence.").hexdigest()
    assert first["content_hash"] == digest == content_hash("Every bounded sequence.")
    assert first["theorem_id"] == f"arxiv:2101.00001#0-{digest[:12]}"
    assert first["url"] == "https://arxiv.org/abs/2101.00001#thm:b"
    assert second["url"] == "https://arxiv.org/abs/2101.00001#Theorem%201.2"
    assert third["url"] == "https://arxiv.org/abs/2101.00001"
    assert set(first) <= set(THEOREMS.columns) and first["bundle"] == "/in/arXiv_src_2101_001.tar"
    paper = outcome.paper
    assert set(paper) == set(PAPERS.columns)
    assert (paper["status"], paper["n_statements"], paper["main_file"], paper["has_metadata"]) == ("ok", 3, "main.tex", False)


def test_a_crashing_extractor_fails_only_its_paper():
    def explode(sub, limits):
        raise IndexError("string index out of range")

    outcome = process_submission(submission(), explode, Limits())
    assert (outcome.paper["status"], outcome.paper["status_reason"]) == ("failed", "IndexError")
    (failure,) = outcome.failures
    assert set(failure) <= set(FAILURES.columns)
    assert (failure["stage"], failure["error_class"], failure["fatal"], failure["location"]) == \
        ("extract", "IndexError", True, "2101/2101.00001.gz")


def test_skips_and_fatal_reader_events_do_not_reach_the_extractor():
    never = lambda sub, limits: (_ for _ in ()).throw(AssertionError("extractor called"))  # noqa: E731
    skipped = process_submission(submission(skip_reason="pdf-only", files={}), never, Limits())
    assert (skipped.paper["status"], skipped.paper["status_reason"], skipped.failures) == ("skipped", "pdf-only", [])
    bomb = submission(files={}, events=[Event("read", "submission-too-large", "big", "b!m", fatal=True)])
    failed = process_submission(bomb, never, Limits())
    assert (failed.paper["status"], failed.paper["status_reason"]) == ("failed", "submission-too-large")
    assert [f["location"] for f in failed.failures] == ["b!m"]


def test_fatal_extraction_event_fails_the_paper_and_keeps_no_statements():
    result = ExtractionResult([statement()], events=[Event("extract", "timeout", "over budget", fatal=True)])
    outcome = process_submission(submission(), lambda sub, limits: result, Limits())
    assert (outcome.paper["status"], outcome.paper["status_reason"], outcome.paper["n_statements"]) == \
        ("failed", "timeout", 0)
    assert outcome.theorems == []


def test_reader_events_copied_by_a_source_are_recorded_once():
    event = Event("read", "unsafe-member", "symlink ignored", "b!m/x")
    sub = submission(events=[event])
    outcome = process_submission(sub, lambda s, limits: ExtractionResult([], events=[event]), Limits())
    assert len(outcome.failures) == 1


def test_metadata_fills_the_paper_row():
    record = {"id": "2101.00001", "title": "T", "authors_parsed": [["Doe", "Jane", ""]], "categories": "math.CO cs.DM",
              "versions": [{"version": "v1", "created": "Mon, 4 Jan 2021 10:00:00 GMT"}], "update_date": "2021-01-04"}
    sub = Arxiv().attach_metadata(submission(), record)
    outcome = process_submission(sub, lambda s, l: ExtractionResult([]), Limits())
    paper = outcome.paper
    assert (paper["title"], paper["authors"], paper["primary_category"], paper["created"], paper["has_metadata"]) == \
        ("T", ["Jane Doe"], "math.CO", "2021-01-04", True)


def test_a_link_made_by_the_source_wins_over_the_papers_page():
    sub = submission(source="stacks", url="https://stacks.math.columbia.edu/")
    tagged = statement(tag="01AB", url="https://stacks.math.columbia.edu/tag/01AB")
    assert statement_url(sub, tagged) == "https://stacks.math.columbia.edu/tag/01AB"
    assert statement_url(sub, statement()) == "https://stacks.math.columbia.edu/#thm:b"
    assert normalize_latex("  a\u0301  b ") == "\u00e1 b"
