"""`thmforge build-corpus` end to end on the project's sample (FnApiRunner), checked on disk."""
import hashlib
import json
import os
import pathlib
import re
import signal
import subprocess
import sys
import time

import duckdb
import pytest

from pipelines.corpus import plan_waves
from runners.cli import main
from schemas import FAILURES, PAPERS, THEOREMS
from transforms.corpus import normalize_latex
from tests.conftest import REPO, SAMPLES

pytestmark = pytest.mark.slow

BUNDLES = sorted(str(p) for p in (SAMPLES / "arxiv").glob("arXiv_src_*.tar"))
METADATA = str(SAMPLES / "arxiv" / "arxiv-metadata-oai-snapshot.json")


def build(output, inputs=BUNDLES, *extra):
    args = ["build-corpus", "--input", *inputs, "--metadata", METADATA, "--output", str(output),
            "--embed-model", "none", "--preset", "local", "--no-progress", *extra]
    assert main(args) == 0


def table_files(output) -> dict[str, bytes]:
    root = pathlib.Path(output)
    return {str(p.relative_to(root)): p.read_bytes()
            for name in ("papers", "theorems", "failures") for p in sorted((root / name).rglob("*.parquet"))}


def query(output, sql, *params):
    con = duckdb.connect()
    for table in (PAPERS, THEOREMS, FAILURES):
        has_files = any((pathlib.Path(output) / table.name).rglob("*.parquet"))
        con.execute(table.view_sql(str(output)) if has_files else table.empty_view_sql())
    return con.execute(sql, list(params)).fetchall()


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    output = tmp_path_factory.mktemp("corpus") / "out"
    build(output)
    return output


def statement(output, paper_id, label=None, display=None):
    cond, value = ("label = ?", label) if label else ("display_name = ?", display)
    cols = "kind, display_name, number, title, label, statement_latex_raw, proof_latex, proof_text, file, theorem_id, " \
           "content_hash, statement_latex, url, year, source"
    (row,) = query(output, f"SELECT {cols} FROM theorems WHERE paper_id = ? AND {cond}", paper_id, value)
    return dict(zip([c.strip() for c in cols.split(",")], row))


def without_digest(path: str) -> str:
    """`part-G-00000-<16 hex>.parquet` (content-addressed) -> `part-G-00000.parquet`."""
    stem, digest = path[:-len(".parquet")].rsplit("-", 1)
    assert re.fullmatch(r"[0-9a-f]{16}", digest), path
    return stem + ".parquet"


def test_files_on_disk(corpus):
    assert sorted(map(without_digest, table_files(corpus))) == [          # the sample records no failures
        "papers/part-arXiv_src_2103_001-00000.parquet",
        "papers/part-arXiv_src_2104_001-00000.parquet",
        "papers/part-arXiv_src_9905_001-00000.parquet",
        "theorems/source=arxiv/year=1999/part-arXiv_src_9905_001-00000.parquet",
        "theorems/source=arxiv/year=2021/part-arXiv_src_2103_001-00000.parquet",
        "theorems/source=arxiv/year=2021/part-arXiv_src_2104_001-00000.parquet",
    ]
    assert not (corpus / "_staging").exists()


def test_exact_statements(corpus):
    monotone = statement(corpus, "arxiv:2103.00001", label="thm:monotone")
    assert (monotone["kind"], monotone["display_name"], monotone["number"], monotone["title"]) == \
        ("theorem", "Theorem", "2.1", "Monotone convergence")
    assert normalize_latex(re.sub(r"\\label\{[^}]*\}", "", monotone["statement_latex_raw"])) == (
        "Every bounded monotone sequence of real numbers converges. If $(a_n)$ is increasing and bounded "
        "above, then $\\lim_{n\\to\\infty} a_n = \\sup_n a_n$.")
    assert monotone["proof_latex"].strip().startswith("Let $s = \\sup_n a_n$")
    assert monotone["proof_text"].startswith("Let $s = \\sup_n a_n$") and "\\label" not in monotone["proof_text"]
    assert monotone["content_hash"] == hashlib.sha256(
        normalize_latex(monotone["statement_latex"]).encode()).hexdigest()
    assert monotone["theorem_id"] == f"arxiv:2103.00001#3-{monotone['content_hash'][:12]}"
    assert monotone["url"] == "https://arxiv.org/abs/2103.00001#thm:monotone"
    assert (monotone["year"], monotone["source"]) == (2021, "arxiv")

    main_theorem = statement(corpus, "arxiv:2103.00001", display="Main Theorem")
    assert (main_theorem["kind"], main_theorem["number"]) == ("theorem", None)
    assert normalize_latex(main_theorem["statement_latex_raw"]) == "Every bounded monotone sequence of real numbers converges."

    lemma = statement(corpus, "arxiv:2103.00001", label="lem:sup")
    assert (lemma["kind"], lemma["number"], lemma["title"]) == ("lemma", "1.2", "Supremum approximation")

    cancel = statement(corpus, "arxiv:2103.00006", label="lem:cancel")
    assert cancel["title"] == "Cancellation in $\\mathbb{Z}/p$"
    fermat = statement(corpus, "arxiv:2103.00006", label="thm:fermat")
    assert (fermat["title"], fermat["number"]) == ("Fermat's little theorem for $p$ prime", "1.2")
    artin = statement(corpus, "arxiv:2103.00006", display="Conjecture")
    assert (artin["kind"], artin["title"]) == ("conjecture", "Artin, $[\\text{primitive roots}]$")

    problem = statement(corpus, "arxiv:2103.00002", display="Open Problem")      # thmtools, unnumbered
    assert (problem["kind"], problem["number"]) == ("problem", None)
    edges = statement(corpus, "arxiv:2103.00002", label="thm:edges")
    assert (edges["kind"], edges["number"], edges["title"]) == ("theorem", "1.3", "Edge count")

    observation = statement(corpus, "arxiv:2103.00003", label="obs:perfect")   # llncs \spnewtheorem
    assert (observation["kind"], observation["number"]) == ("observation", "2")
    assert statement(corpus, "arxiv:2103.00003", display="Key Fact")["kind"] == "fact"

    banach = statement(corpus, "arxiv:2103.00004", label="thm:banach")         # \include'd file
    assert (banach["kind"], banach["number"], banach["title"], banach["file"]) == \
        ("theorem", "3", "Banach", "sections/results.tex")

    lagrange = statement(corpus, "arxiv:2103.00007", label="thm:lagrange")     # [subsection] numbering
    assert lagrange["number"] == "1.1.1"
    assert statement(corpus, "arxiv:2103.00007", display="Remark")["number"] == "1.2.1"

    heine_borel = statement(corpus, "arxiv:2104.00001", label="thm:heine-borel")   # Latin-1 source
    assert heine_borel["title"] == "Heine\u2013Borel, th\u00e9or\u00e8me de Borel"
    assert "\u00c9tant donn\u00e9" in heine_borel["statement_latex_raw"]

    assert statement(corpus, "arxiv:math/9905001", label="lem:pascal")["title"] == "Pascal's rule"
    assert statement(corpus, "arxiv:hep-th/9905002", label="ax:ccr")["kind"] == "axiom"


def test_kinds_and_counts_per_paper(corpus):
    per_paper = dict(query(corpus, "SELECT paper_id, list(kind ORDER BY ordinal) FROM theorems GROUP BY 1"))
    assert per_paper["arxiv:2103.00005"] == ["definition", "lemma", "theorem", "corollary"]   # class-provided
    assert per_paper["arxiv:2103.00004"] == ["example", "lemma", "theorem", "proposition"]    # no commented one
    assert per_paper["arxiv:2104.00002"] == ["assumption", "claim", "theorem"]
    assert sum(len(kinds) for kinds in per_paper.values()) == 42


def test_every_paper_is_accounted_for(corpus):
    papers = query(corpus, "SELECT paper_id, status, status_reason, has_metadata, year, title, authors "
                           "FROM papers ORDER BY paper_id")
    assert len(papers) == 12 and len({p[0] for p in papers}) == 12
    by_id = {p[0]: p for p in papers}
    assert by_id["arxiv:2103.00008"][1:3] == ("skipped", "pdf-only")
    assert {p[1] for p in papers if p[0] != "arxiv:2103.00008"} == {"ok"}
    assert by_id["arxiv:2104.00002"][3] is False and by_id["arxiv:2104.00002"][5] is None
    assert by_id["arxiv:2103.00002"][5:] == ("Leaves of finite trees", ["Bruno Vale", "Chen Orlov"])
    assert by_id["arxiv:hep-th/9905002"][4] == 1999
    manifest = json.loads((corpus / "manifest.json").read_text())
    assert manifest["counts"]["by_status"] == {"ok": 11, "failed": 0, "skipped": 1}
    assert manifest["counts"]["papers_without_metadata"] == 1
    assert sum(manifest["counts"]["by_kind"].values()) == manifest["counts"]["statements"] == 42
    for group, counts in manifest["accounting"].items():
        assert counts["submissions"] == counts["ok"] + counts["failed"] + counts["skipped"]
        assert counts["statements_expected"] == counts["statements_written"]
    assert {g: c["submissions"] for g, c in manifest["accounting"].items()} == {
        "arXiv_src_2103_001": 8, "arXiv_src_2104_001": 2, "arXiv_src_9905_001": 2}
    assert manifest["metrics"]["thmforge.corpus/papers_read"] == 12
    assert manifest["versions"]["apache-beam"] == "2.77.0"
    assert manifest["describer"]["describer"] == "text" and manifest["embedding"] is None


def test_rerun_gives_identical_tables(corpus, tmp_path):
    before = table_files(corpus)
    build(corpus)
    assert table_files(corpus) == before
    (dupes,) = query(corpus, "SELECT count(*) - count(DISTINCT theorem_id) FROM theorems")[0]
    assert dupes == 0


def test_waves_write_the_same_tables_and_leave_no_spilled_rows(corpus, tmp_path):
    assert plan_waves(BUNDLES, 32) == [BUNDLES]
    assert plan_waves(BUNDLES, 2) == [BUNDLES[:2], BUNDLES[2:]]
    output = tmp_path / "waves"
    build(output, BUNDLES, "--inputs-per-wave", "1")
    manifest = json.loads((output / "manifest.json").read_text())
    assert manifest["metrics"]["thmforge.corpus/papers_read"] == 12
    assert table_files(output) == table_files(corpus)
    assert not (output / "_staging").exists()        # the spilled rows went with the staging directory


def test_incremental_runs_add_partitions_without_rewriting_old_ones(corpus, tmp_path):
    output = tmp_path / "incremental"
    old_bundle = [b for b in BUNDLES if "9905" in b]
    build(output, old_bundle)
    (old,) = (output / "theorems/source=arxiv/year=1999").glob("part-arXiv_src_9905_001-00000-*.parquet")
    stamp = old.stat().st_mtime_ns
    build(output, [b for b in BUNDLES if "9905" not in b])
    assert old.stat().st_mtime_ns == stamp
    assert table_files(output) == table_files(corpus)
    manifest = json.loads((output / "manifest.json").read_text())
    assert manifest["counts"]["papers"] == 12 and len(manifest["accounting"]) == 3


def test_run_killed_midway_then_rerun_completes_with_the_same_result(corpus, tmp_path):
    output = tmp_path / "killed"
    command = [sys.executable, "-m", "runners.cli", "build-corpus", "--input", *BUNDLES, "--metadata", METADATA,
               "--output", str(output), "--embed-model", "none", "--no-progress"]
    proc = subprocess.Popen(command, cwd=REPO, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not (output / "_staging" / "_inputs").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert proc.poll() is None, "the run ended before it could be killed"
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    assert table_files(output) == {}          # nothing half-written is visible
    build(output)
    assert table_files(output) == table_files(corpus)
    assert not (output / "_staging").exists()


def _processes_in_group(pgid: int) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit() and int(name) != pgid:
            try:
                if os.getpgid(int(name)) == pgid:
                    found.append(int(name))
            except ProcessLookupError:
                continue
    return found


def test_worker_killed_under_multi_process_execution_then_rerun_equals_a_clean_run(corpus, tmp_path):
    output = tmp_path / "worker-killed"
    command = [sys.executable, "-m", "runners.cli", "build-corpus", "--input", *BUNDLES, "--metadata", METADATA,
               "--output", str(output), "--embed-model", "none", "--no-progress", "--preset", "local-parallel",
               "--direct_num_workers=2"]
    proc = subprocess.Popen(command, cwd=REPO, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 90
        while not (output / "_staging" / "_inputs").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        workers = _processes_in_group(proc.pid)
        assert workers, "no SDK worker process to kill"
        os.kill(workers[0], signal.SIGKILL)
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        pass                                   # a run that hangs on its lost worker is stopped below
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert table_files(output) in ({}, table_files(corpus))   # nothing partial ever becomes visible
    build(output)
    assert table_files(output) == table_files(corpus)


def test_bad_arguments_exit_2_with_a_message(tmp_path, capsys):
    assert main(["build-corpus", "--output", str(tmp_path)]) == 2
    assert "--input is required" in capsys.readouterr().err
    assert main(["build-corpus", "--input", str(tmp_path / "none*.tar"), "--output", str(tmp_path)]) == 2
    assert "no input matches" in capsys.readouterr().err
    assert main(["build-corpus", "--input", *BUNDLES, "--metadata", str(tmp_path / "missing.json"),
                 "--output", str(tmp_path)]) == 2
    assert "no such file" in capsys.readouterr().err
    assert main(["build-corpus", "--input", str(tmp_path), "--source", "stacks", "--metadata", METADATA,
                 "--output", str(tmp_path)]) == 2
    assert "takes none" in capsys.readouterr().err


@pytest.mark.shared
def test_shared_arxiv_corpus(shared_corpora, tmp_path, capsys):
    output = tmp_path / "shared"
    args = ["build-corpus", "--input", str(shared_corpora / "arxiv"), "--metadata",
            str(shared_corpora / "arxiv" / "arxiv-metadata-oai-snapshot.json"), "--output", str(output),
            "--embed-model", "none"]
    assert main(args) == 0
    assert "extracting: 9/9 papers (100%)" in capsys.readouterr().err        # progress of a local run
    papers = dict((p, (s, n)) for p, s, n in query(output, "SELECT paper_id, status, n_statements FROM papers"))
    assert len(papers) == 9 and query(output, "SELECT count(DISTINCT paper_id) FROM papers")[0][0] == 9
    assert papers.pop("arxiv:2101.99007") == ("skipped", 0)
    assert {status for status, _ in papers.values()} == {"ok"}, papers
    assert papers["arxiv:2101.99003"][1] == 7           # seven \begin{finding} in the single .tex
    picked = [("arxiv:2101.99001", "thm:hau", "theorem", "Hausdorff Maximality Theorem"),
              ("arxiv:2101.99004", "greedy-abstract", "theorem", "Abstract greedy algorithm"),
              ("arxiv:2101.99006", "chain-rule", "lemma", "Chain rule"),
              ("arxiv:2101.99008", "def.factor", "definition", "Factorization system"),
              ("arxiv:math/9901999", "thm:stabilization", "theorem", "Stabilization")]
    for paper_id, label, kind, title in picked:
        got = query(output, "SELECT kind, title FROM theorems WHERE paper_id = ? AND label = ?", paper_id, label)
        assert got == [(kind, title)], (paper_id, label)
    manifest = json.loads((output / "manifest.json").read_text())
    assert sum(manifest["counts"]["by_status"].values()) == 9


def _tar(entries) -> bytes:
    import io
    import tarfile

    sink = io.BytesIO()
    with tarfile.open(fileobj=sink, mode="w", format=tarfile.USTAR_FORMAT) as out:
        for name, data in entries:
            info = tarfile.TarInfo(name)
            if isinstance(data, bytes):
                info.size = len(data)
                out.addfile(info, io.BytesIO(data))
            else:
                info.type, info.linkname = data
                out.addfile(info)
    return sink.getvalue()


def test_hostile_bundle_every_case_recorded_and_the_run_completes(tmp_path):
    import gzip
    import tarfile

    gz = lambda data: gzip.compress(data, mtime=0)  # noqa: E731
    doc = b"\\documentclass{article}\\newtheorem{theorem}{Theorem}\\begin{document}" \
          b"\\begin{theorem}\\label{t}Safe.\\end{theorem}\\end{document}\n"
    unsafe = _tar([("main.tex", doc), ("../../etc/evil.tex", b"x"), ("/abs.tex", b"x"),
                   ("link.tex", (tarfile.SYMTYPE, "/etc/passwd")), ("hard.tex", (tarfile.LNKTYPE, "main.tex"))])
    truncated = gz(_tar([("main.tex", doc + b"%" * 20000)]))
    cycle = _tar([("main.tex", b"\\documentclass{article}\\begin{document}\\input{a}\\end{document}"),
                  ("a.tex", b"\\input{main}")])
    members = [
        ("2201/2201.00001.gz", gz(unsafe)),
        ("2201/2201.00002.gz", truncated[: len(truncated) // 2]),
        ("2201/2201.00003.gz", b""),
        ("2201/2201.00004.gz", gz(b"\0" * (3 << 20))),                # decompresses past the limit below
        ("2201/2201.00005.gz", gz(_tar([(f"f{i}.tex", b"%") for i in range(30)]))),
        ("2201/2201.00006.gz", gz(cycle)),
        ("2201/2201.00007.pdf", b"%PDF-1.4\n"),
        ("2201/2201.00008.gz", gz(b"\x00\x01\x02binary\xff" * 100)),
    ]
    bundle = tmp_path / "arXiv_src_2201_001.tar"
    bundle.write_bytes(_tar(members))
    output = tmp_path / "hostile"
    assert main(["build-corpus", "--input", str(bundle), "--output", str(output), "--embed-model", "none",
                 "--no-progress", "--max-submission-bytes", str(2 << 20), "--max-files", "20"]) == 0
    papers = {p: (s, r) for p, s, r in query(output, "SELECT paper_id, status, status_reason FROM papers")}
    assert len(papers) == 8
    assert papers["arxiv:2201.00001"] == ("ok", None)
    assert query(output, "SELECT label FROM theorems WHERE paper_id = 'arxiv:2201.00001'") == [("t",)]
    assert papers["arxiv:2201.00003"] == ("failed", "empty-member")
    assert papers["arxiv:2201.00004"] == ("failed", "submission-too-large")
    assert papers["arxiv:2201.00005"] == ("failed", "too-many-files")
    assert papers["arxiv:2201.00007"] == ("skipped", "pdf-only")
    assert papers["arxiv:2201.00006"][0] in ("ok", "failed") and papers["arxiv:2201.00008"][0] in ("ok", "failed")
    reasons = query(output, "SELECT paper_id, error_class, count(*) FROM failures GROUP BY ALL ORDER BY ALL")
    assert ("arxiv:2201.00001", "unsafe-member", 4) in reasons
    assert ("arxiv:2201.00002", "truncated-gzip", 1) in reasons
    assert any(p == "arxiv:2201.00006" and "cycle" in e for p, e, _ in reasons), reasons
    assert not any(p is None for p, _, _ in reasons)


def test_edges_written_partitioned_and_queryable(corpus):
    from retrieval.catalog import open_catalog

    files = sorted(str(p.relative_to(corpus)) for p in (corpus / "edges").rglob("*.parquet"))
    assert files and all(f.startswith("edges/source=arxiv/year=") for f in files)
    catalog = open_catalog(str(corpus))
    (broken,) = catalog.con.execute(
        "SELECT count(*) FROM edges e LEFT JOIN theorems t ON e.src_theorem_id = t.theorem_id "
        "WHERE t.theorem_id IS NULL OR e.paper_id <> t.paper_id").fetchone()
    assert broken == 0
    methods = dict(catalog.con.execute("SELECT method, sum(count) FROM edges GROUP BY method").fetchall())
    assert methods.get("ref", 0) > 0
