"""report.md and its plots from scores rows of two models that cover different tasks."""
import pathlib
import struct

from transforms.scoring.report import HEATMAP, LENGTH_PLOT, RADAR, write_report


def score(model, trial, category, task, difficulty, length, exact, error=None, **extra):
    return {"instance_id": f"{task}.{difficulty}.{length}", "model": model, "trial": trial, "suite": "main",
            "category": category, "structure": task.split("/")[0], "task": task.split("/")[1],
            "difficulty": difficulty, "length": length, "exact": exact, "partial": exact,
            "structural": exact, "parse_error": error, **extra}


def test_report_has_tables_plots_and_errors(tmp_path):
    rows = [score("a", t, "Linear", "array/access", "easy", 5, 1.0) for t in range(3)]
    rows += [score("a", t, "Temporal", "queue/compound", "hard", 25, 0.0, "no final_answer found") for t in range(3)]
    rows += [score("b", 0, "Linear", "array/access", "easy", 5, 0.0, "request failed: timeout after 5 attempt(s): x")]
    report = pathlib.Path(write_report(rows, tmp_path, title="T", notes=["A note."])).read_text()
    assert report.startswith("# T\n\nA note.\n")
    assert "| a | 6 | 2 | 3 | 0 | 3 | 0.500 ± 0.000 |" in report
    assert "| b | 1 | 1 | 1 | 1 | 0 | 0.000 ± 0.000 |" in report
    assert "| Temporal | 1×3 | 0.000 ± 0.000 | 0.000 ± 0.000 | 0.000 ± 0.000 | – | – | – | – |" in report
    assert "| Linear | 1×3 | 1.000 ± 0.000 | 1.000 ± 0.000 | 1.000 ± 0.000 | 1×1 | 0.000 ± 0.000 |" in report
    for heading in ("suite", "category", "structure", "structure/task", "difficulty", "length"):
        assert f"## By {heading}\n" in report
    assert "## By spatial dimension" not in report          # no row has a spatial variant
    assert "| array/access | 1×3 |" in report and "Figures rest on a: 2 instances × 3 trial(s); b: 1 instances" in report
    assert "| a | no final_answer found | 3 |" in report
    assert "| b | request failed: timeout after 5 attempt(s) | 1 |" in report
    for png in (RADAR, HEATMAP, LENGTH_PLOT):
        data = (tmp_path / png).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and min(struct.unpack(">II", data[16:24])) > 100


def test_same_scores_give_the_same_bytes(tmp_path):
    rows = [score("a", 0, "Linear", "array/access", "easy", 5, 1.0)]
    write_report(rows, tmp_path / "x")
    write_report(rows, tmp_path / "y")
    for name in ("report.md", RADAR, HEATMAP, LENGTH_PLOT):
        assert (tmp_path / "x" / name).read_bytes() == (tmp_path / "y" / name).read_bytes()


def test_runs_side_by_side_with_usage_cost_and_spatial_breakdowns(tmp_path):
    rows = []
    for mode, exact in (("stepwise", 1.0), ("answer-only", 0.0)):
        for variant, length in (("moons", 5), ("3d", 6), (None, 7)):
            rows.append(score("m", 0, "Spatial", "kd_tree/construct", "easy", length, exact, prompt_mode=mode,
                              variant=variant, input_tokens=1000, output_tokens=500, latency_s=0.5 * length))
    rows += [score("a/x", 0, "Linear", "array/insert", "easy", 5, 1.0, prompt_mode="stepwise"),
             score("a/x", 0, "Hierarchical", "bst/insert", "easy", 5, 0.0, prompt_mode="stepwise")]
    report = pathlib.Path(write_report(rows, tmp_path, prices={"m": (2.0, 10.0)})).read_text()
    assert "| m [answer-only] | 3 | 3 | 1 |" in report and "| m [stepwise] | 3 | 3 | 1 |" in report
    # 3 predictions x (1000 in, 500 out) at $2 / $10 per million: 0.006 + 0.015; latencies 2.5, 3, 3.5
    assert "| m [stepwise] | 3 of 3 | 3000 | 1500 | 1500 | 3.000 | 3.500 | 0.0210 |" in report
    assert "| a/x | 0 of 2 | 0 | 0 | – | – | – | – |" in report
    assert "## By spatial dimension" in report and "| 3-D | 1×1 | 0.000 ± 0.000 | 0.000 ± 0.000 | 0.000 ± 0.000 | 1×1 | 1.000 ± 0.000 |" in report
    assert "## By point-set shape" in report and "| moons |" in report
    assert "| array/insert |" in report and "| bst/insert |" in report     # tasks grouped by structure/task
