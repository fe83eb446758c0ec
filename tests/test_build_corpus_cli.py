"""build-corpus options of the latex-project source, and inputs that would write the same files."""
import duckdb
import pytest

from runners.cli import main
from schemas import PAPERS, theorems_table


def book(tmp_path):
    root = tmp_path / "notes"
    root.mkdir()
    (root / "macros.tex").write_text("\\newtheorem{theorem}{Theorem}\n\\newcommand{\\N}{\\mathbb{N}}\n")
    (root / "book.tex").write_text(
        "\\documentclass{article}\n\\begin{document}\n"
        "\\begin{theorem}\\label{thm:inf}There are infinitely many primes in $\\N$.\\end{theorem}\n"
        "\\end{document}\n")
    return root


def test_project_name_year_links_and_format_files_reach_the_rows(tmp_path):
    root = book(tmp_path)
    out = tmp_path / "out"
    code = main(["build-corpus", "--source", "latex-project", "--input", str(root / "book.tex"),
                 "--output", str(out), "--embed-model", "none", "--no-progress",
                 "--project-name", "primes", "--project-year", "2024", "--format-file", "macros.tex",
                 "--statement-url", "https://example.org/primes#{label}"])
    assert code == 0
    con = duckdb.connect()
    con.execute(PAPERS.view_sql(str(out)))
    con.execute(theorems_table().view_sql(str(out)))
    assert con.execute("SELECT paper_id FROM papers").fetchall() == [("latex-project:primes",)]
    # the theorem environment is declared only in the format file: found means the format was read
    assert con.execute("SELECT year, number, label, url, statement_text FROM theorems").fetchall() == [
        (2024, "1", "thm:inf", "https://example.org/primes#thm:inf", "There are infinitely many primes in $\\mathbb{N}$.")]


@pytest.mark.parametrize("args, message", [
    (["--source", "arxiv", "--project-name", "x"], "only apply to --source latex-project"),
    (["--source", "latex-project", "--project-name", "x", "--input", "EXTRA"], "names one project"),
])
def test_project_options_outside_their_source_are_usage_errors(tmp_path, capsys, args, message):
    root = book(tmp_path)
    args = [a if a != "EXTRA" else str(root / "macros.tex") for a in args]
    code = main(["build-corpus", "--input", str(root / "book.tex"), "--output", str(tmp_path / "o"), *args])
    assert code == 2 and message in capsys.readouterr().err


def test_inputs_with_the_same_name_are_refused(tmp_path, capsys):
    for part in ("a", "b"):
        (tmp_path / part / "notes").mkdir(parents=True)
        (tmp_path / part / "notes" / "main.tex").write_text("\\documentclass{article}\\begin{document}x\\end{document}")
    code = main(["build-corpus", "--source", "latex-project", "--output", str(tmp_path / "o"),
                 "--input", str(tmp_path / "a" / "notes"), str(tmp_path / "b" / "notes")])
    assert code == 2 and "share the name notes" in capsys.readouterr().err


def test_limits_given_on_the_command_line_reach_extraction(tmp_path):
    root = tmp_path / "nested"
    root.mkdir()
    (root / "main.tex").write_text("\\documentclass{article}\\newtheorem{lemma}{Lemma}\\begin{document}"
                                   "\\input{a}\\end{document}")
    (root / "a.tex").write_text("\\begin{lemma}Shallow.\\end{lemma}\\input{b}")
    (root / "b.tex").write_text("\\begin{lemma}Deep.\\end{lemma}")
    out = tmp_path / "out"
    assert main(["build-corpus", "--source", "latex-project", "--input", str(root), "--output", str(out),
                 "--embed-model", "none", "--no-progress", "--include-depth", "1", "--project-year", "2024"]) == 0
    from schemas import FAILURES
    con = duckdb.connect()
    con.execute(theorems_table().view_sql(str(out)))
    con.execute(FAILURES.view_sql(str(out)))
    assert con.execute("SELECT statement_text FROM theorems").fetchall() == [("Shallow.",)]
    assert con.execute("SELECT stage, error_class FROM failures").fetchall() == [("flatten", "include-depth")]
