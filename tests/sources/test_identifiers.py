"""Identifiers: checked once where a source reads them, unique within an input, stored by name.

Every bundle is built here; the pipeline cases run the real `thmforge build-corpus` (FnApiRunner)
and read the tables back with DuckDB.
"""
import glob
import hashlib
import json
import os

import duckdb
import pytest

from tests.hostile import hostile_cases as hc
from runners.cli import main
from schemas import FAILURES, PAPERS, THEOREMS
from transforms.latex.model import Limits
from transforms.sources import arxiv
from transforms.sources.base import InvalidIdentifier, checked_id, unique_refs

ARXIV = arxiv.Arxiv()
BAD_NAMES = {
    "2201/.gz": "empty",
    "2201/2201.0\n0001.gz": "control character: U+000A",
    "2201/2201.00001\n.gz": "control character: U+000A",
    "2201/2201.00\u202e001.gz": "RIGHT-TO-LEFT OVERRIDE",
    "2201/\u0662\u0662\u0660\u0661.00001.gz": "no arXiv id",      # Arabic-Indic digits
    "2201/\uff12\uff12\uff10\uff11.00001.gz": "no arXiv id",      # fullwidth digits
    "2201/2201.00009\u200b.gz": "ZERO WIDTH SPACE",
}


def paper(theorem: str) -> bytes:
    return hc.gz(hc.paper_tex(theorem=theorem).encode())


def hostile_ids_bundle(path) -> str:
    """Bad names, the same member twice (the later copy differs) and `ID` next to `IDv2`."""
    entries = [hc.Entry(name, paper("Bad.")) for name in BAD_NAMES]
    entries += [hc.Entry("2201/2201.00001.gz", paper("First copy.")),
                hc.Entry("2201/2201.00001.gz", paper("Second copy.")),
                hc.Entry("2201/2201.00002v2.gz", paper("Version two.")),
                hc.Entry("2201/2201.00002.gz", paper("Version one.")),
                hc.Entry("2201/2201.00003.gz", paper("Alone."))]
    path.write_bytes(hc.tar_bytes(entries))
    return str(path)


@pytest.mark.parametrize("text, reason", [("a\nb", "control character: U+000A"), ("a\n", "U+000A"),
                                          ("a\u202eb", "U+202E RIGHT-TO-LEFT OVERRIDE"),
                                          ("  ", "empty"), ("a\ud800", "lone surrogate: U+D800")])
def test_checked_id_refuses_what_would_reach_urls_and_terminals_unseen(text, reason):
    with pytest.raises(InvalidIdentifier) as refused:
        checked_id(text)
    assert reason in str(refused.value) and str(refused.value).isascii()
    assert checked_id(" Cauchy\u2013Schwarz ") == "Cauchy\u2013Schwarz"


def test_bad_member_names_are_recorded_failures_of_the_bundle(tmp_path):
    found = ARXIV.index(hostile_ids_bundle(tmp_path / hc.BUNDLE), Limits())
    bad = [e for e in found.events if e.error_class == "bad-member-name"]
    assert len(bad) == len(BAD_NAMES)
    for event, reason in zip(bad, BAD_NAMES.values()):
        assert reason in event.message and not event.fatal
        assert event.location.startswith(hc.BUNDLE + "!") and event.location.isprintable()
        assert event.location.isascii()
    assert all(r.source_id.isascii() and r.source_id.isprintable() for r in found.refs)


def test_one_ref_per_paper_newest_version_then_later_copy_wins(tmp_path):
    found = unique_refs(ARXIV.index(hostile_ids_bundle(tmp_path / hc.BUNDLE), Limits()))
    assert [(r.source_id, r.version) for r in found.refs] == [("2201.00001", None), ("2201.00002", "v2"),
                                                              ("2201.00003", None)]
    texts = {r.source_id: next(iter(ARXIV.fetch(r, Limits()).files.values())) for r in found.refs}
    assert b"Second copy." in texts["2201.00001"] and b"Version two." in texts["2201.00002"]
    assert [(d.paper_id, k.location) for d, k in found.duplicates] == [
        ("arxiv:2201.00001", f"{hc.BUNDLE}!2201/2201.00001.gz"),
        ("arxiv:2201.00002", f"{hc.BUNDLE}!2201/2201.00002v2.gz")]


def _build(inputs, out, *extra) -> None:
    assert main(["build-corpus", "--input", *inputs, "--output", str(out), "--embed-model", "none",
                 "--no-progress", *extra]) == 0


def _rows(out, sql: str) -> list[tuple]:
    con = duckdb.connect()
    for table in (PAPERS, THEOREMS, FAILURES):
        con.execute(table.view_sql(str(out)))
    return con.execute(sql).fetchall()


def _parquet_hashes(out) -> dict[str, str]:
    return {os.path.relpath(p, out): hashlib.sha256(open(p, "rb").read()).hexdigest()
            for p in sorted(glob.glob(os.path.join(out, "*", "**", "*.parquet"), recursive=True))}


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The bundle run once by absolute path and once by a relative path from its folder."""
    root = tmp_path_factory.mktemp("ids")
    (root / "in").mkdir()
    bundle = hostile_ids_bundle(root / "in" / hc.BUNDLE)
    _build([bundle], root / "absolute")
    cwd = os.getcwd()
    os.chdir(root / "in")
    try:
        _build([hc.BUNDLE], root / "relative")
    finally:
        os.chdir(cwd)
    return root


@pytest.mark.slow
def test_one_papers_row_per_id_and_duplicates_on_record(built):
    out = built / "absolute"
    assert _rows(out, "SELECT paper_id, status FROM papers ORDER BY 1") == [
        ("arxiv:2201.00001", "ok"), ("arxiv:2201.00002", "ok"), ("arxiv:2201.00003", "ok")]
    assert _rows(out, "SELECT paper_id, statement_text FROM theorems ORDER BY 1") == [
        ("arxiv:2201.00001", "Second copy."), ("arxiv:2201.00002", "Version two."), ("arxiv:2201.00003", "Alone.")]
    assert _rows(out, "SELECT count(*) - count(DISTINCT theorem_id) FROM theorems") == [(0,)]
    assert _rows(out, "SELECT paper_id, location FROM failures WHERE error_class = 'duplicate' ORDER BY 1") == [
        ("arxiv:2201.00001", f"{hc.BUNDLE}!2201/2201.00001.gz"),
        ("arxiv:2201.00002", f"{hc.BUNDLE}!2201/2201.00002.gz")]
    assert _rows(out, "SELECT count(*) FROM failures WHERE error_class = 'bad-member-name' AND paper_id IS NULL") \
        == [(len(BAD_NAMES),)]
    ids = _rows(out, "SELECT paper_id, url FROM papers UNION ALL SELECT theorem_id, url FROM theorems")
    assert all(value.isascii() and value.isprintable() for row in ids for value in row)


@pytest.mark.slow
def test_relative_and_absolute_spellings_give_the_same_bytes(built):
    absolute, relative = built / "absolute", built / "relative"
    assert _parquet_hashes(absolute) == _parquet_hashes(relative) and _parquet_hashes(absolute)
    assert _rows(absolute, "SELECT DISTINCT bundle FROM papers") == [(hc.BUNDLE,)]
    manifests = [json.load(open(out / "manifest.json")) for out in (absolute, relative)]
    assert manifests[0]["inputs"] == manifests[1]["inputs"] == [str(built / "in" / hc.BUNDLE)]
    assert manifests[0]["options"]["input"] == manifests[1]["options"]["input"]
