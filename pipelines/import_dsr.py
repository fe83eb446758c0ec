"""import-dsr: a local checkout of DSR-Bench's repository -> a release in thmforge's instance format.

    generation/**.txt, natural/**.txt ──► known file format? ──► blocks ──► (task, spec, DSR answer)
        ──► instance row (prompt rendered by thmforge, DSR-Bench's answer as ground truth)
        ──► reference check (thmforge's answer to the same spec; agrees, or why not)

Every block ends imported or failed (with the file, line and reason); every file under the two
folders is either read or listed as skipped (no reader for its format), so the counts add up.
An imported instance's suite is its task's suite prefixed with "dsr-" (dsr-main, dsr-natural,
dsr-extended), so one report over both releases keeps them apart.
The release holds `instances/` (run-bench and eval-bench read it unchanged), `reference_checks/`
(queryable with `thmforge sql`) and `import_summary.json` (counts per task and the agreement).
Small (a few thousand instances), so it runs in one process without Beam.
"""
from __future__ import annotations

import collections
import json
import pathlib
from typing import Any

import pyarrow.parquet as pq

from schemas import REFERENCE_CHECKS
from transforms.bench.dsr_import import (FORMATS, NOT_INSTANCE_FILES, DsrFormatError, DsrItem, difficulty_of,
                                        file_format)
from transforms.bench.instances import canonical_json, instance_row
from transforms.bench.registry import DIFFICULTIES, SpecError, get_task
from transforms.bench.structures.kd_tree import is_median_split
from transforms.scoring.canonical import AnswerShapeError, canonicalize, serialize
from transforms.scoring.tables import write_instances

GENERATOR_VERSION = "dsr-bench-import/1"
SOURCE_FOLDERS = ("generation", "natural")
SUMMARY_FILE = "import_summary.json"
SUITE_PREFIX = "dsr-"        # imported rows sit in their own suites (dsr-main, ...) beside thmforge's in a report


class DsrCheckoutError(ValueError):
    """The path is not a DSR-Bench checkout (no generation/ or natural/ folder)."""


def source_files(checkout: pathlib.Path) -> list[pathlib.Path]:
    folders = [checkout / name for name in SOURCE_FOLDERS if (checkout / name).is_dir()]
    if not folders:
        raise DsrCheckoutError(f"{checkout}: no generation/ or natural/ folder (not a DSR-Bench checkout)")
    return sorted(p for folder in folders for p in folder.rglob("*.txt") if p.is_file())


def compare(task_id: str, spec: dict, theirs: Any) -> tuple[bool, str | None, str | None]:
    """(agrees, thmforge's answer as JSON, why they differ) for one imported spec."""
    task = get_task(task_id)
    try:
        mine = task.solve(spec)
    except SpecError as exc:
        return False, None, f"thmforge rejects the spec: {exc}"
    ours, reference = serialize(canonicalize(mine, task.answer_type)), serialize(canonicalize(theirs, task.answer_type))
    if ours == reference:
        return True, canonical_json(mine), None
    return False, canonical_json(mine), difference_reason(task_id, spec, theirs)


def difference_reason(task_id: str, spec: dict, theirs) -> str:
    """The known cause of a disagreement, when the spec and DSR-Bench's answer show it; a plain statement otherwise."""
    if task_id.startswith("kd_tree/"):
        if is_median_split(spec["points"], theirs):
            return ("points tie on a splitting coordinate: DSR-Bench's tree is a median-split tree for another order "
                    "of the tied points; thmforge breaks ties by the next coordinates cyclically (its stated rule)")
        return "DSR-Bench's tree is not a median-split K-D tree of these points"
    if task_id == "bst/natural_clinic":
        times = [e[1] for e in spec["events"] if e[0] == "book"]
        if len(times) != len(set(times)):
            return "appointments share a time: thmforge orders equal times by name (its stated rule)"
    return "answers differ (no known rule difference explains it)"


def input_files() -> set[str]:
    """The files some format reads as its blocks' inputs (not instance files themselves)."""
    return {fmt.inputs.format(d=d) for fmt in FORMATS if fmt.inputs for d in DIFFICULTIES}


def paired_inputs(root: pathlib.Path, fmt, difficulty: str, count: int) -> list | str | None:
    """The input blocks of a format whose inputs live in another file (one per block, same order);
    None when the format needs none, or a reason (str) when they cannot be had."""
    if fmt.inputs is None:
        return None
    path = root / fmt.inputs.format(d=difficulty)
    if not path.is_file():
        return f"its input file {fmt.inputs.format(d=difficulty)} is missing"
    blocks = fmt.split_inputs(path.read_text(encoding="utf-8", errors="replace"))
    if len(blocks) < count:
        return f"{fmt.inputs.format(d=difficulty)} has {len(blocks)} inputs for {count} instances"
    return blocks


def instance_id(item: DsrItem, difficulty: str, variant: str, index: int) -> str:
    structure, name = item.task_id.split("/")
    middle = f"{difficulty}.{variant}" if variant else difficulty
    return f"dsr.{structure}.{name}.{middle}.{index:05d}"


def read_items(root: pathlib.Path, relative: str, fmt) -> tuple[list[DsrItem], list[dict]]:
    """The items of one instance file, and a failure record per block that cannot be read."""
    blocks = fmt.split((root / relative).read_text(encoding="utf-8", errors="replace"))
    inputs = paired_inputs(root, fmt, difficulty_of(relative), len(blocks))
    items, failed = [], []
    for number, block in enumerate(blocks):
        try:
            if isinstance(inputs, str):
                raise DsrFormatError(inputs)
            parsed = fmt.parse(block) if inputs is None else fmt.parse(block, inputs[number])
            found = parsed if isinstance(parsed, list) else [parsed]
            for item in found:
                canonicalize(item.answer, get_task(item.task_id).answer_type)
        except (DsrFormatError, AnswerShapeError) as exc:
            failed.append({"file": relative, "line": block[0][0], "reason": str(exc)})
            continue
        items += found
    return items, failed


def import_release(checkout: str, output: str) -> dict:
    """Read every known instance file under `checkout`, write the release to `output`; the summary."""
    root = pathlib.Path(checkout).expanduser()
    rows, checks, failed, skipped = [], [], [], []
    next_index: collections.Counter = collections.Counter()
    for path in source_files(root):
        relative = path.relative_to(root).as_posix()
        found = file_format(relative)
        if found is None:
            if relative not in input_files() and not NOT_INSTANCE_FILES.match(relative):
                skipped.append(relative)
            continue
        fmt, match = found
        difficulty, variant = difficulty_of(relative), fmt.variant(match)
        items, file_failures = read_items(root, relative, fmt)
        failed += file_failures
        for item in items:
            key = (item.task_id, difficulty, variant)
            index = next_index[key]
            next_index[key] += 1
            ident = instance_id(item, difficulty, variant, index)
            row = instance_row(get_task(item.task_id), item.spec, item.answer, instance_id=ident,
                               difficulty=difficulty, variant=variant, index=index, seed=None, length=item.length,
                               generator_version=GENERATOR_VERSION)
            rows.append({**row, "suite": SUITE_PREFIX + row["suite"]})
            agrees, mine, reason = compare(item.task_id, item.spec, item.answer)
            checks.append({"instance_id": ident, "source_file": relative, "source_line": item.line,
                           "task_id": item.task_id, "agrees": agrees, "thmforge_answer": mine, "reason": reason})
    summary = summarize(checks, failed, skipped)
    out = pathlib.Path(output)
    if rows:
        write_instances(rows, out)
        (out / REFERENCE_CHECKS.name).mkdir(parents=True, exist_ok=True)
        pq.write_table(REFERENCE_CHECKS.to_arrow(sorted(checks, key=lambda c: c["instance_id"])),
                       out / REFERENCE_CHECKS.name / "part-00000.parquet")
    out.mkdir(parents=True, exist_ok=True)
    (out / SUMMARY_FILE).write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n")
    return summary


def summarize(checks: list[dict], failed: list[dict], skipped: list[str]) -> dict:
    by_task: dict[str, dict] = {}
    for check in checks:
        counts = by_task.setdefault(check["task_id"], {"imported": 0, "agree": 0, "differ": 0})
        counts["imported"] += 1
        counts["agree" if check["agrees"] else "differ"] += 1
    reasons = collections.Counter(c["reason"] for c in checks if not c["agrees"])
    return {"imported": len(checks), "agree": sum(c["agrees"] for c in checks), "failed": len(failed),
            "failures": failed, "skipped_files": skipped, "by_task": by_task,
            "difference_reasons": dict(reasons.most_common()), "generator_version": GENERATOR_VERSION}
