"""One copy of each paper per corpus, across the inputs of a run and across incremental runs.

The bundles are built here; every run is the real `thmforge build-corpus` (FnApiRunner), and the
tables are read back through the committed generation, as `sql` and `search` read them.
"""
import glob
import hashlib
import json
import os
import shutil

import duckdb
import pytest

from runners.cli import main
from schemas import EDGES, FAILURES, PAPERS, THEOREMS
from tests.hostile import hostile_cases as hc
from transforms.duplicates import Copy, settle
from transforms.write import manifest as manifests

FIRST, SECOND, THIRD = "arXiv_src_2201_001.tar", "arXiv_src_2201_002.tar", "arXiv_src_2201_003.tar"


def bundle(path, members: dict[str, str]) -> str:
    """A bundle of `2201/<name>.gz` members, each a paper whose one theorem says `text`."""
    body = "\\begin{lemma}\\label{l}Used below.\\end{lemma}\n\\begin{theorem}By Lemma~\\ref{l}.\\end{theorem}\n"
    entries = [hc.Entry(f"2201/{name}.gz", hc.gz(hc.paper_tex(body=body, theorem=text).encode()))
               for name, text in members.items()]
    path.write_bytes(hc.tar_bytes(entries))
    return str(path)


def build(inputs, out, *extra) -> int:
    return main(["build-corpus", "--input", *inputs, "--output", str(out), "--embed-model", "none",
                 "--no-progress", *extra])


def rows(out, sql: str) -> list[tuple]:
    manifest = manifests.read_manifest(str(out))
    con = duckdb.connect()
    for table in (PAPERS, THEOREMS, FAILURES, EDGES):
        committed = manifests.committed_files(str(out), table.name, manifest)
        if committed:
            con.execute(table.view_sql(str(out), committed))
    return con.execute(sql).fetchall()


def parquet_hashes(out) -> dict[str, str]:
    return {os.path.relpath(p, out): hashlib.sha256(open(p, "rb").read()).hexdigest()
            for p in sorted(glob.glob(os.path.join(out, "**", "*.parquet"), recursive=True))}


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    root = tmp_path_factory.mktemp("dups")
    first = bundle(root / FIRST, {"2201.00001v1": "One, first version.", "2201.00002v2": "Two in the first bundle.",
                                  "2201.00004": "Four."})
    second = bundle(root / SECOND, {"2201.00001v2": "One, second version.",
                                    "2201.00002v2": "Two in the second bundle.", "2201.00005": "Five."})
    third = bundle(root / THIRD, {"2201.00005": "Five again.", "2201.00001v3": "One, third version."})
    return root, first, second, third


def test_newest_version_then_the_copy_that_entered_first_wins():
    def copy(version, group, entered, status="ok"):
        return Copy("arxiv:1", version, group, group, "m", status, None if status == "ok" else "corrupt-gzip",
                    1, entered)

    committed, old_run, later = copy("v2", "a", 0), copy("v2", "b", 1), copy("v2", "c", 2)
    assert settle([later, old_run, committed]) == [(old_run, committed), (later, committed)]
    newest = copy("v3", "c", 2)
    assert settle([committed, newest, copy(None, "d", 1)])[0] == (committed, newest)
    assert settle([copy(None, "a", 0)]) == []
    failed_newer = copy("v4", "e", 2, "failed")
    assert settle([failed_newer, committed]) == [(failed_newer, committed)]      # ok beats a failed newer copy
    assert settle([failed_newer, copy("v1", "f", 3, "skipped")])[0][1] == failed_newer   # neither ok: newest


@pytest.fixture(scope="module")
def together(inputs):
    """Both bundles in one run, one input per wave (the copies meet across waves)."""
    root, first, second, _ = inputs
    assert build([first, second], root / "together", "--inputs-per-wave", "1") == 0
    return root / "together"


@pytest.mark.slow
def test_one_run_keeps_one_copy_per_paper_and_records_the_others(together):
    assert rows(together, "SELECT paper_id, bundle, version FROM papers ORDER BY 1") == [
        ("arxiv:2201.00001", SECOND, "v2"), ("arxiv:2201.00002", FIRST, "v2"), ("arxiv:2201.00004", FIRST, None),
        ("arxiv:2201.00005", SECOND, None)]
    assert rows(together, "SELECT paper_id, statement_text FROM theorems WHERE statement_text NOT LIKE 'By Lemma%' AND kind = 'theorem' "
                          "ORDER BY 1") == [
        ("arxiv:2201.00001", "One, second version."), ("arxiv:2201.00002", "Two in the first bundle."),
        ("arxiv:2201.00004", "Four."), ("arxiv:2201.00005", "Five.")]
    assert rows(together, "SELECT count(*) - count(DISTINCT theorem_id) FROM theorems") == [(0,)]
    assert rows(together, "SELECT DISTINCT bundle FROM edges WHERE paper_id = 'arxiv:2201.00001'") == [(SECOND,)]
    assert rows(together, "SELECT paper_id, location, message FROM failures WHERE error_class = 'duplicate' "
                          "ORDER BY 1") == [
        ("arxiv:2201.00001", f"{FIRST}!2201/2201.00001v1.gz",
         f"another copy kept: {SECOND}!2201/2201.00001v2.gz (newest version, else the copy that entered the "
         "corpus first)"),
        ("arxiv:2201.00002", f"{SECOND}!2201/2201.00002v2.gz",
         f"another copy kept: {FIRST}!2201/2201.00002v2.gz (newest version, else the copy that entered the "
         "corpus first)")]
    accounting = json.load(open(together / "manifest.json"))["accounting"]
    for group in ("arXiv_src_2201_001", "arXiv_src_2201_002"):
        record = accounting[group]
        assert (record["submissions"], record["ok"], record["duplicates"]) == (3, 2, 1)
        assert record["statements_expected"] == record["statements_written"] == 6


@pytest.mark.slow
def test_a_later_run_replaces_the_older_version_and_matches_one_run(inputs, together):
    root, first, second, _ = inputs
    out = root / "incremental"
    assert build([first], out) == 0
    assert rows(out, "SELECT version FROM papers WHERE paper_id = 'arxiv:2201.00001'") == [("v1",)]
    assert build([second], out) == 0
    assert parquet_hashes(out) == parquet_hashes(together)      # the old copy's rows left every table
    assert not os.path.exists(out / "_staging")
    manifest = json.load(open(out / "manifest.json"))
    assert manifest["accounting"] == json.load(open(together / "manifest.json"))["accounting"]
    assert manifest["counts"]["papers"] == 4 and manifest["counts"]["failures_by_reason"]["duplicate"] == 2


@pytest.mark.slow
def test_the_same_version_again_is_a_duplicate_and_leaves_the_corpus_alone(inputs, together, tmp_path, capsys):
    root, _, _, third = inputs
    out = tmp_path / "again"
    shutil.copytree(together, out)
    before = parquet_hashes(out)
    assert build([third], out) == 0
    assert "duplicate" in capsys.readouterr().err
    assert rows(out, "SELECT paper_id, bundle, version FROM papers ORDER BY 1") == [
        ("arxiv:2201.00001", THIRD, "v3"), ("arxiv:2201.00002", FIRST, "v2"), ("arxiv:2201.00004", FIRST, None),
        ("arxiv:2201.00005", SECOND, None)]
    assert rows(out, "SELECT count(*), count(DISTINCT paper_id) FROM theorems WHERE kind = 'theorem'") == [(8, 4)]
    assert rows(out, "SELECT paper_id, bundle FROM failures WHERE error_class = 'duplicate' ORDER BY 1, 2") == [
        ("arxiv:2201.00001", FIRST), ("arxiv:2201.00001", SECOND), ("arxiv:2201.00002", SECOND),
        ("arxiv:2201.00005", THIRD)]
    after = parquet_hashes(out)
    assert {f: h for f, h in after.items() if "2201_001" in f} == {f: h for f, h in before.items() if "2201_001" in f}
    accounting = json.load(open(out / "manifest.json"))["accounting"]
    assert (accounting["arXiv_src_2201_002"]["ok"], accounting["arXiv_src_2201_002"]["duplicates"]) == (1, 2)
    assert (accounting["arXiv_src_2201_003"]["ok"], accounting["arXiv_src_2201_003"]["duplicates"]) == (1, 1)


@pytest.mark.slow
def test_the_index_keeps_no_vectors_of_the_replaced_copy(inputs, tmp_path):
    """With embeddings, the vector index follows the committed files: the older copy's vectors go."""
    _, first, second, _ = inputs
    out = tmp_path / "embedded"
    for bundle_path in (first, second):
        assert main(["build-corpus", "--input", bundle_path, "--output", str(out), "--preset", "local",
                     "--no-progress"]) == 0
    (statements,) = rows(out, "SELECT count(*) FROM theorems WHERE embedding IS NOT NULL")[0]
    index = json.load(open(out / "index" / "description" / "index.json"))
    assert sum(index["encoded"].values()) == statements == 12


@pytest.mark.slow
def test_a_newer_version_that_fails_does_not_replace_an_older_one_that_worked(inputs, tmp_path):
    root, first, _, _ = inputs
    broken = root / "arXiv_src_2201_004.tar"
    broken.write_bytes(hc.tar_bytes([hc.Entry("2201/2201.00001v9.gz", hc.case("broken gzip").data)]))
    out = tmp_path / "kept"
    assert build([first], out) == 0
    before = rows(out, "SELECT theorem_id FROM theorems WHERE paper_id = 'arxiv:2201.00001' ORDER BY 1")
    assert build([str(broken)], out) == 0
    assert rows(out, "SELECT bundle, version, status FROM papers WHERE paper_id = 'arxiv:2201.00001'") == [
        (FIRST, "v1", "ok")]
    assert rows(out, "SELECT theorem_id FROM theorems WHERE paper_id = 'arxiv:2201.00001' ORDER BY 1") == before
    assert rows(out, "SELECT paper_id, error_class FROM failures WHERE bundle = 'arXiv_src_2201_004.tar' "
                     "ORDER BY 2") == [("arxiv:2201.00001", "corrupt-gzip"), ("arxiv:2201.00001", "duplicate")]
    assert rows(out, "SELECT message FROM failures WHERE error_class = 'duplicate'") == [
        (f"another copy kept: {FIRST}!2201/2201.00001v1.gz (this newer copy failed (corrupt-gzip); "
         "the newest version that extracted ok is kept)",)]
    record = json.load(open(out / "manifest.json"))["accounting"]["arXiv_src_2201_004"]
    assert (record["submissions"], record["ok"], record["failed"], record["duplicates"]) == (1, 0, 0, 1)


@pytest.mark.slow
def test_no_committed_edge_names_a_statement_of_the_replaced_copy(tmp_path):
    """`link` joins three papers' shared lemma; a newer version of one with one more statement
    renumbers it (new theorem ids): the corpus run drops the link edges that named the old ids."""
    shared = "\\begin{lemma}Every finite group of prime order is cyclic and generated by any element other than the identity.\\end{lemma}\n"

    def paper(name: str, body: str) -> hc.Entry:
        return hc.Entry(f"2201/{name}.gz", hc.gz(hc.paper_tex(body=body, theorem=f"{name} alone.").encode()))

    older = tmp_path / "arXiv_src_2201_006.tar"
    older.write_bytes(hc.tar_bytes([paper("2201.00011v1", shared), paper("2201.00012", shared),
                                   paper("2201.00013", shared)]))
    newer = tmp_path / "arXiv_src_2201_007.tar"
    newer.write_bytes(hc.tar_bytes([paper("2201.00011v2", "\\begin{lemma}Added later.\\end{lemma}\n" + shared)]))
    out = tmp_path / "linked"
    assert build([str(older)], out) == 0
    assert main(["link", str(out)]) == 0
    restates = "SELECT paper_id, dst_paper_id FROM edges WHERE relation = 'restates' ORDER BY ALL"
    pairs = [(f"arxiv:2201.000{a}", f"arxiv:2201.000{b}") for a in (11, 12, 13) for b in (11, 12, 13) if a != b]
    assert rows(out, restates) == pairs
    assert build([str(newer)], out) == 0
    assert rows(out, "SELECT version FROM papers WHERE paper_id = 'arxiv:2201.00011'") == [("v2",)]
    missing = ("SELECT count(*) FROM edges e WHERE {col} IS NOT NULL AND "
               "NOT EXISTS (SELECT 1 FROM theorems t WHERE t.theorem_id = {col})")
    for column in ("e.src_theorem_id", "e.dst_theorem_id"):
        assert rows(out, missing.format(col=column)) == [(0,)]
    assert rows(out, restates) == [p for p in pairs if "arxiv:2201.00011" not in p]
    on_disk = {os.path.relpath(p, out) for p in glob.glob(os.path.join(out, "edges", "**", "*.parquet"), recursive=True)}
    assert on_disk == set(json.load(open(out / "manifest.json"))["files"]["edges"])
    assert main(["link", str(out)]) == 0                       # the next link finds the new copy's restatement
    assert rows(out, restates) == pairs
    assert json.load(open(out / "manifest.json"))["link"]["stale_edges_removed"] == 0
