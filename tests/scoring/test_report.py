"""report.md and its plots from scores rows of two models that cover different tasks."""
import struct

from transforms.scoring.report import HEATMAP, LENGTH_PLOT, RADAR, write_report


def score(model, trial, category, task, difficulty, length, exact, error=None):
    return {"instance_id": f"{task}.{difficulty}.{length}", "model": model, "trial": trial, "suite": "main",
            "category": category, "structure": task.split("/")[0], "task": task.split("/")[1],
            "difficulty": difficulty, "length": length, "exact": exact, "partial": exact,
            "structural": exact, "parse_error": error}


def test_report_has_tables_plots_and_errors(tmp_path):
    rows = [score("a", t, "Linear", "array/access", "easy", 5, 1.0) for t in range(3)]
    rows += [score("a", t, "Temporal", "queue/compound", "hard", 25, 0.0, "no final_answer found") for t in range(3)]
    rows += [score("b", 0, "Linear", "array/access", "easy", 5, 0.0, "request failed: timeout after 5 attempt(s): x")]
    report = write_report(rows, tmp_path, title="T", notes=["A note."]).read_text()
    assert report.startswith("# T\n\nA note.\n")
    assert "| a | 6 | 2 | 3 | 0 | 3 | 0.500 ± 0.000 |" in report
    assert "| b | 1 | 1 | 1 | 1 | 0 | 0.000 ± 0.000 |" in report
    assert "| Temporal | 0.000 ± 0.000 | 0.000 ± 0.000 | 0.000 ± 0.000 | – | – | – |" in report
    for heading in ("suite", "category", "structure", "task", "difficulty", "length"):
        assert f"## By {heading}" in report
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
