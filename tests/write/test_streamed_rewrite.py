"""Rewriting a part file one paper at a time (the duplicates rewrite): the bytes `parquet_bytes`
gives for the rows kept, and never the whole file in memory."""
import random
import tracemalloc

import pyarrow as pa
import pyarrow.parquet as pq

from schemas import FAILURES, THEOREMS
from transforms import duplicates
from transforms.write import parquet
from transforms.write.parquet import file_papers, parquet_bytes


def theorem(paper, ordinal, text="s"):
    return {"theorem_id": f"{paper}#{ordinal}", "paper_id": paper, "source": "arxiv", "year": 2021,
            "ordinal": ordinal, "kind": "lemma", "statement_latex": text, "bundle": "/in/arXiv_src_2101_001.tar"}


def failure(paper, error_class, message="m"):
    return {"paper_id": paper, "theorem_id": None, "stage": "read", "error_class": error_class, "message": message,
            "location": "x", "fatal": False, "bundle": "/in/arXiv_src_2101_001.tar"}


def test_file_papers_gives_each_papers_rows_in_order_across_row_groups_and_batches(tmp_path, monkeypatch):
    rows = [theorem(f"arxiv:{p:03d}", o) for p in range(30) for o in range(4)]
    monkeypatch.setattr(parquet, "ROW_GROUP_BYTES", 3 * THEOREMS.to_arrow(rows[:4]).nbytes)
    path = tmp_path / "t.parquet"
    path.write_bytes(parquet_bytes(THEOREMS, rows))
    assert pq.ParquetFile(path).metadata.num_row_groups > 5
    got = list(file_papers(str(path), batch_rows=7))
    assert [len(p) for p in got] == [4] * 30
    assert [r["theorem_id"] for p in got for r in p] == [r["theorem_id"] for r in rows]


def test_file_papers_groups_a_file_written_out_of_paper_order(tmp_path):
    rows = [theorem(f"arxiv:{p}", o) for p in "abc" for o in range(2)]
    shuffled = rows[:]
    random.Random(3).shuffle(shuffled)
    path = tmp_path / "old.parquet"
    pq.write_table(pa.Table.from_pylist(shuffled), path)
    got = list(file_papers(str(path), batch_rows=2))
    assert [{r["paper_id"] for r in p} for p in got] == [{"arxiv:a"}, {"arxiv:b"}, {"arxiv:c"}]
    assert sorted(r["theorem_id"] for p in got for r in p) == sorted(r["theorem_id"] for r in rows)


def test_file_papers_holds_a_batch_not_the_file(tmp_path):
    rows = [theorem(f"arxiv:{p:04d}", 0, text=f"{p}" + "x" * 50_000) for p in range(200)]    # 10 MB of text
    path = tmp_path / "big.parquet"
    path.write_bytes(parquet_bytes(THEOREMS, rows))
    tracemalloc.start()
    count = sum(len(p) for p in file_papers(str(path), batch_rows=10))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert count == 200
    assert peak < 2_000_000


def test_rewrite_drops_papers_and_merges_added_rows_as_parquet_bytes_would(tmp_path):
    rows = [failure(f"arxiv:{p}", "bad-line", f"m{p}") for p in "acegi"]
    source = tmp_path / "f.parquet"
    source.write_bytes(parquet_bytes(FAILURES, rows))
    added = {"arxiv:b": [failure("arxiv:b", "duplicate")], "arxiv:e": [failure("arxiv:e", "duplicate")],
             "arxiv:z": [failure("arxiv:z", "duplicate")]}
    target = tmp_path / "out.parquet"
    duplicates._rewrite_file(FAILURES, str(source), str(target), lambda rs: [] if rs[0]["paper_id"] == "arxiv:c" else rs,
                             added, copy_unchanged=False)
    kept = [r for r in rows if r["paper_id"] != "arxiv:c"] + [r for a in added.values() for r in a]
    assert target.read_bytes() == parquet_bytes(FAILURES, kept)


def test_rewrite_copies_an_unchanged_file_and_deletes_an_emptied_one(tmp_path):
    source = tmp_path / "t.parquet"
    source.write_bytes(parquet_bytes(THEOREMS, [theorem("arxiv:a", 0), theorem("arxiv:b", 0)]))
    copied, emptied = tmp_path / "copied.parquet", tmp_path / "emptied.parquet"
    emptied.write_bytes(b"stale")
    duplicates._rewrite_file(THEOREMS, str(source), str(copied), lambda rs: rs, {}, copy_unchanged=True)
    duplicates._rewrite_file(THEOREMS, str(source), str(emptied), lambda rs: [], {}, copy_unchanged=True)
    assert copied.read_bytes() == source.read_bytes()
    assert not emptied.exists()


def test_describer_totals_hold_a_batch_not_the_table(tmp_path):
    """The manifest's describer figures count 20 MB of descriptions a batch at a time."""
    from pipelines.corpus import describe_totals

    rows = [{**theorem(f"arxiv:{p:03d}", o), "description": f"{p}" + "d" * 1000, "description_input_tokens": 3,
             "description_output_tokens": 2 if o % 4 else None} for p in range(200) for o in range(100)]
    path = tmp_path / "theorems.parquet"
    path.write_bytes(parquet_bytes(THEOREMS, rows))
    failures = tmp_path / "failures.parquet"
    failures.write_bytes(parquet_bytes(FAILURES, [{**failure("arxiv:x", "llm-error"), "stage": "describe"},
                                                  failure("arxiv:y", "bad-line")]))
    del rows
    tracemalloc.start()
    totals = describe_totals([str(path)], [str(failures)], [])
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert totals == {"statements": 20_000, "described": 20_000, "failed": 0, "input_tokens": 60_000,
                      "output_tokens": 30_000, "failed_by_reason": {"llm-error": 1}}
    assert peak < 5_000_000


def test_theorem_ids_gone_are_those_no_staged_file_holds(tmp_path):
    """A paper that moved from one input's committed file to another input's staged file keeps its
    theorem ids: only the ids no staged file holds are gone."""
    def write(path, rows):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(parquet_bytes(THEOREMS, rows))
        return str(path)

    committed_a = write(tmp_path / "theorems/part-A-00000-0123456789abcdef.parquet",
                        [theorem("arxiv:moved", 0), theorem("arxiv:renumbered", 0), theorem("arxiv:kept", 0)])
    staged = [write(tmp_path / "s/theorems/part-A-00000.parquet", [theorem("arxiv:kept", 0), theorem("arxiv:renumbered", 1)]),
              write(tmp_path / "s/theorems/part-B-00000.parquet", [theorem("arxiv:moved", 0)])]
    gone = duplicates._gone_theorem_ids(str(tmp_path), {"A", "B"}, [committed_a[len(str(tmp_path)) + 1:]], staged)
    assert gone == {"arxiv:renumbered#0"}


def test_duplicate_detection_holds_the_repeated_papers_not_every_paper(tmp_path):
    """Settling duplicates over 20,001 papers in two inputs, one paper in both: only that paper's
    copies become objects, the others' ids are 8-byte hashes (before: a row and a `Copy` a paper,
    8 MB more here)."""
    from schemas import PAPERS
    from transforms.write import commit as staging

    def papers(group, numbers):
        return [{"paper_id": f"arxiv:2101.{p:05d}", "source": "arxiv", "status": "ok", "n_statements": 0,
                 "bundle": f"/in/{group}.tar", "member": f"2101/2101.{p:05d}.gz", "version": None} for p in numbers]

    def staged_papers(output, first):
        staged = output / "_staging" / "papers"
        staged.mkdir(parents=True)
        for group, numbers in zip(groups, (range(first), [7])):
            (staged / parquet.part_file_name(group, 0)).write_bytes(parquet_bytes(PAPERS, papers(group, numbers)))
        assert staging.staging_dir(str(output)) == str(output / "_staging")
        return staged

    groups = ["arXiv_src_2101_001", "arXiv_src_2101_002"]
    staged_papers(tmp_path / "warm", 10)
    duplicates.keep_one_copy(str(tmp_path / "warm"), groups, {}, THEOREMS, {})   # imports are not counted
    staged = staged_papers(tmp_path / "big", 20_000)
    tracemalloc.start()
    duplicates.keep_one_copy(str(tmp_path / "big"), groups, {}, THEOREMS, {})
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert not (staged / parquet.part_file_name(groups[1], 0)).exists()      # its one paper was a copy
    failures = pq.read_table(tmp_path / "big" / "_staging" / "failures" / parquet.part_file_name(groups[1], 0))
    assert failures.column("error_class").to_pylist() == ["duplicate"]
    assert peak < 10_000_000        # 8 MB of it is the buffer that copies a file (old: 16.8 MB)
