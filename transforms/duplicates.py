"""One copy of each paper per corpus: across the inputs of a run and across incremental runs.

Within one input `sources.base.unique_refs` keeps one ref per paper before anything is fetched.
Copies in different inputs (two bundles of one run, or a bundle of a later run holding a paper the
corpus already has) meet only here, on the launcher, after the pipeline and before the commit is
planned, over the papers of the next generation: the committed files of inputs this run does not
redo, and the staged files of this run's inputs.

The rule: a copy that extracted ok wins over one that did not (a newer version that failed or was
skipped never replaces a working older one); then the newest version (`v3` over `v2` over none);
of equal versions, the copy that entered the corpus first (one already committed, else the one of
the input listed first). Every other copy leaves the papers, theorems, edges and failures files
of its input (its earlier `duplicate` rows stay; a copy that failed keeps its failure rows, which
say why) and becomes one `duplicate` failure row there naming the kept copy, so the input's
accounting still adds up: submissions = ok + failed + skipped + duplicates. A committed
input that loses a paper is rewritten into the staging directory, so the commit replaces its files
like any rerun input's, atomically for readers.

Edges between papers (`thmforge link`'s restates and uses edges, kept in link groups) name
theorem ids, and a replaced copy or a rebuilt input can take theorem ids away: `drop_stale_link_edges`
rewrites the link groups that name one, so no committed edge names a statement that is gone.
"""
from __future__ import annotations

import array
import dataclasses
import tempfile
from typing import Callable, Iterable, Iterator, Mapping, Optional

import numpy as np

from schemas import EDGES, FAILURES, PAPERS, THEOREMS
from schemas.table import Table
from transforms.link import LINK_GROUP_PREFIX
from transforms.sources.base import version_rank
from transforms.write import commit as staging
from transforms.write.commit import DUPLICATE
from transforms.write import files
from transforms.write.parquet import file_papers, paper_order, relative_file_path, write_parquet


@dataclasses.dataclass(frozen=True)
class Copy:
    """One `papers` row of a paper, and where it came from."""

    paper_id: str
    version: Optional[str]
    group: str
    bundle: str
    member: Optional[str]
    status: str
    status_reason: Optional[str]
    n_statements: int
    entered: int          # 0: committed before this run; 1 + position of its input in this run

    @property
    def location(self) -> str:
        return f"{self.bundle}!{self.member}" if self.member else self.bundle


def settle(copies: Iterable[Copy]) -> list[tuple[Copy, Copy]]:
    """(dropped, kept) for every copy that is not its paper's winner, by the module's rule."""
    by_paper: dict[str, list[Copy]] = {}
    for copy in copies:
        by_paper.setdefault(copy.paper_id, []).append(copy)
    settled = []
    for paper_id in sorted(by_paper):
        ranked = sorted(by_paper[paper_id],
                        key=lambda c: (c.status != "ok", -version_rank(c.version), c.entered, c.group))
        settled += [(dropped, ranked[0]) for dropped in ranked[1:]]
    return settled


def duplicate_row(dropped: Copy, kept: Copy) -> dict:
    if dropped.status != "ok" and kept.status == "ok" and version_rank(dropped.version) > version_rank(kept.version):
        why = (f"this newer copy {dropped.status} ({dropped.status_reason or 'no reason recorded'}); "
               "the newest version that extracted ok is kept")
    else:
        why = "newest version, else the copy that entered the corpus first"
    return {"paper_id": dropped.paper_id, "theorem_id": None, "stage": "read", "error_class": DUPLICATE,
            "message": f"another copy kept: {kept.location} ({why})", "location": dropped.location, "fatal": False,
            "bundle": dropped.bundle}


@dataclasses.dataclass
class _Tally:
    rows_read: int = 0
    rows_kept: int = 0
    changed: bool = False


def _kept_papers(papers: Iterator[list[dict]], keep: Callable[[list[dict]], list[dict]],
                 added: Mapping[Optional[str], list[dict]], tally: _Tally) -> Iterator[list[dict]]:
    """A file's papers (in `paper_order`) as `keep` leaves them, with the `added` rows of each
    paper after its own (those not already there), papers only `added` has merged in order."""
    pending = sorted(added, key=paper_order)
    for rows in papers:
        paper_id = rows[0]["paper_id"]
        while pending and paper_order(pending[0]) < paper_order(paper_id):
            yield from _counted(added[pending.pop(0)], True, tally)
        kept = keep(rows)
        if pending and pending[0] == paper_id:
            kept += [r for r in added[pending.pop(0)] if r not in kept]
        tally.rows_read += len(rows)
        tally.changed |= kept != rows
        yield from _counted(kept, False, tally)
    for paper_id in pending:
        yield from _counted(added[paper_id], True, tally)


def _counted(rows: list[dict], only_added: bool, tally: _Tally) -> Iterator[list[dict]]:
    tally.rows_kept += len(rows)
    tally.changed |= only_added and bool(rows)
    if rows:
        yield rows


def _rewrite_file(table: Table, source: str, target: str, keep: Callable[[list[dict]], list[dict]],
                  added: Mapping[Optional[str], list[dict]], copy_unchanged: bool) -> None:
    """Write `target` from `source` one paper at a time (never the whole file in memory): the
    rows `keep` leaves of each paper plus the `added` ones, the bytes `parquet_bytes` gives for
    them. An unchanged file is copied as it is when `copy_unchanged`, else left alone; a file
    left with no rows is deleted."""
    tally = _Tally()
    with tempfile.NamedTemporaryFile(suffix=".parquet") as local:
        write_parquet(table, _kept_papers(file_papers(source), keep, added, tally), local)
        local.flush()
        if not tally.changed and tally.rows_read:
            if copy_unchanged:                      # untouched: the same bytes, the same name
                files.copy_file(source, target)
        elif tally.rows_kept:
            files.copy_file(local.name, target)
        elif tally.changed or copy_unchanged:
            files.delete([target])


def _rewrite_group(output: str, sources: Mapping[str, list[str]], tables: Mapping[str, Table],
                   dropped: Mapping[str, dict], failed: set[str], staged: bool) -> None:
    """Write one input's files without the `dropped` papers' rows (the failure rows of those in
    `failed`, copies that did not extract ok, stay), plus their duplicate rows.

    `sources` maps a table to the group's files (relative to the staging directory when `staged`,
    else committed names). The papers file is written last: a run killed halfway finds the paper
    still there and redoes the whole rewrite, which is idempotent.
    """
    root = staging.staging_dir(output) if staged else output
    added: dict[str, dict[Optional[str], list[dict]]] = {}
    for row in dropped.values():
        added.setdefault(relative_file_path(FAILURES, row, 1), {}).setdefault(row["paper_id"], []).append(row)
    for name in (EDGES.name, FAILURES.name, tables["theorems"].name, PAPERS.name):
        targets = {relative: (relative if staged else staging.staged_name(relative)) for relative in sources.get(name, [])}
        if name == FAILURES.name:
            targets.update({relative: relative for relative in added if relative not in targets.values()})

        def keep(rows: list[dict], failures: bool = name == FAILURES.name) -> list[dict]:
            if rows[0]["paper_id"] not in dropped:
                return rows
            return [r for r in rows if failures and (r["error_class"] == DUPLICATE or r["paper_id"] in failed)]

        for relative, target in sorted(targets.items()):
            _rewrite_file(tables[name], files.join(root, relative), files.join(staging.staging_dir(output), target),
                          keep, added.get(target, {}) if name == FAILURES.name else {}, copy_unchanged=not staged)


def repeated_id_hashes(paths: Iterable[str]) -> set[int]:
    """The hashes of the paper ids that more than one row of the papers files `paths` holds.

    The next generation's ids are held as 8-byte hashes, not as rows: only the copies of repeated
    ids become objects. Two ids that share a hash only make a copy a candidate; `settle` compares ids.
    """
    hashes = array.array("q", (hash(row["paper_id"]) for row in staging.iter_columns(paths, ["paper_id"])))
    values, counts = np.unique(np.frombuffer(hashes, dtype=np.int64), return_counts=True)
    return set(values[counts > 1].tolist())


def keep_one_copy(output: str, run_groups: list[str], committed: Mapping[str, list[str]],
                  theorems: Table, previous_accounting: Mapping[str, dict]) -> dict[str, dict]:
    """Settle the duplicates of the next generation (see the module docstring) in the staged and
    committed files; returns the accounting records of committed inputs that lost a paper."""
    order = {group: position + 1 for position, group in enumerate(run_groups)}
    staged_root = staging.staging_dir(output)
    sources: dict[str, dict[str, list[str]]] = {}
    for name in staging.TABLE_NAMES:
        for path in files.list_files(files.join(staged_root, name), ".parquet"):
            if staging.group_of_file(path) in order:
                sources.setdefault(staging.group_of_file(path), {}).setdefault(name, []).append(
                    files.relative(path, staged_root))
        for relative in committed.get(name, []):
            if staging.group_of_file(relative) not in order:
                sources.setdefault(staging.group_of_file(relative), {}).setdefault(name, []).append(relative)
    papers_files = {group: [files.join(staged_root if group in order else output, f)
                            for f in tables.get(PAPERS.name, [])] for group, tables in sorted(sources.items())}
    repeated = repeated_id_hashes(path for paths in papers_files.values() for path in paths)
    copies = []
    for group, paths in papers_files.items():
        for row in staging.iter_columns(paths if repeated else [], ["paper_id", "version", "bundle", "member",
                                                                    "status", "status_reason", "n_statements"]):
            if hash(row["paper_id"]) in repeated:
                copies.append(Copy(row["paper_id"], row["version"], group, row["bundle"], row["member"],
                                   row["status"], row["status_reason"], row["n_statements"] or 0, order.get(group, 0)))
    losers: dict[str, dict[str, tuple[Copy, dict]]] = {}
    for dropped, kept in settle(copies):
        if dropped.group == kept.group:     # two rows of one input (a corpus older than `unique_refs`): rows
            continue                        # are removed by paper id, which would take the kept copy too
        losers.setdefault(dropped.group, {})[dropped.paper_id] = (dropped, duplicate_row(dropped, kept))
    tables = {PAPERS.name: PAPERS, theorems.name: theorems, FAILURES.name: FAILURES, EDGES.name: EDGES}
    accounting = {}
    for group, lost in sorted(losers.items()):
        _rewrite_group(output, sources[group], tables, {p: row for p, (_, row) in lost.items()},
                       {p for p, (dropped, _) in lost.items() if dropped.status != "ok"}, group in order)
        if group not in order and group in previous_accounting:
            record = dict(previous_accounting[group])
            for dropped, _ in lost.values():
                record[dropped.status] -= 1
                record["duplicates"] = record.get("duplicates", 0) + 1
                for key in ("statements_expected", "statements_written"):
                    record[key] = record.get(key, 0) - (dropped.n_statements if dropped.status == "ok" else 0)
            accounting[group] = record
    return accounting


def _theorem_ids(paths: Iterable[str]) -> set[str]:
    return {row["theorem_id"] for row in staging.iter_columns(paths, ["theorem_id"])}


def _gone_theorem_ids(output: str, replaced: set[str], committed_theorems: list[str],
                      staged_theorems: list[str]) -> set[str]:
    """The theorem ids of the `replaced` inputs' committed files that no staged file holds. Compared
    one input at a time (a paper may move to another input, so what one input lost is then looked
    for in every staged file): memory holds one input's ids and the candidates, not the run's ids."""
    staged_by_group: dict[str, list[str]] = {}
    for path in staged_theorems:
        staged_by_group.setdefault(staging.group_of_file(path), []).append(path)
    committed_by_group: dict[str, list[str]] = {}
    for relative in committed_theorems:
        if staging.group_of_file(relative) in replaced:
            committed_by_group.setdefault(staging.group_of_file(relative), []).append(files.join(output, relative))
    candidates: set[str] = set()
    for group, paths in sorted(committed_by_group.items()):
        candidates |= _theorem_ids(paths) - _theorem_ids(staged_by_group.get(group, []))
    for row in staging.iter_columns(staged_theorems if candidates else [], ["theorem_id"]):
        candidates.discard(row["theorem_id"])
    return candidates


def drop_stale_link_edges(output: str, replaced: Iterable[str], committed: Mapping[str, list[str]]) -> list[str]:
    """Stage the link groups whose edges name a theorem id of the `replaced` inputs' committed files
    that their staged files no longer hold, without those edges; returns the link groups rewritten
    (the commit replaces them, all their files, even when no edge is left)."""
    staged_theorems = files.list_files(files.join(staging.staging_dir(output), THEOREMS.name), ".parquet")
    replaced = set(replaced) | {staging.group_of_file(path) for path in staged_theorems}
    link_files = [f for f in committed.get(EDGES.name, [])
                  if staging.group_of_file(f).startswith(LINK_GROUP_PREFIX) and staging.group_of_file(f) not in replaced]
    if not link_files:
        return []
    gone = _gone_theorem_ids(output, replaced, committed.get(THEOREMS.name, []), staged_theorems)
    if not gone:
        return []
    by_group: dict[str, list[str]] = {}
    for relative in link_files:
        by_group.setdefault(staging.group_of_file(relative), []).append(relative)

    def keep(rows: list[dict]) -> list[dict]:
        return [r for r in rows if r["src_theorem_id"] not in gone and r["dst_theorem_id"] not in gone]

    rewritten = []
    for group, relatives in sorted(by_group.items()):
        paths = {relative: files.join(output, relative) for relative in sorted(relatives)}
        if all(keep(rows) == rows for path in paths.values() for rows in file_papers(path)):
            continue
        for relative, path in paths.items():
            _rewrite_file(EDGES, path, files.join(staging.staging_dir(output), staging.staged_name(relative)), keep, {},
                          copy_unchanged=True)
        rewritten.append(group)
    return rewritten
