"""What a corpus run did, from its manifest: a console summary, and the problems that make the run
fail as a whole (exit code 1) although every paper was accounted for."""
from __future__ import annotations


def _counted(counts: dict) -> str:
    return ", ".join(f"{k} {n}" for k, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def summary(manifest: dict, output: str) -> str:
    """Papers ok / failed / skipped by reason, statements by kind, stage failures by stage and class."""
    counts = manifest["counts"]
    status = counts["by_status"]
    lines = [f"thmforge build-corpus: {counts['papers']} papers, {counts['statements']} statements -> {output}",
             f"  papers: ok {status['ok']}, failed {status['failed']}, skipped {status['skipped']}"]
    for label, reasons in (("failed", counts.get("fail_reasons")), ("skipped", counts.get("skip_reasons"))):
        if reasons:
            lines.append(f"  {label} by reason: {_counted(reasons)}")
    if counts.get("by_kind"):
        lines.append(f"  statements by kind: {_counted(counts['by_kind'])}")
    if counts.get("failures_by_stage"):
        lines.append(f"  recorded failures by stage: {_counted(counts['failures_by_stage'])}; "
                     f"by class: {_counted(counts.get('failures_by_reason') or {})}")
    return "\n".join(lines)


def problems(manifest: dict) -> list[str]:
    """Why the run did not do its job: an input that yielded no paper (unreadable as a whole), or a
    configured stage that failed for every statement."""
    found = [f"input {name} ({record['bundle']}) yielded no paper: unreadable as a whole (see failures/)"
             for name, record in sorted(manifest.get("accounting", {}).items()) if record["submissions"] == 0]
    statements = manifest["counts"]["statements"]
    describer = manifest.get("describer") or {}
    if statements and describer.get("describer", "text") != "text" and not describer.get("described"):
        found.append(f"the {describer['describer']} describer failed for all {statements} statements "
                     f"({_counted(describer.get('failed_by_reason') or {}) or 'see failures/'})")
    embed_failures = manifest["counts"].get("failures_by_stage", {}).get("embed", 0)
    if statements and manifest.get("embedding") and embed_failures >= statements:
        found.append(f"embedding failed for all {statements} statements (see failures/)")
    return found
