"""Making a run's files visible at once, after the input accounting has been checked.

A run writes everything under `OUT/_staging/` (outside the table directories that readers glob).
Only when the pipeline succeeded and every input's submissions are accounted for do the staged
files move into place; files of the same inputs that the run did not produce again (stale
partitions) are removed. A run killed before that leaves the previous output untouched, and the
next run clears the staging directory and starts over.
"""
from __future__ import annotations

import collections
import json
import os
import posixpath
from typing import Iterable

import pyarrow.parquet as pq
from apache_beam.io.filesystems import FileSystems

from schemas import FAILURES, PAPERS, THEOREMS
from transforms.write.parquet import UNATTRIBUTED

STAGING = "_staging"
TABLE_NAMES = (PAPERS.name, THEOREMS.name, FAILURES.name)


class AccountingError(RuntimeError):
    """Papers in != ok + failed + skipped for some input, or statements went missing."""


def staging_dir(output: str) -> str:
    return FileSystems.join(output, STAGING)


def list_files(root: str, suffix: str = ".parquet") -> list[str]:
    """Files under `root` (recursively) ending in `suffix`, sorted; none when `root` is absent."""
    if not FileSystems.exists(root):
        return []
    (result,) = FileSystems.match([FileSystems.join(root, "**")])
    return sorted(m.path for m in result.metadata_list if m.path.endswith(suffix))


def clear_staging(output: str) -> None:
    staging = staging_dir(output)
    if FileSystems.exists(staging):
        FileSystems.delete([staging])


def group_of_file(path: str) -> str:
    """The input group a part file belongs to: `part-<group>-<shard>.parquet` -> `<group>`."""
    name = posixpath.basename(path)
    return name[len("part-"):].rsplit("-", 1)[0]


def read_accounting(output: str) -> dict[str, dict]:
    """The staged per-input accounting records, by group."""
    records = {}
    for path in list_files(FileSystems.join(staging_dir(output), "_inputs"), ".json"):
        with FileSystems.open(path) as handle:
            record = json.loads(handle.read())
        records[record["group"]] = record
    return records


def read_columns(paths: Iterable[str], columns: list[str]):
    """The given columns of several Parquet files as one list of dicts."""
    rows = []
    for path in paths:
        with FileSystems.open(path) as handle:
            rows.extend(pq.read_table(handle, columns=columns).to_pylist())
    return rows


def _parquet_rows(path: str) -> int:
    with FileSystems.open(path) as handle:
        return pq.ParquetFile(handle).metadata.num_rows


def check_accounting(output: str, accounting: dict[str, dict]) -> dict[str, dict]:
    """Per input: submissions in, papers out by status, statements expected and written.

    Raises AccountingError when an input's submissions are not each exactly one papers row, or
    when the theorems written differ from the statements the ok papers reported.
    """
    staging = staging_dir(output)
    staged = {name: list_files(FileSystems.join(staging, name)) for name in TABLE_NAMES}
    per_group: dict[str, dict] = {}
    for group, record in accounting.items():
        per_group[group] = {"bundle": record["bundle"], "submissions": record["submissions"], "ok": 0,
                            "failed": 0, "skipped": 0, "statements_expected": 0, "statements_written": 0}
    problems = []
    for path in staged[PAPERS.name]:
        group = group_of_file(path)
        if group not in per_group:
            problems.append(f"papers file {path} belongs to no input")
            continue
        for row in read_columns([path], ["status", "n_statements"]):
            per_group[group][row["status"]] += 1
            per_group[group]["statements_expected"] += row["n_statements"] or 0
    for path in staged[THEOREMS.name]:
        group = group_of_file(path)
        if group in per_group:
            per_group[group]["statements_written"] += _parquet_rows(path)
        elif group != UNATTRIBUTED:
            problems.append(f"theorems file {path} belongs to no input")
    for group, counts in per_group.items():
        papers = counts["ok"] + counts["failed"] + counts["skipped"]
        if papers != counts["submissions"]:
            problems.append(f"{group}: {counts['submissions']} submissions in, {papers} papers out "
                            f"(ok {counts['ok']}, failed {counts['failed']}, skipped {counts['skipped']})")
        if counts["statements_expected"] != counts["statements_written"]:
            problems.append(f"{group}: ok papers report {counts['statements_expected']} statements, "
                            f"{counts['statements_written']} theorem rows written")
    if problems:
        raise AccountingError("input accounting does not add up:\n  " + "\n  ".join(problems))
    return per_group


def _ensure_parent(path: str) -> None:
    if "://" not in path:
        os.makedirs(os.path.dirname(path), exist_ok=True)


def commit(output: str, groups: Iterable[str]) -> dict[str, int]:
    """Move staged table files into place; remove this run's inputs' files it did not rewrite."""
    staging = staging_dir(output)
    groups = set(groups)
    moved = removed = 0
    for name in TABLE_NAMES:
        staged_root = FileSystems.join(staging, name)
        final_root = FileSystems.join(output, name)
        staged = {path[len(staged_root) + 1:]: path for path in list_files(staged_root)}
        for path in list_files(final_root):
            relative = path[len(final_root) + 1:]
            if group_of_file(path) in groups and relative not in staged:
                FileSystems.delete([path])
                removed += 1
        for relative, source in sorted(staged.items()):
            target = FileSystems.join(final_root, relative)
            _ensure_parent(target)
            if "://" in target and FileSystems.exists(target):
                FileSystems.delete([target])
            FileSystems.rename([source], [target])
            moved += 1
    clear_staging(output)
    return {"files_committed": moved, "stale_files_removed": removed}


def counts_by(rows: Iterable[dict], column: str) -> dict[str, int]:
    return dict(sorted(collections.Counter(str(r[column]) for r in rows).items()))
