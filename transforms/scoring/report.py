"""`report.md` with PNG plots beside it, from scores rows of one or several models.

Plots (matplotlib, Agg backend, no display needed):
  radar_category.png          exact accuracy by category, one polygon per run
  heatmap_task_difficulty.png exact accuracy of every task at each difficulty, a panel per run;
                              each cell shows its value and n (instances)
  accuracy_vs_length.png      exact accuracy (with its spread over trials) and structural credit
                              (dashed) against instance length, per run

A run is a model, or a model and prompt mode when one model was run in several modes, so models
and prompt modes sit side by side. Every table cell and figure says how many instances and
trials it rests on; the overview adds tokens, latency and (given prices) cost per run.
"""
from __future__ import annotations

import io
import math
import os
from typing import Any, Iterable, Mapping, Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)

from transforms.scoring.diagnostics import (BREAKDOWNS, GroupStats, error_counts, run_labels, side_by_side,  # noqa: E402
                                           summarize, usage, with_breakdown_columns)
from transforms.write import files  # noqa: E402

RADAR = "radar_category.png"
HEATMAP = "heatmap_task_difficulty.png"
LENGTH_PLOT = "accuracy_vs_length.png"
REPORT = "report.md"
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


def write_report(rows: Iterable[Mapping[str, Any]], out_dir: str | os.PathLike, *,
                 title: str = "Benchmark evaluation", notes: Sequence[str] = (),
                 prices: Mapping[str, tuple[float, float]] | None = None) -> str:
    """Write `report.md` and its plots into `out_dir` (any Beam filesystem); returns the report's path."""
    out = str(out_dir)
    for name, payload in render_report(rows, title=title, notes=notes, prices=prices).items():
        files.replace_bytes(files.join(out, name), payload)
    return files.join(out, REPORT)


def render_report(rows: Iterable[Mapping[str, Any]], *, title: str = "Benchmark evaluation",
                  notes: Sequence[str] = (), prices: Mapping[str, tuple[float, float]] | None = None
                  ) -> dict[str, bytes]:
    """`report.md` and its plots, by file name."""
    rows = [with_breakdown_columns(r) for r in run_labels(rows)]
    basis = _basis(rows)
    rendered = {RADAR: _radar(summarize(rows, ("category",)), basis),
                HEATMAP: _heatmap(summarize(rows, ("suite", "structure", "task", "difficulty")), basis),
                LENGTH_PLOT: _length_plot(summarize(rows, ("length",)), basis)}
    lines = [f"# {title}", ""]
    lines += [f"{note}" for note in notes] + ([""] if notes else [])
    lines += _overview(rows) + [""] + _usage(rows, prices or {})
    lines += ["", f"![exact accuracy by category]({RADAR})", "",
              f"![exact accuracy by task and difficulty]({HEATMAP})", "",
              f"![accuracy against length]({LENGTH_PLOT})", "",
              f"Figures rest on {basis}.", ""]
    lines += ["Figures are mean ± standard deviation over trials of the per-trial mean "
              "(exact / partial / structural); n = instances × trials behind each figure.", ""]
    for name, columns in BREAKDOWNS.items():
        stats = summarize([r for r in rows if all(r.get(c) is not None for c in columns)], columns)
        if stats:
            lines += [f"## By {name}", ""] + _table(stats, name) + [""]
    lines += _errors(rows) + ["", HOW_SCORED]
    return {REPORT: ("\n".join(lines).rstrip() + "\n").encode("utf-8"), **rendered}


def _png(fig) -> bytes:
    sink = io.BytesIO()
    fig.savefig(sink, format="png", dpi=100, bbox_inches="tight", metadata=_PNG_METADATA)
    plt.close(fig)
    return sink.getvalue()


def _basis(rows: list[Mapping[str, Any]]) -> str:
    """'N instances × T trials' per run, for figure captions."""
    return "; ".join(f"{s.model}: {s.instances} instances × {s.trials} trial(s)" for s in summarize(rows)) or "no scores"


def _usage(rows: list[Mapping[str, Any]], prices: Mapping[str, tuple[float, float]]) -> list[str]:
    lines = ["## Tokens, latency and cost", "",
             "| run | predictions with usage | input tokens | output tokens | tokens per prediction | "
             "mean latency (s) | p95 latency (s) | cost (USD) |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
    base = {r["model"]: r.get("base_model", r["model"]) for r in rows}
    for model, u in usage(rows).items():
        price = prices.get(base[model])
        cost = f"{(u['input_tokens'] * price[0] + u['output_tokens'] * price[1]) / 1e6:.4f}" if price else "–"
        per = f"{(u['input_tokens'] + u['output_tokens']) / u['with_usage']:.0f}" if u["with_usage"] else "–"
        latency = [f"{u[k]:.3f}" if u[k] is not None else "–" for k in ("latency_mean_s", "latency_p95_s")]
        lines.append(f"| {model} | {u['with_usage']} of {u['predictions']} | {u['input_tokens']} | "
                     f"{u['output_tokens']} | {per} | {latency[0]} | {latency[1]} | {cost} |")
    lines += ["", "Cost = input tokens × input price + output tokens × output price (USD per million tokens, "
              "given with `--price MODEL=IN,OUT`); – where no price or no usage was recorded."]
    return lines


def _fmt(stats: GroupStats | None, metric: str) -> str:
    if stats is None:
        return "–"
    return f"{stats.mean[metric]:.3f} ± {stats.std[metric]:.3f}"


def _overview(rows: list[Mapping[str, Any]]) -> list[str]:
    overall = {s.model: s for s in summarize(rows)}
    lines = ["## Overview", "",
             "| run | predictions | instances | trials | request failures | parse errors | exact | partial | structural |",
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


def _key_label(dimension: str, key: tuple) -> str:
    if dimension == "structure/task":
        return _task_label(*key)
    if dimension == "spatial dimension":
        return f"{key[0]}-D"
    return str(key[0])


def _table(stats: list[GroupStats], dimension: str) -> list[str]:
    models, keys, table = side_by_side(stats)
    header = f"| {dimension} | " + " | ".join(f"{m} n | {m} exact | {m} partial | {m} structural" for m in models) + " |"
    lines = [header, "|---|" + "---:|---|---|---|" * len(models)]
    for key in keys:
        cells = []
        for m in models:
            found = table[key].get(m)
            cells.append(f"{found.instances}×{found.trials}" if found else "–")
            cells += [_fmt(found, metric) for metric in ("exact", "partial", "structural")]
        lines.append(f"| {_key_label(dimension, key)} | " + " | ".join(cells) + " |")
    return lines


def _errors(rows: list[Mapping[str, Any]]) -> list[str]:
    counts = error_counts(rows)
    if not counts:
        return ["## Parse errors", "", "None: every response held a parseable answer of the right type."]
    lines = ["## Parse errors and failed requests", "", "| model | error | count |", "|---|---|---:|"]
    for model, items in counts.items():
        lines += [f"| {model} | {message.replace('|', '/')} | {count} |" for message, count in items]
    return lines


def _radar(stats: list[GroupStats], basis: str) -> bytes:
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
    ax.set_title(f"Exact accuracy by category\n({basis})", fontsize=8)
    ax.legend(loc="upper right", bbox_to_anchor=(1.25, 1.1), fontsize="small")
    return _png(fig)


def _task_label(suite: str, structure: str, task: str) -> str:
    name = task if "/" in str(task) else f"{structure}/{task}"
    return name if suite == "main" else f"{suite}: {name}"


def _heatmap(stats: list[GroupStats], basis: str) -> bytes:
    models = sorted({s.model for s in stats})
    tasks = sorted({_task_label(*s.key[:3]) for s in stats})
    difficulties = sorted({s.key[3] for s in stats}, key=lambda d: ("easy", "medium", "hard").index(d)
                          if d in ("easy", "medium", "hard") else 3)
    cell = {(s.model, _task_label(*s.key[:3]), s.key[3]): s for s in stats}
    fig, axes = plt.subplots(1, len(models), figsize=(2.2 + 1.6 * len(models) * max(len(difficulties), 1) / 3 + 2,
                                                       1.5 + 0.22 * len(tasks)), squeeze=False)
    for ax, model in zip(axes[0], models):
        found = [[cell.get((model, t, d)) for d in difficulties] for t in tasks]
        grid = [[s.mean["exact"] if s else math.nan for s in row] for row in found]
        image = ax.imshow(grid, vmin=0, vmax=1, cmap="viridis", aspect="auto")
        for y, row in enumerate(found):
            for x, s in enumerate(row):
                if s:
                    ax.text(x, y, f"{s.mean['exact']:.2f}\nn={s.instances}", ha="center", va="center", fontsize=5,
                            color="white" if s.mean["exact"] < 0.6 else "black")
        ax.set_xticks(range(len(difficulties)), difficulties)
        ax.set_yticks(range(len(tasks)), tasks if ax is axes[0][0] else [""] * len(tasks), fontsize=7)
        ax.set_title(model, fontsize=9)
    fig.colorbar(image, ax=list(axes[0]), label="exact accuracy")
    fig.suptitle(f"Exact accuracy per task and difficulty; n = instances per cell ({basis})", fontsize=8)
    return _png(fig)


def _length_plot(stats: list[GroupStats], basis: str) -> bytes:
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
    ax.set_title(f"Accuracy against length ({basis})", fontsize=8)
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small")
    return _png(fig)
