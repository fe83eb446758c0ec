"""Human and machine output of search hits and evaluation metrics."""
from __future__ import annotations

import dataclasses
import json
import shutil
from typing import Sequence

from retrieval.evaluate import ModeResult
from retrieval.search import Hit


_HIT_FIELDS = tuple(field.name for field in dataclasses.fields(Hit))


def hit_record(hit: Hit) -> dict:
    """The hit's fields and its display name. Not `dataclasses.asdict`, which deep-copies every
    value (17 us a hit, against 2): the one mutable field, the authors, is copied here."""
    record = {name: getattr(hit, name) for name in _HIT_FIELDS}
    record["authors"] = list(hit.authors)
    record["name"] = hit.name
    return record


def hits_json(hits: Sequence[Hit]) -> str:
    return json.dumps([hit_record(h) for h in hits], ensure_ascii=False, indent=2)


def hits_table(hits: Sequence[Hit]) -> str:
    if not hits:
        return "no results"
    width = max(60, min(shutil.get_terminal_size((100, 20)).columns, 160))
    blocks = []
    for hit in hits:
        authors = ", ".join(hit.authors[:3]) + (" et al." if len(hit.authors) > 3 else "")
        paper = " · ".join(str(x) for x in (hit.paper_title, authors, hit.year) if x)
        used = f"  used by {hit.used_by} statement{'s' if hit.used_by != 1 else ''}" if hit.used_by else ""
        lines = [f"{hit.rank:>2}. [{hit.score:.3f}] {hit.name}  ({hit.kind}){used}",
                 f"    {paper}" if paper else None,
                 f"    {hit.url}" if hit.url else f"    {hit.theorem_id}",
                 "    " + hit.snippet[: width - 4]]
        blocks.append("\n".join(line for line in lines if line))
    return "\n\n".join(blocks)


METRIC_KEYS = ("hit@1", "hit@10", "hit@20", "mrr@20")


def metrics_table(results: Sequence[ModeResult], n_queries: int, unresolved: int, label: str = "") -> str:
    header = f"{'mode':<12}" + "".join(f"{k + ' thm/paper':>20}" for k in METRIC_KEYS)
    rows = [header, "-" * len(header)]
    for result in results:
        cells = "".join(f"{result.theorem[k]:>11.3f} / {result.paper[k]:.3f}" for k in METRIC_KEYS)
        rows.append(f"{result.mode:<12}{cells}")
    title = f"{n_queries} queries" + (f", {unresolved} with gold not found in the corpus" if unresolved else "")
    return (f"{label}: " if label else "") + title + "\n" + "\n".join(rows)


def metrics_json(results: Sequence[ModeResult], n_queries: int, unresolved: int) -> str:
    return json.dumps({"queries": n_queries, "unresolved": unresolved,
                       "modes": {r.mode: {"theorem": r.theorem, "paper": r.paper} for r in results}}, indent=2)
