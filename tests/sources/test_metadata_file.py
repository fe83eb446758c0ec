"""Metadata files: lines read with a length cap, in byte ranges that cover each line once, and a
file that is not JSON lines refused before the run with one line and a non-zero exit."""
import gzip
import json

import duckdb
import pytest

from runners.cli import main
from transforms.latex.model import Limits
from schemas import FAILURES, PAPERS
from transforms.sources import arxiv
from transforms.sources.base import check_metadata_file, metadata_lines, metadata_ranges

SAMPLE_BUNDLE = "samples/arxiv/arXiv_src_2103_001.tar"


def record(arxiv_id: str, title: str = "T") -> str:
    return json.dumps({"id": arxiv_id, "title": title, "categories": "math.CO",
                       "versions": [{"version": "v1", "created": "Mon, 1 Mar 2021 10:00:00 GMT"}]})


def test_ranges_cover_every_line_exactly_once(tmp_path):
    lines = [f"line {i} " + "x" * (i * 7 % 23) for i in range(200)]
    path = tmp_path / "m.jsonl"
    path.write_text("\n".join(lines) + "\n")
    for range_bytes in (1, 5, 64, 1 << 20):
        got = [line for span in metadata_ranges(str(path), range_bytes) for _, line in metadata_lines(span)]
        assert [g.decode().rstrip("\n") for g in got] == lines, range_bytes


def test_lines_over_the_cap_are_skipped_without_being_held(tmp_path):
    path = tmp_path / "m.jsonl"
    path.write_bytes(b"short\n" + b"y" * 5000 + b"\n" + b"z" * 5000 + b"\nlast")
    got = [line for span in metadata_ranges(str(path), 3000) for _, line in metadata_lines(span, cap=100)]
    assert got == [b"short\n", None, None, b"last"]


@pytest.mark.parametrize("content, reason", [
    (b'[{"id": "2103.00001"}]\n', "JSON array"),
    (b'\n[\n{"id": "2103.00001"},\n{"id": "2103.00002"}\n]\n', "JSON array"),
    (json.dumps([{"id": "2103.00001", "title": "T"}], indent=2).encode(), "JSON array"),
    (gzip.compress(b'{"id": "2103.00001"}\n', mtime=0), "gzip"),
    (bytes(range(256)) * 4, "not JSON lines"),
    (b"\n\n", "no metadata record"),
])
def test_a_file_that_is_not_json_lines_is_refused(tmp_path, content, reason):
    path = tmp_path / "meta"
    path.write_bytes(content)
    with pytest.raises(ValueError, match=reason):
        check_metadata_file(arxiv.Arxiv(), str(path))


def test_json_lines_pass_the_check_even_after_a_damaged_first_line(tmp_path):
    path = tmp_path / "meta.jsonl"
    path.write_text("\nnot json\n" + record("2103.00001") + "\n")
    check_metadata_file(arxiv.Arxiv(), str(path))


def test_build_corpus_refuses_a_json_array_with_one_line(tmp_path, capsys):
    path = tmp_path / "meta.json"
    path.write_text(json.dumps([json.loads(record("2103.00001"))], indent=2))
    code = main(["build-corpus", "--input", SAMPLE_BUNDLE, "--metadata", str(path), "--output",
                 str(tmp_path / "out"), "--embed-model", "none", "--no-progress"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and "not JSON lines" in err and str(path) in err
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_an_overlong_line_is_a_failure_row_and_the_other_records_still_join(tmp_path):
    refs = arxiv.Arxiv().index(SAMPLE_BUNDLE, Limits()).refs
    ids = sorted(r.source_id for r in refs)
    path = tmp_path / "meta.jsonl"
    huge = json.dumps({"id": ids[1], "abstract": "w " * (1 << 20)})     # 2 MiB: over the 1 MiB cap
    path.write_text("\n".join([record(ids[0], "Kept title"), huge, "not json"]) + "\n")
    out = tmp_path / "out"
    assert main(["build-corpus", "--input", SAMPLE_BUNDLE, "--metadata", str(path), "--output", str(out),
                 "--embed-model", "none", "--no-progress"]) == 0
    con = duckdb.connect()
    con.execute(PAPERS.view_sql(str(out)))
    con.execute(FAILURES.view_sql(str(out)))
    assert con.execute("SELECT title FROM papers WHERE source_id = ?", [ids[0]]).fetchall() == [("Kept title",)]
    assert con.execute("SELECT has_metadata FROM papers WHERE source_id = ?", [ids[1]]).fetchall() == [(False,)]
    bad = con.execute("SELECT location, message FROM failures WHERE error_class = 'bad-metadata-line' "
                      "ORDER BY location").fetchall()
    assert len(bad) == 2 and bad[0][0].startswith("meta.jsonl@") and "cap" in bad[0][1] + bad[1][1]


def test_only_records_of_the_runs_papers_leave_the_reader_bad_lines_still_fail(tmp_path):
    from apache_beam import pvalue

    from transforms.corpus import ReadConfig, ReadMetadata

    path = tmp_path / "m.jsonl"
    path.write_text("\n".join([record("2103.00001"), record("1501.00001"), "{not json", record("2103.00002")]) + "\n")
    reader = ReadMetadata(ReadConfig())
    reader.setup()
    out = [item for span in metadata_ranges(str(path)) for item in reader.process(span, {"2103.00002": True})]
    assert [key for key, _ in (o for o in out if not isinstance(o, pvalue.TaggedOutput))] == ["2103.00002"]
    assert [o.value["error_class"] for o in out if isinstance(o, pvalue.TaggedOutput)] == ["bad-metadata-line"]
