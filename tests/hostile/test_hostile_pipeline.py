"""The hostile corpus through the real `thmforge build-corpus` (FnApiRunner), checked on disk.

One bundle holds every case of `hostile_cases`, plus a symlink member in the bundle itself; a
second bundle is cut off in the middle of its second member. The run must complete, account for
every submission (papers in = ok + failed + skipped, per bundle) and leave each case's reason in
the Parquet tables, which are read back with DuckDB.
"""
import json
import os
import tarfile

import duckdb
import pytest

import hostile_cases as hc
from runners.cli import main
from schemas import FAILURES, PAPERS, THEOREMS

pytestmark = pytest.mark.slow
TRUNCATED_BUNDLE = "arXiv_src_2202_001.tar"


def write_inputs(root) -> str:
    inputs = root / "inputs"
    inputs.mkdir()
    entries = [hc.Entry(c.member, c.data) for c in hc.cases()]
    entries.append(hc.Entry(f"{hc.YYMM}/2201.99999.gz", type=tarfile.SYMTYPE, linkname="/etc/passwd"))
    (inputs / hc.BUNDLE).write_bytes(hc.tar_bytes(entries))
    second = hc.tar_bytes([hc.Entry("2202/2202.00001.gz", hc.gz(hc.GOOD)),
                           hc.Entry("2202/2202.00002.gz", hc.gz(hc.PADDED))])
    cut = 512 + 512 * -(-len(hc.gz(hc.GOOD)) // 512) + 512 + 200      # inside member 2's data
    (inputs / TRUNCATED_BUNDLE).write_bytes(second[:cut])
    return str(inputs)


def connect(out: str) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    for table in (PAPERS, THEOREMS, FAILURES):
        con.execute(table.view_sql(out))
    return con


@pytest.fixture(scope="module")
def hostile_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("hostile")
    out = str(root / "out")
    code = main(["build-corpus", "--input", write_inputs(root), "--output", out, "--embed-model", "none",
                 "--no-progress", "--max-submission-bytes", str(hc.BOMB_LIMIT)])
    return code, out


def test_run_completes_and_accounts_for_every_submission(hostile_run):
    code, out = hostile_run
    assert code == 0
    manifest = json.load(open(os.path.join(out, "manifest.json")))
    submissions = len(hc.cases()) + 2
    counts = manifest["counts"]
    assert counts["papers"] == submissions == sum(counts["by_status"].values())
    for group, record in manifest["accounting"].items():
        assert record["submissions"] == record["ok"] + record["failed"] + record["skipped"], group
    assert {g: r["submissions"] for g, r in manifest["accounting"].items()} == {
        "arXiv_src_2201_001": len(hc.cases()), "arXiv_src_2202_001": 2}
    con = connect(out)
    assert con.execute("SELECT count(*), count(DISTINCT paper_id) FROM papers").fetchone() == (submissions,) * 2


@pytest.mark.parametrize("case", hc.params())
def test_each_case_has_its_status_reason_and_failure_rows_on_disk(hostile_run, case):
    _, out = hostile_run
    con = connect(out)
    status, reason, n_statements, encoding = con.execute(
        "SELECT status, status_reason, n_statements, encoding FROM papers WHERE paper_id = ?",
        [case.paper_id]).fetchone()
    classes = {r[0] for r in con.execute("SELECT error_class FROM failures WHERE paper_id = ?",
                                         [case.paper_id]).fetchall()}
    assert status == case.status and set(case.failures) <= classes
    if case.reason is not None:
        assert reason == case.reason
    theorems = con.execute("SELECT count(*) FROM theorems WHERE paper_id = ?", [case.paper_id]).fetchone()[0]
    assert theorems == n_statements
    if case.statements is not None:
        assert theorems == case.statements
    if case.encoding is not None:
        assert encoding == case.encoding


def test_every_failure_row_says_stage_class_message_and_where(hostile_run):
    _, out = hostile_run
    con = connect(out)
    incomplete = con.execute("SELECT * FROM failures WHERE stage IS NULL OR error_class IS NULL OR message IS NULL "
                             "OR location IS NULL OR bundle IS NULL").fetchall()
    assert incomplete == []
    reasons = dict(con.execute("SELECT status_reason, count(*) FROM papers WHERE status = 'failed' "
                               "GROUP BY ALL").fetchall())
    fatal = dict(con.execute("SELECT error_class, count(*) FROM failures WHERE fatal GROUP BY ALL").fetchall())
    for reason, n in reasons.items():
        assert fatal.get(reason, 0) >= n


def test_damage_to_the_bundles_themselves_is_recorded(hostile_run):
    _, out = hostile_run
    con = connect(out)
    rows = con.execute("SELECT error_class, location FROM failures WHERE paper_id IS NULL ORDER BY ALL").fetchall()
    assert ("unsafe-member", f"{hc.BUNDLE}!{hc.YYMM}/2201.99999.gz") in rows   # by the input's name
    assert any(cls == "truncated-bundle" and TRUNCATED_BUNDLE in loc for cls, loc in rows)
    first, second = con.execute("SELECT status FROM papers WHERE paper_id IN ('arxiv:2202.00001', "
                                "'arxiv:2202.00002') ORDER BY paper_id").fetchall()
    assert first == ("ok",)
    cut = {r[0] for r in con.execute("SELECT error_class FROM failures WHERE paper_id = 'arxiv:2202.00002'").fetchall()}
    assert "truncated-bundle" in cut


def test_paper_over_the_time_budget_fails_with_timeout_and_the_run_goes_on(tmp_path):
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    members = {"2203/2203.00001.gz": hc.slow_paper(), "2203/2203.00002.gz": hc.gz(hc.GOOD),
               "2203/2203.00003.gz": hc.gz(hc.paper_tex(theorem="Another small result.").encode())}
    (inputs / "arXiv_src_2203_001.tar").write_bytes(hc.bundle_bytes(members))
    out = str(tmp_path / "out")
    code = main(["build-corpus", "--input", str(inputs), "--output", out, "--embed-model", "none",
                 "--no-progress", "--paper-timeout", "0.1"])
    assert code == 0
    con = connect(out)
    assert con.execute("SELECT paper_id, status, status_reason, n_statements FROM papers ORDER BY paper_id").fetchall() == [
        ("arxiv:2203.00001", "failed", "timeout", 0), ("arxiv:2203.00002", "ok", None, 1),
        ("arxiv:2203.00003", "ok", None, 1)]
    assert con.execute("SELECT paper_id, fatal FROM failures WHERE error_class = 'timeout'").fetchall() == [
        ("arxiv:2203.00001", True)]


GOOD_RECORD = {"id": "2201.00001", "title": "A  title", "authors": "A. Author", "categories": "math.GR",
               "versions": [{"version": "v1", "created": "Mon, 3 Jan 2022 10:00:00 GMT"}]}
BAD_LINES = [b"not json", b"[1, 2]", b'{"id": 5}', b'{"id": "2201.0000']


def metadata_run(tmp_path, lines: list[bytes]):
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    (inputs / hc.BUNDLE).write_bytes(hc.bundle_bytes({"2201/2201.00001.gz": hc.gz(hc.GOOD),
                                                      "2201/2201.00002.gz": hc.gz(hc.GOOD)}))
    (tmp_path / "meta.json").write_bytes(b"\n".join(lines) + b"\n")
    out = str(tmp_path / "out")
    code = main(["build-corpus", "--input", str(inputs), "--metadata", str(tmp_path / "meta.json"), "--output", out,
                 "--embed-model", "none", "--no-progress"])
    return code, out


def test_bad_metadata_lines_are_recorded_with_their_place_and_the_good_ones_joined(tmp_path):
    code, out = metadata_run(tmp_path, [BAD_LINES[0], json.dumps(GOOD_RECORD).encode(), b"", *BAD_LINES[1:]])
    assert code == 0
    con = connect(out)
    assert con.execute("SELECT paper_id, title, year, has_metadata FROM papers ORDER BY paper_id").fetchall() == [
        ("arxiv:2201.00001", "A title", 2022, True), ("arxiv:2201.00002", None, 2022, False)]
    rows = con.execute("SELECT error_class, location FROM failures WHERE stage = 'metadata'").fetchall()
    assert [r[0] for r in rows] == ["bad-metadata-line"] * 4
    assert all(location and "meta.json" in location for _, location in rows), rows


def test_metadata_line_that_is_not_utf8_is_recorded_not_fatal(tmp_path):
    latin1 = '{"id": "2201.00002", "title": "Caf\u00e9"}'.encode("latin-1")
    code, out = metadata_run(tmp_path, [json.dumps(GOOD_RECORD).encode(), latin1])
    assert code == 0
    con = connect(out)
    assert con.execute("SELECT count(*) FROM papers").fetchone() == (2,)
    assert con.execute("SELECT count(*) FROM failures WHERE stage = 'metadata'").fetchone() == (1,)
