"""`manifest.json`: what the output directory holds, counted from the tables actually on disk.

Counts (papers by status overall and per input, statements by kind, failures by reason, papers
without metadata) are read back from the committed Parquet files, so the manifest describes the
whole directory, including inputs of earlier incremental runs, whose accounting it carries over.
"""
from __future__ import annotations

import json
import platform
from importlib import metadata as importlib_metadata
from typing import Any, Optional

from apache_beam.io.filesystems import FileSystems

from schemas import FAILURES, PAPERS, THEOREMS
from transforms.write.commit import counts_by, list_files, read_columns

MANIFEST = "manifest.json"


def manifest_path(output: str) -> str:
    return FileSystems.join(output, MANIFEST)


def read_manifest(output: str) -> Optional[dict]:
    path = manifest_path(output)
    if not FileSystems.exists(path):
        return None
    with FileSystems.open(path) as handle:
        return json.loads(handle.read())


def versions() -> dict[str, str]:
    found = {"python": platform.python_version()}
    for package in ("thmforge", "apache-beam", "pyarrow", "duckdb", "pylatexenc", "sentence-transformers"):
        try:
            found[package] = importlib_metadata.version(package)
        except importlib_metadata.PackageNotFoundError:
            continue
    return found


def table_counts(output: str) -> dict[str, Any]:
    """Counts over the committed tables of `output`."""
    papers = read_columns(list_files(FileSystems.join(output, PAPERS.name)),
                          ["bundle", "status", "status_reason", "has_metadata"])
    theorems = read_columns(list_files(FileSystems.join(output, THEOREMS.name)), ["kind"])
    failures = read_columns(list_files(FileSystems.join(output, FAILURES.name)), ["stage", "error_class"])
    per_bundle: dict[str, dict[str, int]] = {}
    for row in papers:
        counts = per_bundle.setdefault(row["bundle"] or "", {"ok": 0, "failed": 0, "skipped": 0})
        counts[row["status"]] += 1
    return {
        "papers": len(papers),
        "statements": len(theorems),
        "by_status": {s: sum(1 for r in papers if r["status"] == s) for s in ("ok", "failed", "skipped")},
        "by_bundle": dict(sorted(per_bundle.items())),
        "by_kind": counts_by(theorems, "kind"),
        "skip_reasons": counts_by([r for r in papers if r["status"] == "skipped"], "status_reason"),
        "fail_reasons": counts_by([r for r in papers if r["status"] == "failed"], "status_reason"),
        "failures_by_reason": counts_by(failures, "error_class"),
        "failures_by_stage": counts_by(failures, "stage"),
        "papers_without_metadata": sum(1 for r in papers if not r["has_metadata"]),
    }


def build_manifest(output: str, *, inputs: list[str], accounting: dict[str, dict], options: dict,
                   durations: dict[str, float], describer: Optional[dict], embedding: Optional[dict],
                   commit_stats: dict[str, int], previous: Optional[dict]) -> dict:
    """The manifest of `output` after this run (earlier runs' per-input accounting kept)."""
    all_inputs = dict((previous or {}).get("accounting", {}))
    all_inputs.update(accounting)
    return {
        "inputs": inputs,
        "accounting": dict(sorted(all_inputs.items())),
        "counts": table_counts(output),
        "options": options,
        "versions": versions(),
        "durations_s": {k: round(v, 3) for k, v in durations.items()},
        "describer": describer,
        "embedding": embedding,
        "commit": commit_stats,
    }


def write_manifest(output: str, manifest: dict) -> None:
    from transforms.write.parquet import write_file

    write_file(manifest_path(output), (json.dumps(manifest, indent=2, sort_keys=True) + "\n").encode())
