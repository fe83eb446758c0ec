"""Partitioned Parquet files, staging, commit and accounting: checked on disk and with DuckDB."""
import json
import os

import apache_beam as beam
import duckdb
import pyarrow.parquet as pq
import pytest
from apache_beam.options.pipeline_options import PipelineOptions

from schemas import FAILURES, PAPERS, THEOREMS
from tests.write import commit_helpers
from transforms.write import commit as staging
from transforms.write import manifest as manifests
from transforms.write.files import HIVE_NULL, list_files
from transforms.write import parquet
from transforms.write.parquet import WriteTable, parquet_bytes, partition_dir, part_file_name, relative_file_path

LOCAL = PipelineOptions(["--runner=FnApiRunner", "--direct_running_mode=in_memory"])


def theorem(paper, ordinal, year=2021, bundle="/in/arXiv_src_2101_001.tar", kind="lemma"):
    return {"theorem_id": f"{paper}#{ordinal}", "paper_id": paper, "source": "arxiv", "year": year,
            "ordinal": ordinal, "kind": kind, "statement_latex": f"s{ordinal}", "bundle": bundle}


def paper(pid, status="ok", n=0, bundle="/in/arXiv_src_2101_001.tar"):
    return {"paper_id": pid, "source": "arxiv", "status": status, "n_statements": n, "bundle": bundle,
            "has_metadata": True}


def test_partition_directories_and_file_names():
    assert partition_dir(THEOREMS, {"source": "arxiv", "year": 2021}) == "source=arxiv/year=2021"
    assert partition_dir(THEOREMS, {"source": "a b/c", "year": None}) == f"source=a%20b%2Fc/year={HIVE_NULL}"
    assert partition_dir(PAPERS, {}) == ""
    assert relative_file_path(THEOREMS, theorem("p", 0), 1) == \
        "theorems/source=arxiv/year=2021/part-arXiv_src_2101_001-00000.parquet"
    assert relative_file_path(PAPERS, {"paper_id": "p"}, 1) == "papers/part-unattributed-00000.parquet"
    assert staging.group_of_file("x/" + part_file_name("arXiv_src_2101_001", 3)) == "arXiv_src_2101_001"


def test_files_are_sorted_and_byte_identical_for_any_input_order():
    rows = [theorem("arxiv:b", 1), theorem("arxiv:a", 2), theorem("arxiv:a", 0)]
    first = parquet_bytes(THEOREMS, rows)
    assert first == parquet_bytes(THEOREMS, list(reversed(rows)))
    table = pq.read_table(__import__("io").BytesIO(first))
    assert table.column("theorem_id").to_pylist() == ["arxiv:a#0", "arxiv:a#2", "arxiv:b#1"]
    assert "year" not in table.column_names   # partition columns live in the directory names


def _write(tmp_path, rows_by_table):
    staged = staging.staging_dir(str(tmp_path))
    with beam.Pipeline(options=LOCAL) as p:
        for table, rows in rows_by_table.items():
            _ = (p | f"Create{table.name}" >> beam.Create(rows)
                 | f"Write{table.name}" >> WriteTable(table, staged))


def _commit(tmp_path, groups) -> dict:
    return commit_helpers.commit(str(tmp_path), groups)


def _committed(tmp_path) -> list[str]:
    """Committed Parquet files, relative, with the content digest cut from the name."""
    return sorted(os.path.relpath(p, tmp_path).rsplit("-", 1)[0] + ".parquet"
                  for p in list_files(str(tmp_path), ".parquet"))


def _accounting(tmp_path, group, bundle, n):
    path = staging.staging_dir(str(tmp_path)) + f"/_inputs/{group}.json"
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump({"group": group, "bundle": bundle, "submissions": n}, f)


def test_pipeline_writes_hive_partitions_that_duckdb_reads(tmp_path):
    rows = [theorem("arxiv:a", 0), theorem("arxiv:a", 1, year=1999), theorem("arxiv:b", 0, year=None)]
    _write(tmp_path, {THEOREMS: rows})
    staged = staging.staging_dir(str(tmp_path))
    files = sorted(os.path.relpath(p, staged) for p in list_files(staged))
    assert files == [
        "theorems/source=arxiv/year=1999/part-arXiv_src_2101_001-00000.parquet",
        "theorems/source=arxiv/year=2021/part-arXiv_src_2101_001-00000.parquet",
        f"theorems/source=arxiv/year={HIVE_NULL}/part-arXiv_src_2101_001-00000.parquet",
    ]
    _commit(tmp_path, ["arXiv_src_2101_001"])
    con = duckdb.connect()
    con.execute(THEOREMS.view_sql(str(tmp_path)))
    got = con.execute("SELECT theorem_id, year FROM theorems ORDER BY theorem_id").fetchall()
    assert got == [("arxiv:a#0", 2021), ("arxiv:a#1", 1999), ("arxiv:b#0", None)]
    assert not os.path.exists(staging.staging_dir(str(tmp_path)))


def test_rows_of_a_paper_that_arrive_apart_are_spilled_and_written_in_order(tmp_path, monkeypatch):
    monkeypatch.setattr(parquet, "SPILL_ROWS", 2)      # spill every two rows: each paper comes in pieces
    rows = [theorem(f"arxiv:{p}", ordinal) for ordinal in (3, 1, 0, 2) for p in ("c", "a", "b")]
    failures = [{"paper_id": paper_id, "stage": "read", "error_class": "x", "message": str(n),
                 "bundle": "/in/arXiv_src_2101_001.tar"} for n, paper_id in enumerate([None, "arxiv:b", "arxiv:a"])]
    _write(tmp_path, {THEOREMS: rows, FAILURES: failures})
    staged = staging.staging_dir(str(tmp_path))
    written = list_files(staged, ".parquet")
    assert list_files(staged) == written                  # the spilled pieces are gone
    by_table = {path.split("/_staging/")[1].split("/")[0]: path for path in written}
    with open(by_table["theorems"], "rb") as handle:
        assert handle.read() == parquet_bytes(THEOREMS, rows)
    assert pq.read_table(by_table["theorems"]).column("theorem_id").to_pylist() == [
        f"arxiv:{p}#{o}" for p in "abc" for o in range(4)]
    assert pq.read_table(by_table["failures"]).column("paper_id").to_pylist() == ["arxiv:a", "arxiv:b", None]


def test_a_file_bigger_than_a_row_group_is_written_one_row_group_at_a_time(monkeypatch):
    rows = [theorem(f"arxiv:{p:03d}", o) for p in range(40) for o in range(3)]
    whole = parquet_bytes(THEOREMS, rows)
    monkeypatch.setattr(parquet, "ROW_GROUP_BYTES", 4 * THEOREMS.to_arrow(rows[:3]).nbytes)   # about 4 papers
    grouped = parquet_bytes(THEOREMS, rows)
    metadata = pq.ParquetFile(__import__("io").BytesIO(grouped)).metadata
    assert pq.ParquetFile(__import__("io").BytesIO(whole)).metadata.num_row_groups == 1
    assert metadata.num_row_groups == 10
    assert pq.read_table(__import__("io").BytesIO(grouped)) == pq.read_table(__import__("io").BytesIO(whole))


def test_commit_replaces_an_inputs_files_and_leaves_other_inputs_alone(tmp_path):
    other = "/in/arXiv_src_9901_001.tar"
    _write(tmp_path, {THEOREMS: [theorem("arxiv:a", 0, year=2020), theorem("arxiv:old", 0, 1999, other)]})
    _commit(tmp_path, ["arXiv_src_2101_001", "arXiv_src_9901_001"])
    (old_file,) = (tmp_path / "theorems/source=arxiv/year=1999").glob("part-arXiv_src_9901_001-00000-*.parquet")
    before = (old_file.stat().st_mtime_ns, old_file.read_bytes())
    # a rerun of 2101 only, whose paper moved from 2020 to 2021: the 2020 file of 2101 is stale
    _write(tmp_path, {THEOREMS: [theorem("arxiv:a", 0, year=2021)]})
    stats = _commit(tmp_path, ["arXiv_src_2101_001"])
    assert stats == {"files_committed": 1, "files_unchanged": 1, "stale_files_removed": 1}
    assert _committed(tmp_path) == ["theorems/source=arxiv/year=1999/part-arXiv_src_9901_001-00000.parquet",
                    "theorems/source=arxiv/year=2021/part-arXiv_src_2101_001-00000.parquet"]
    assert (old_file.stat().st_mtime_ns, old_file.read_bytes()) == before


def test_accounting_adds_up_or_fails_loudly(tmp_path):
    bundle = "/in/arXiv_src_2101_001.tar"
    duplicate = {"paper_id": "arxiv:a", "stage": "read", "error_class": "duplicate", "bundle": bundle}
    _write(tmp_path, {PAPERS: [paper("arxiv:a", n=2), paper("arxiv:b", "skipped"), paper("arxiv:c", "failed")],
                      THEOREMS: [theorem("arxiv:a", 0), theorem("arxiv:a", 1)],
                      FAILURES: [duplicate, {**duplicate, "error_class": "unsafe-member"}]})
    _accounting(tmp_path, "arXiv_src_2101_001", bundle, 4)
    counts = staging.check_accounting(str(tmp_path), staging.read_accounting(str(tmp_path), ["arXiv_src_2101_001"]))
    assert counts["arXiv_src_2101_001"] == {"bundle": bundle, "submissions": 4, "ok": 1, "failed": 1, "skipped": 1,
                                            "duplicates": 1, "statements_expected": 2, "statements_written": 2}
    _accounting(tmp_path, "arXiv_src_2101_001", bundle, 5)
    with pytest.raises(staging.AccountingError, match="5 submissions in, 3 papers out .* and 1 duplicate copies"):
        staging.check_accounting(str(tmp_path), staging.read_accounting(str(tmp_path), ["arXiv_src_2101_001"]))


def test_lost_statements_fail_the_accounting(tmp_path):
    _write(tmp_path, {PAPERS: [paper("arxiv:a", n=3)], THEOREMS: [theorem("arxiv:a", 0)]})
    _accounting(tmp_path, "arXiv_src_2101_001", "/in/arXiv_src_2101_001.tar", 1)
    with pytest.raises(staging.AccountingError, match="report 3 statements, 1 theorem rows"):
        staging.check_accounting(str(tmp_path), staging.read_accounting(str(tmp_path), ["arXiv_src_2101_001"]))


def test_manifest_counts_come_from_the_tables(tmp_path):
    _write(tmp_path, {PAPERS: [paper("arxiv:a", n=2), paper("arxiv:b", "skipped")],
                      THEOREMS: [theorem("arxiv:a", 0), theorem("arxiv:a", 1, kind="theorem")],
                      FAILURES: [{"paper_id": "arxiv:a", "stage": "read", "error_class": "unsafe-member",
                                  "bundle": "/in/arXiv_src_2101_001.tar"}]})
    _commit(tmp_path, ["arXiv_src_2101_001"])
    counts = manifests.read_manifest(str(tmp_path))["counts"]
    assert counts["by_status"] == {"ok": 1, "failed": 0, "skipped": 1}
    assert counts["by_kind"] == {"lemma": 1, "theorem": 1}
    assert counts["failures_by_reason"] == {"unsafe-member": 1}
    assert counts["by_bundle"] == {"/in/arXiv_src_2101_001.tar": {"ok": 1, "failed": 0, "skipped": 1}}


def test_a_tuple_of_row_collections_is_spilled_where_each_is_made(tmp_path):
    """Rows of a table made by two steps: the same file as one collection of all of them, and each
    part spilled in its producer's fused stage (a Flatten of the rows would make the FnApiRunner
    buffer them whole until the writer's stage)."""
    first = [theorem("arxiv:b", 1), theorem("arxiv:a", 0)]
    second = [theorem("arxiv:a", 1), theorem("arxiv:c", 0)]
    staged = staging.staging_dir(str(tmp_path))
    pipeline = beam.Pipeline(options=LOCAL)
    _ = ((pipeline | "First" >> beam.Create(first), pipeline | "Second" >> beam.Create(second))
         | "WriteTheorems" >> WriteTable(THEOREMS, staged))
    from apache_beam.runners.portability.fn_api_runner import FnApiRunner

    _, stages = FnApiRunner().create_stages(pipeline.to_runner_api())
    names = [{t.unique_name for t in stage.transforms} for stage in stages]
    for producer, spill in (("First", "WriteTheorems/Spill0"), ("Second", "WriteTheorems/Spill1")):
        assert any(any(n.startswith(producer) for n in stage) and spill in stage for stage in names), producer
    pipeline.run().wait_until_finish()
    (written,) = list_files(staged, ".parquet")
    with open(written, "rb") as handle:
        assert handle.read() == parquet_bytes(THEOREMS, first + second)


def test_the_writer_holds_a_bounded_set_of_tables_however_many_papers_wait(monkeypatch):
    """The papers file's one-row papers: merged while the row group is below pyarrow's page limits
    (the same bytes), so the Arrow memory waiting does not follow the papers (before: one table
    each, 4.5 KB of buffers and some 25 KB of objects)."""
    rows = [paper(f"arxiv:2101.{p:05d}", n=p) for p in range(2000)]
    unmerged = parquet.pa.BufferOutputStream()
    monkeypatch.setattr(parquet, "MERGE_PAPERS", 10 ** 9, raising=False)     # a table a paper, one row group
    monkeypatch.setattr(parquet, "ROW_GROUP_TABLES", 10 ** 9, raising=False)
    parquet.write_parquet(PAPERS, ([r] for r in rows), unmerged)
    monkeypatch.undo()
    pool = parquet.pa.proxy_memory_pool(parquet.pa.default_memory_pool())
    before = parquet.pa.default_memory_pool()
    parquet.pa.set_memory_pool(pool)
    try:
        merged = parquet_bytes(PAPERS, rows)
    finally:
        parquet.pa.set_memory_pool(before)
    assert merged == unmerged.getvalue().to_pybytes()
    assert pool.max_memory() < 3_000_000


def test_a_row_group_holds_at_most_a_bound_of_unmerged_tables(monkeypatch):
    monkeypatch.setattr(parquet, "MERGE_BYTES", 0, raising=False)           # nothing merged: a table a paper
    monkeypatch.setattr(parquet, "ROW_GROUP_TABLES", 50, raising=False)
    metadata = pq.ParquetFile(__import__("io").BytesIO(
        parquet_bytes(PAPERS, [paper(f"arxiv:{p:04d}") for p in range(120)]))).metadata
    assert [metadata.row_group(g).num_rows for g in range(metadata.num_row_groups)] == [50, 50, 20]
