"""`manifest.json`: what the output holds, and the commit switch.

The manifest names the files of the committed generation (`files`: table -> relative paths) and
its counts (papers by status overall and per input, statements by kind, failures by reason,
papers without metadata), read from exactly those files. It is replaced in one atomic write, so
the files a reader lists from it are always one complete generation; per-input accounting of
earlier incremental runs is carried over.
"""
from __future__ import annotations

import collections
import json
import platform
from importlib import metadata as importlib_metadata
from typing import Any, Callable, Optional

from schemas import FAILURES, PAPERS, THEOREMS
from transforms.write import files
from transforms.write.commit import TABLE_NAMES, finish_commit, read_plan, value_counts, write_plan

MANIFEST = "manifest.json"


def manifest_path(output: str) -> str:
    return files.join(output, MANIFEST)


def read_manifest(output: str) -> Optional[dict]:
    path = manifest_path(output)
    if not files.exists(path):
        return None
    return json.loads(files.read_bytes(path))


def committed_relative(output: str, manifest: Optional[dict]) -> dict[str, list[str]]:
    """Table -> relative paths of the committed generation; outputs written before manifests named
    their files are listed from the table directories."""
    if manifest and "files" in manifest:
        return {name: list(manifest["files"].get(name, [])) for name in TABLE_NAMES}
    return {name: [files.relative(p, output) for p in files.list_files(files.join(output, name), ".parquet")]
            for name in TABLE_NAMES}


def committed_files(output: str, table: str, manifest: Optional[dict] = None) -> list[str]:
    """The committed files of one table (full paths): what every thmforge reader reads."""
    if manifest is None:
        manifest = read_manifest(output)
    return [files.join(output, f) for f in committed_relative(output, manifest)[table]]


def versions() -> dict[str, str]:
    found = {"python": platform.python_version()}
    for package in ("thmforge", "apache-beam", "pyarrow", "duckdb", "pylatexenc", "sentence-transformers"):
        try:
            found[package] = importlib_metadata.version(package)
        except importlib_metadata.PackageNotFoundError:
            continue
    return found


def _tally(counts: collections.Counter, column: int, where=lambda key: True) -> dict[str, int]:
    """`counts` (of `value_counts`) summed by one column's value as text, over the keys `where` keeps."""
    tally: collections.Counter = collections.Counter()
    for key, count in counts.items():
        if where(key):
            tally[str(key[column])] += count
    return dict(sorted(tally.items()))


def table_counts(paths: dict[str, list[str]]) -> dict[str, Any]:
    """Counts over the given files of each table (counted per file: memory follows no table's size)."""
    papers = value_counts(paths[PAPERS.name], ["bundle", "status", "status_reason", "has_metadata"])
    theorems = value_counts(paths[THEOREMS.name], ["kind"])
    failures = value_counts(paths[FAILURES.name], ["stage", "error_class"])
    per_bundle: dict[str, dict[str, int]] = {}
    for (bundle, status, _, _), count in papers.items():
        per_bundle.setdefault(bundle or "", {"ok": 0, "failed": 0, "skipped": 0})[status] += count
    by_status = _tally(papers, 1)
    return {
        "papers": sum(papers.values()),
        "statements": sum(theorems.values()),
        "by_status": {s: by_status.get(s, 0) for s in ("ok", "failed", "skipped")},
        "by_bundle": dict(sorted(per_bundle.items())),
        "by_kind": _tally(theorems, 0),
        "skip_reasons": _tally(papers, 2, lambda key: key[1] == "skipped"),
        "fail_reasons": _tally(papers, 2, lambda key: key[1] == "failed"),
        "failures_by_reason": _tally(failures, 1),
        "failures_by_stage": _tally(failures, 0),
        "papers_without_metadata": sum(count for key, count in papers.items() if not key[3]),
    }


def build_manifest(*, plan: dict, locate: Callable[[str], str], inputs: list[str], accounting: dict[str, dict],
                   options: dict, durations: dict[str, float], describer: Optional[dict],
                   embedding: Optional[dict], resume: dict, previous: Optional[dict]) -> dict:
    """The manifest of the planned generation (earlier runs' per-input accounting kept); counts are
    read from the generation's files wherever they are now (`locate`)."""
    all_inputs = dict((previous or {}).get("accounting", {}))
    all_inputs.update(accounting)
    return {
        "inputs": inputs,
        "accounting": dict(sorted(all_inputs.items())),
        "counts": table_counts({name: [locate(f) for f in paths] for name, paths in plan["files"].items()}),
        "files": plan["files"],
        "options": options,
        "versions": versions(),
        "durations_s": {k: round(v, 3) for k, v in durations.items()},
        "describer": describer,
        "embedding": embedding,
        "commit": plan["stats"],
        "resume": resume,
        "link": (previous or {}).get("link"),   # `thmforge link`'s record outlives corpus runs
    }


def write_manifest(output: str, manifest: dict) -> None:
    """Replace `manifest.json` atomically: this write is what switches readers to a new generation."""
    files.replace_bytes(manifest_path(output), (json.dumps(manifest, indent=2, sort_keys=True) + "\n").encode())


def commit_generation(output: str, plan: dict, manifest: dict) -> None:
    """Write the plan with its manifest, then carry it out (`commit.finish_commit`)."""
    plan = {**plan, "manifest": manifest}
    write_plan(output, plan)
    finish_commit(output, plan, lambda record: write_manifest(output, record))


def finish_interrupted_commit(output: str, resume: Optional[dict] = None) -> Optional[dict]:
    """Finish a commit whose plan was written by a killed run; its manifest (with this run's
    `resume` record, when given), or None without a plan."""
    plan = read_plan(output)
    if plan is None:
        return None
    if resume is not None:
        plan["manifest"]["resume"] = resume
    finish_commit(output, plan, lambda record: write_manifest(output, record))
    return plan["manifest"]
