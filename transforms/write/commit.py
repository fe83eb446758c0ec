"""Staged writes, per-input completion markers, and a commit that is atomic for readers.

A run writes under `OUT/_staging/` (outside the table directories):
- `_run.json`: the fingerprint of the run (options and inputs) the staging belongs to; a run with
  another fingerprint first finishes a commit whose plan is written (a decided commit of any
  command is carried out, never discarded), then starts from an empty staging directory;
- `<table>/.../part-<group>-<shard>.parquet`: the rows of each input group;
- `_inputs/<group>.json`: how many submissions the input holds (written by the read stage);
- `_done/<group>.json`: the completion marker, written once the input's files are staged and its
  accounting adds up. A rerun of an interrupted run skips every input with a marker (datatrove's
  model: a finished input is never redone) and redoes only the others;
- `_commit.json`: the commit plan, written before any file moves;
- `_spill/`: rows on their way to their part file (`transforms.write.parquet`), removed once the
  files are written, and by a rerun.

The commit makes a new generation visible with one atomic step. Committed files are
content-addressed (`part-<group>-<shard>-<sha256 prefix>.parquet`), so a new file never
overwrites a committed one, and the same rows always get the same name and bytes. The plan
(moves, the complete file list of the new generation and the manifest) is written first; then the
staged files move next to the old ones, `manifest.json` (which names the files of the
generation) is replaced in one write (a rename locally, a single object put on object stores),
and only then are the old generation's files removed. Readers that list files from the manifest
see the old corpus or the new one, never a mix. A commit killed halfway is finished by the next
run from its plan.
"""
from __future__ import annotations

import collections
import json
import posixpath
import re
from typing import Any, Callable, Iterable, Iterator, Mapping, Optional

import pyarrow.parquet as pq
from apache_beam.io.filesystems import FileSystems

from schemas import EDGES, FAILURES, PAPERS, THEOREMS
from transforms.write import files
from transforms.write.files import list_files, read_bytes, replace_bytes
from transforms.write.parquet import SPILL, SPILL_ROWS

STAGING = "_staging"
ACCOUNTING = "_inputs"
DONE = "_done"
RUN = "_run.json"
PLAN = "_commit.json"
DUPLICATE = "duplicate"          # failures' error_class of a copy of a paper kept elsewhere
TABLE_NAMES = (PAPERS.name, THEOREMS.name, FAILURES.name, EDGES.name)


class AccountingError(RuntimeError):
    """Papers in != ok + failed + skipped for some input, or statements went missing."""


def staging_dir(output: str) -> str:
    return files.join(output, STAGING)


def group_of_file(path: str) -> str:
    """The input group a part file belongs to: `part-<group>-<shard>[-<digest>].parquet` -> `<group>`."""
    return posixpath.basename(path)[len("part-"):].split("-", 1)[0]


def _read_json(path: str) -> Optional[dict]:
    return json.loads(read_bytes(path)) if FileSystems.exists(path) else None


def _write_json(path: str, record: Any) -> None:
    replace_bytes(path, (json.dumps(record, indent=2, sort_keys=True) + "\n").encode())


# ------------------------------------------------------------------------------ staging, markers

def open_staging(output: str, fingerprint: dict) -> None:
    """Keep the staging directory of an interrupted run with this fingerprint; else start empty."""
    if resumes(output, fingerprint):
        return
    files.delete_tree(staging_dir(output))
    _write_json(files.join(staging_dir(output), RUN), fingerprint)


def resumes(output: str, fingerprint: dict) -> bool:
    """Whether the staging directory belongs to a run with this fingerprint."""
    return _read_json(files.join(staging_dir(output), RUN)) == json.loads(json.dumps(fingerprint))


def finished_inputs(output: str) -> dict[str, dict]:
    """The accounting of every input whose completion marker exists, by group."""
    done = files.join(staging_dir(output), DONE)
    return {posixpath.basename(p)[:-len(".json")]: json.loads(read_bytes(p)) for p in list_files(done, ".json")}


def discard_unfinished(output: str, groups: Iterable[str]) -> int:
    """Remove what an interrupted attempt staged for `groups` (files and accounting); returns the
    number of those inputs that had been started."""
    groups = set(groups)
    staging = staging_dir(output)
    doomed = [p for name in TABLE_NAMES for p in list_files(files.join(staging, name), ".parquet")
              if group_of_file(p) in groups]
    started = {group_of_file(p) for p in doomed}
    for path in list_files(files.join(staging, ACCOUNTING), ".json"):
        group = posixpath.basename(path)[:-len(".json")]
        if group in groups:
            doomed.append(path)
            started.add(group)
    files.delete(doomed)
    files.delete_tree(files.join(staging, SPILL))       # rows an interrupted attempt had not written yet
    return len(started)


def mark_finished(output: str, per_group: Mapping[str, dict]) -> None:
    for group, counts in per_group.items():
        _write_json(files.join(staging_dir(output), DONE, f"{group}.json"), counts)


def read_accounting(output: str, groups: Iterable[str]) -> dict[str, dict]:
    """The staged accounting records of `groups`, keyed by the storage's name of their input."""
    wanted = set(groups)
    records = {}
    for path in list_files(files.join(staging_dir(output), ACCOUNTING), ".json"):
        record = json.loads(read_bytes(path))
        group = files.input_group(record["bundle"])
        if group in wanted:
            records[group] = {**record, "group": group}
    return records


# ------------------------------------------------------------------------------------- reading

def iter_columns(paths: Iterable[str], columns: list[str], batch_rows: int = SPILL_ROWS) -> Iterator[dict]:
    """The given columns of several Parquet files, one dict a row, read `batch_rows` rows at a time:
    a step that counts or filters them holds a batch, not a table."""
    for path in paths:
        with FileSystems.open(path) as handle:
            for batch in pq.ParquetFile(handle).iter_batches(batch_size=batch_rows, columns=columns):
                yield from batch.to_pylist()


def read_columns(paths: Iterable[str], columns: list[str]) -> list[dict]:
    """The given columns of several Parquet files as one list of dicts."""
    return list(iter_columns(paths, columns))


def _parquet_rows(path: str) -> int:
    with FileSystems.open(path) as handle:
        return pq.ParquetFile(handle).metadata.num_rows


def value_counts(paths: Iterable[str], columns: list[str]) -> collections.Counter:
    """Rows per combination of the columns' values, over several files: counted in Arrow one file
    at a time, so a table of millions of rows never becomes Python rows."""
    counts: collections.Counter = collections.Counter()
    for path in paths:
        with FileSystems.open(path) as handle:
            table = pq.read_table(handle, columns=columns)
        if table.num_rows:
            for row in table.group_by(columns, use_threads=False).aggregate([([], "count_all")]).to_pylist():
                counts[tuple(row[c] for c in columns)] += row["count_all"]
    return counts


# ---------------------------------------------------------------------------------- accounting

def check_accounting(output: str, accounting: dict[str, dict]) -> dict[str, dict]:
    """Per input of `accounting`: submissions in, papers out by status, duplicate copies (each a
    `duplicate` failure row), statements expected and written.

    Only staged files of these inputs are read (inputs finished earlier have their own counts).
    Raises AccountingError when an input's submissions are not each one papers row or one duplicate, or
    when the theorems written differ from the statements the ok papers reported.
    """
    staging = staging_dir(output)
    per_group: dict[str, dict] = {
        group: {"bundle": record["bundle"], "submissions": record["submissions"], "ok": 0, "failed": 0,
                "skipped": 0, "duplicates": 0, "statements_expected": 0, "statements_written": 0}
        for group, record in accounting.items()}
    for path in list_files(files.join(staging, PAPERS.name), ".parquet"):
        if group_of_file(path) in per_group:
            counts = per_group[group_of_file(path)]
            for row in iter_columns([path], ["status", "n_statements"]):
                counts[row["status"]] += 1
                counts["statements_expected"] += row["n_statements"] or 0
    for path in list_files(files.join(staging, FAILURES.name), ".parquet"):
        if group_of_file(path) in per_group:
            per_group[group_of_file(path)]["duplicates"] += sum(
                1 for row in iter_columns([path], ["error_class"]) if row["error_class"] == DUPLICATE)
    for path in list_files(files.join(staging, THEOREMS.name), ".parquet"):
        if group_of_file(path) in per_group:
            per_group[group_of_file(path)]["statements_written"] += _parquet_rows(path)
    problems = []
    for group, counts in per_group.items():
        papers = counts["ok"] + counts["failed"] + counts["skipped"]
        if papers + counts["duplicates"] != counts["submissions"]:
            problems.append(f"{group}: {counts['submissions']} submissions in, {papers} papers out "
                            f"(ok {counts['ok']}, failed {counts['failed']}, skipped {counts['skipped']}) "
                            f"and {counts['duplicates']} duplicate copies")
        if counts["statements_expected"] != counts["statements_written"]:
            problems.append(f"{group}: ok papers report {counts['statements_expected']} statements, "
                            f"{counts['statements_written']} theorem rows written")
    if problems:
        raise AccountingError("input accounting does not add up:\n  " + "\n  ".join(problems))
    return per_group


# -------------------------------------------------------------------------------------- commit

def committed_name(relative: str, digest: str) -> str:
    """`.../part-g-00000.parquet` -> `.../part-g-00000-<16 hex of the sha256 digest>.parquet`
    (content-addressed)."""
    return f"{relative[:-len('.parquet')]}-{digest[:16]}.parquet"


def staged_name(committed: str) -> str:
    """The inverse of `committed_name`: `.../part-g-00000-<16 hex>.parquet` -> `.../part-g-00000.parquet`."""
    return re.sub(r"-[0-9a-f]{16}\.parquet$", ".parquet", committed)


def plan_commit(output: str, groups: Iterable[str], current: Mapping[str, list[str]]) -> dict:
    """The moves and the complete file list (table -> relative paths) of the next generation.

    `current` is the committed generation's file list. Files of `groups` (and unattributed rows,
    when staged) are replaced by the staged ones; files of other inputs stay as they are.
    """
    staging = staging_dir(output)
    moves, replaced = [], set(groups)
    for name in TABLE_NAMES:
        for path in list_files(files.join(staging, name), ".parquet"):
            relative = files.relative(path, staging)
            moves.append([relative, committed_name(relative, files.sha256_hex(path))])
            replaced.add(group_of_file(path))
    new_files = {name: sorted([f for f in current.get(name, []) if group_of_file(f) not in replaced]
                              + [final for _, final in moves if final.startswith(name + "/")])
                 for name in TABLE_NAMES}
    before = {f for paths in current.values() for f in paths}
    after = {f for paths in new_files.values() for f in paths}
    stats = {"files_committed": len(after - before), "files_unchanged": len(after & before),
             "stale_files_removed": len(before - after)}
    return {"moves": moves, "files": new_files, "stats": stats}


def plan_locator(output: str, plan: dict) -> Callable[[str], str]:
    """Where a file of the planned generation can be read before the commit moves it."""
    staged = {final: files.join(staging_dir(output), relative) for relative, final in plan["moves"]}
    return lambda relative: staged.get(relative) or files.join(output, relative)


def write_plan(output: str, plan: dict) -> None:
    _write_json(files.join(staging_dir(output), PLAN), plan)


def read_plan(output: str) -> Optional[dict]:
    return _read_json(files.join(staging_dir(output), PLAN))


def finish_commit(output: str, plan: dict, publish: Callable[[dict], None]) -> None:
    """Carry out a written plan (again, if a previous attempt was killed): move the staged files,
    `publish` the plan's manifest (the atomic switch), then remove what the generation dropped."""
    staging = staging_dir(output)
    for relative, final in plan["moves"]:
        source, target = files.join(staging, relative), files.join(output, final)
        if FileSystems.exists(target):       # same name, same bytes: committed before or moved already
            files.delete([source])
        elif FileSystems.exists(source):
            files.move(source, target)
        else:
            raise AccountingError(f"commit plan names {relative}, which is neither staged nor committed")
    publish(plan["manifest"])
    keep = {f for paths in plan["files"].values() for f in paths}
    files.delete([p for name in TABLE_NAMES for p in list_files(files.join(output, name), ".parquet")
                  if files.relative(p, output) not in keep])
    # The plan and the run's fingerprint go last: a run killed while the staging is removed leaves
    # them, and the rerun finishes this commit again (never completion markers without files) and,
    # being the same run, returns its manifest instead of redoing every input.
    last = {files.join(staging, PLAN), files.join(staging, RUN)}
    files.delete([p for p in list_files(staging) if p not in last])
    files.delete_tree(staging)
