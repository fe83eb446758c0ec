"""`report.md` with PNG plots beside it, from scores rows of one or several models.

Plots (matplotlib, Agg backend, no display needed):
  radar_category.png          exact accuracy by category, one polygon per model
  heatmap_task_difficulty.png exact accuracy of every task at each difficulty, a panel per model
  accuracy_vs_length.png      exact accuracy (with its spread over trials) and structural credit
                              (dashed) against instance length, per model
"""
from __future__ import annotations

import math
import pathlib
from typing import Any, Iterable, Mapping, Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)

from transforms.scoring.diagnostics import DIMENSIONS, GroupStats, error_counts, side_by_side, summarize  # noqa: E402

RADAR = "radar_category.png"
HEATMAP = "heatmap_task_difficulty.png"
LENGTH_PLOT = "accuracy_vs_length.png"
_PNG_METADATA = {"Software": None}  # no version stamp: the same scores give the same bytes
HOW_SCORED = """## How answers are scored

No model judges anything. The answer is read from the response: the last JSON object with a
`final_answer` key (fenced or not; single quotes and Python constants accepted), else a final
`Final answer: VALUE` line, else a response that is one bare JSON value; reasoning inside
`<think>` is ignored. Anything else, or a value of the wrong shape for the task's answer type,
scores 0 on every measure with the reason kept in `parse_error`; so does a request that kept
failing. The value is then canonicalized for its answer type (integral floats as ints, colours
as R/B, undirected edges ordered), so formatting never costs credit.

- **exact**: the canonical answers are equal.
- **partial**: 1 - normalized Levenshtein distance between the canonical JSON texts.
- **structural**: trees 1 - TED/(|pred| + |truth|) (Zhang-Shasha tree edit distance, clipped at
  0; a binary node's side is part of its label); edge lists 1 - |E_pred sym.diff. E_true| /
  (|E_pred| + |E_true|); lists 1 - normalized edit distance over elements; scalars: exact.
"""


def write_report(rows: Iterable[Mapping[str, Any]], out_dir: str | pathlib.Path, *,
                 title: str = "Benchmark evaluation", notes: Sequence[str] = ()) -> pathlib.Path:
    """Write `report.md` and its plots into `out_dir`; returns the report's path."""
    rows = list(rows)
    out = pathlib.Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    _radar(summarize(rows, ("category",)), out / RADAR)
    _heatmap(summarize(rows, ("suite", "structure", "task", "difficulty")), out / HEATMAP)
    _length_plot(summarize(rows, ("length",)), out / LENGTH_PLOT)
    lines = [f"# {title}", ""]
    lines += [f"{note}" for note in notes] + ([""] if notes else [])
    lines += _overview(rows)
    lines += ["", f"![exact accuracy by category]({RADAR})", "",
              f"![exact accuracy by task and difficulty]({HEATMAP})", "",
              f"![accuracy against length]({LENGTH_PLOT})", ""]
    lines += ["Figures are mean ± standard deviation over trials of the per-trial mean "
              "(exact / partial / structural).", ""]
    for dimension in DIMENSIONS:
        lines += [f"## By {dimension}", ""] + _table(summarize(rows, (dimension,)), dimension) + [""]
    lines += _errors(rows) + ["", HOW_SCORED]
    path = out / "report.md"
    path.write_text("\n".join(lines).rstrip() + "\n", encoding="utf-8")
    return path


def _fmt(stats: GroupStats | None, metric: str) -> str:
    if stats is None:
        return "–"
    return f"{stats.mean[metric]:.3f} ± {stats.std[metric]:.3f}"


def _overview(rows: list[Mapping[str, Any]]) -> list[str]:
    overall = {s.model: s for s in summarize(rows)}
    lines = ["## Overview", "",
             "| model | predictions | instances | trials | request failures | parse errors | exact | partial | structural |",
             "|---|---:|---:|---:|---:|---:|---|---|---|"]
    for model in sorted({r["model"] for r in rows}):
        mine = [r for r in rows if r["model"] == model]
        failed = sum(1 for r in mine if (r.get("parse_error") or "").startswith("request failed"))
        unparsed = sum(1 for r in mine if r.get("parse_error")) - failed
        stats = overall.get(model)
        lines.append(
            f"| {model} | {len(mine)} | {len({r['instance_id'] for r in mine})} | "
            f"{stats.trials if stats else 0} | {failed} | {unparsed} | "
            f"{_fmt(stats, 'exact')} | {_fmt(stats, 'partial')} | {_fmt(stats, 'structural')} |")
    return lines


def _table(stats: list[GroupStats], dimension: str) -> list[str]:
    models, keys, table = side_by_side(stats)
    header = f"| {dimension} | " + " | ".join(f"{m} exact | {m} partial | {m} structural" for m in models) + " |"
    lines = [header, "|---|" + "---|" * (3 * len(models))]
    for key in keys:
        cells = [_fmt(table[key].get(m), metric) for m in models for metric in ("exact", "partial", "structural")]
        lines.append(f"| {key[0]} | " + " | ".join(cells) + " |")
    return lines


def _errors(rows: list[Mapping[str, Any]]) -> list[str]:
    counts = error_counts(rows)
    if not counts:
        return ["## Parse errors", "", "None: every response held a parseable answer of the right type."]
    lines = ["## Parse errors and failed requests", "", "| model | error | count |", "|---|---|---:|"]
    for model, items in counts.items():
        lines += [f"| {model} | {message.replace('|', '/')} | {count} |" for message, count in items]
    return lines


def _radar(stats: list[GroupStats], path: pathlib.Path) -> None:
    models, keys, table = side_by_side(stats)
    labels = [k[0] for k in keys]
    angles = [2 * math.pi * i / max(len(labels), 1) for i in range(len(labels))]
    fig = plt.figure(figsize=(6, 6))
    ax = fig.add_subplot(projection="polar")
    for model in models:
        values = [table[k][model].mean["exact"] if model in table[k] else 0.0 for k in keys]
        ax.plot(angles + angles[:1], values + values[:1], marker="o", label=model)
        ax.fill(angles + angles[:1], values + values[:1], alpha=0.1)
    ax.set_xticks(angles)
    ax.set_xticklabels(labels)
    ax.set_ylim(0, 1)
    ax.set_title("Exact accuracy by category")
    ax.legend(loc="upper right", bbox_to_anchor=(1.25, 1.1), fontsize="small")
    fig.savefig(path, dpi=100, bbox_inches="tight", metadata=_PNG_METADATA)
    plt.close(fig)


def _task_label(suite: str, structure: str, task: str) -> str:
    name = task if "/" in str(task) else f"{structure}/{task}"
    return name if suite == "main" else f"{suite}: {name}"


def _heatmap(stats: list[GroupStats], path: pathlib.Path) -> None:
    models = sorted({s.model for s in stats})
    tasks = sorted({_task_label(*s.key[:3]) for s in stats})
    difficulties = sorted({s.key[3] for s in stats}, key=lambda d: ("easy", "medium", "hard").index(d)
                          if d in ("easy", "medium", "hard") else 3)
    cell = {(s.model, _task_label(*s.key[:3]), s.key[3]): s.mean["exact"] for s in stats}
    fig, axes = plt.subplots(1, len(models), figsize=(2.2 + 1.6 * len(models) * max(len(difficulties), 1) / 3 + 2,
                                                       1.5 + 0.22 * len(tasks)), squeeze=False)
    for ax, model in zip(axes[0], models):
        grid = [[cell.get((model, t, d), math.nan) for d in difficulties] for t in tasks]
        image = ax.imshow(grid, vmin=0, vmax=1, cmap="viridis", aspect="auto")
        ax.set_xticks(range(len(difficulties)), difficulties)
        ax.set_yticks(range(len(tasks)), tasks if ax is axes[0][0] else [""] * len(tasks), fontsize=7)
        ax.set_title(model, fontsize=9)
    fig.colorbar(image, ax=list(axes[0]), label="exact accuracy")
    fig.savefig(path, dpi=100, bbox_inches="tight", metadata=_PNG_METADATA)
    plt.close(fig)


def _length_plot(stats: list[GroupStats], path: pathlib.Path) -> None:
    fig, ax = plt.subplots(figsize=(7, 4))
    for model in sorted({s.model for s in stats}):
        mine = [s for s in stats if s.model == model and s.key[0] is not None]
        xs = [s.key[0] for s in mine]
        line = ax.errorbar(xs, [s.mean["exact"] for s in mine], yerr=[s.std["exact"] for s in mine],
                           marker="o", markersize=3, capsize=2, label=f"{model} exact")
        ax.plot(xs, [s.mean["structural"] for s in mine], linestyle="--", color=line[0].get_color(),
                label=f"{model} structural credit")
    ax.set_xlabel("length (elements or operations)")
    ax.set_ylabel("accuracy")
    ax.set_ylim(-0.02, 1.02)
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small")
    fig.savefig(path, dpi=100, bbox_inches="tight", metadata=_PNG_METADATA)
    plt.close(fig)
