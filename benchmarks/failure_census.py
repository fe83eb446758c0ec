"""Failure census: what the real pipeline records over ALL of ../shared/corpora, counted by reason.

  .venv/bin/python benchmarks/failure_census.py [--corpora ../shared/corpora] [--keep DIR]

Runs `thmforge build-corpus` (FnApiRunner, no embeddings) once over the arXiv bundles with their
metadata snapshot, and once with `--source latex-project` over every book and paper project (each
folder one submission). Then it reads the tables on disk with DuckDB and prints, per run: papers
by status and reason, the accounting check (papers in = ok + failed + skipped, per bundle) and the
failure rows by (stage, error class, fatal), with one example location each.
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import pathlib
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import duckdb  # noqa: E402

from runners.cli import main as thmforge  # noqa: E402
from schemas import FAILURES, PAPERS, THEOREMS  # noqa: E402

DEFAULT_CORPORA = pathlib.Path(__file__).resolve().parents[2] / "shared" / "corpora"


def runs(corpora: pathlib.Path) -> list[tuple[str, list[str]]]:
    """(name, build-corpus arguments) of each run over the corpora."""
    found = []
    bundles = sorted(glob.glob(str(corpora / "arxiv" / "arXiv_src_*.tar")))
    if bundles:
        args = ["--input", *bundles]
        metadata = corpora / "arxiv" / "arxiv-metadata-oai-snapshot.json"
        if metadata.is_file():
            args += ["--metadata", str(metadata)]
        found.append(("arxiv", args))
    projects = sorted(str(p) for group in ("books", "papers") for p in (corpora / group).glob("*") if p.is_dir())
    if projects:
        found.append(("latex-project", ["--source", "latex-project", "--input", *projects]))
    return found


def connect(out: str) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    for table in (PAPERS, THEOREMS, FAILURES):
        con.execute(table.view_sql(out))
    return con


def print_table(title: str, header: tuple[str, ...], rows: list[tuple]) -> None:
    print(f"\n{title}")
    cells = [tuple("" if v is None else str(v) for v in row) for row in [header, *rows]]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    for n, row in enumerate(cells):
        print("  " + "  ".join(value.ljust(width) for value, width in zip(row, widths)).rstrip())
        if n == 0:
            print("  " + "  ".join("-" * width for width in widths))


def report(name: str, out: str, seconds: float) -> dict:
    con = connect(out)
    manifest = json.load(open(os.path.join(out, "manifest.json")))
    status = con.execute("SELECT status, coalesce(status_reason, '') AS reason, count(*) FROM papers "
                         "GROUP BY ALL ORDER BY 1, 3 DESC, 2").fetchall()
    per_paper = con.execute("SELECT paper_id, status, coalesce(status_reason, ''), n_statements, encoding, "
                            "(SELECT count(*) FROM failures f WHERE f.paper_id = p.paper_id) "
                            "FROM papers p ORDER BY paper_id").fetchall()
    reasons = con.execute("SELECT stage, error_class, fatal, count(*) AS n, count(DISTINCT paper_id), "
                          "min(location) FROM failures GROUP BY stage, error_class, fatal "
                          "ORDER BY n DESC, stage, error_class").fetchall()
    accounting = [(group, r["submissions"], r["ok"], r["failed"], r["skipped"],
                   "yes" if r["submissions"] == r["ok"] + r["failed"] + r["skipped"] else "NO")
                  for group, r in sorted(manifest["accounting"].items())]
    statements = con.execute("SELECT count(*) FROM theorems").fetchone()[0]
    print(f"\n=== {name}: {len(per_paper)} papers, {statements} statements, "
          f"{sum(r[3] for r in reasons)} failure rows, {seconds:.1f} s")
    print_table("papers by status", ("status", "reason", "papers"), status)
    print_table("accounting per input", ("input", "in", "ok", "failed", "skipped", "adds up"), accounting)
    print_table("per paper", ("paper", "status", "reason", "statements", "encoding", "failure rows"), per_paper)
    print_table("failure rows by reason", ("stage", "error_class", "fatal", "rows", "papers", "example location"),
                [(*r[:5], (r[5] or "")[-70:]) for r in reasons])
    return {"papers": len(per_paper), "statements": statements, "adds_up": all(a[-1] == "yes" for a in accounting)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpora", type=pathlib.Path, default=DEFAULT_CORPORA)
    parser.add_argument("--keep", metavar="DIR", help="write the outputs here instead of a temporary folder")
    args = parser.parse_args()
    if not args.corpora.is_dir():
        print(f"no corpora at {args.corpora}", file=sys.stderr)
        return 2
    root = args.keep or tempfile.mkdtemp(prefix="failure-census-")
    totals = []
    for name, run_args in runs(args.corpora):
        out = os.path.join(root, name)
        started = time.monotonic()
        code = thmforge(["build-corpus", *run_args, "--output", out, "--embed-model", "none", "--no-progress"])
        if code != 0:
            print(f"\n=== {name}: build-corpus exited with {code}")
            totals.append({"adds_up": False})
            continue
        totals.append(report(name, out, time.monotonic() - started))
    print(f"\noutputs in {root}")
    return 0 if all(t["adds_up"] for t in totals) else 1


if __name__ == "__main__":
    sys.exit(main())
