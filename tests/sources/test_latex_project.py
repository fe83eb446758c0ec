"""LaTeX project source: a book folder written by the test, and the shared books when present."""
import pytest

from transforms.latex.model import Limits
from transforms.sources import latex_project

MAIN = r"""\documentclass{book}
\input{preamble/web}
\title{Notes on \emph{Rings}}
\begin{document}
\maketitle
\include{chapters/one}
\include{chapters/two}
\end{document}
"""
WEB = r"""\usepackage{amsthm}
\newtheorem{theorem}{Theorem}[chapter]
\newtheorem{lemma}[theorem]{Lemma}
\newcommand{\R}{\mathbb{R}}
"""
PRINT = r"""\usepackage{amsthm}
\newtheorem{theorem}{Theorem}
\newtheorem{lemma}{Lemma}
"""
ONE = r"""\chapter{Basics}
\begin{theorem}\label{thm:first}
Every ring $\R$ has a unit.
\end{theorem}
\begin{lemma}
No label here.
\end{lemma}
"""
TWO = r"""\chapter{More}
\begin{lemma}[Key]\label{lem:key}
A key lemma.
\end{lemma}
"""


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "ring-notes"
    (root / "chapters").mkdir(parents=True)
    (root / "preamble").mkdir()
    (root / "book.tex").write_text(MAIN)
    (root / "preamble" / "web.tex").write_text(WEB)
    (root / "preamble" / "print.tex").write_text(PRINT)
    (root / "chapters" / "one.tex").write_text(ONE)
    (root / "chapters" / "two.tex").write_text(TWO)
    (root / "chapters" / "draft.tex").write_text("\\documentclass{article}\\begin{document}\\section{x}"
                                                  "\\begin{theorem}t\\end{theorem}\\end{document}")
    (root / "cover.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(1000))
    return root


def test_root_file_input_reads_sources_only_into_memory(project):
    sub = latex_project.project_submission(str(project / "book.tex"), url="https://example.org/notes")
    assert sub.paper_id == "latex-project:ring-notes" and sub.source == "latex-project"
    assert "cover.png" not in sub.files
    assert {"book.tex", "preamble/web.tex", "chapters/one.tex", "chapters/two.tex"} <= set(sub.files)
    assert sub.metadata["main_file"] == "book.tex"
    assert sub.metadata["title"] == "Notes on Rings"
    assert sub.url == "https://example.org/notes"


def test_folder_input_prefers_the_root_at_the_top(project):
    sub = latex_project.project_submission(str(project), name="rings")
    assert sub.paper_id == "latex-project:rings"
    assert sub.metadata["main_file"] == "book.tex"          # not the deeper, self-contained draft


def test_extraction_follows_includes_and_the_preamble_the_root_loads(project):
    sub = latex_project.project_submission(str(project / "book.tex"),
                                           statement_url="https://example.org/notes#{label}")
    result = latex_project.extract(sub, Limits())
    got = [(s.kind, s.number, s.label, s.file, s.url) for s in result.statements]
    assert got == [
        ("theorem", "1.1", "thm:first", "chapters/one.tex", "https://example.org/notes#thm:first"),
        ("lemma", "1.2", None, "chapters/one.tex", None),
        ("lemma", "2.1", "lem:key", "chapters/two.tex", "https://example.org/notes#lem:key"),
    ]
    assert r"Every ring $\mathbb{R}$ has a unit." in result.statements[0].statement_latex


def test_statement_link_by_number(project):
    sub = latex_project.project_submission(str(project / "book.tex"),
                                           statement_url="https://example.org/{name}/{number}")
    urls = [s.url for s in latex_project.extract(sub, Limits()).statements]
    assert urls == ["https://example.org/ring-notes/1.1", "https://example.org/ring-notes/1.2",
                    "https://example.org/ring-notes/2.1"]


def test_format_files_come_before_the_root(tmp_path):
    root = tmp_path / "fmt"
    root.mkdir()
    (root / "macros.tex").write_text("\\documentclass{book}\n" + WEB)
    (root / "book.tex").write_text("\\begin{document}\\chapter{A}\\begin{theorem}\\label{t}$\\R$\\end{theorem}"
                                   "\\end{document}")
    sub = latex_project.project_submission(str(root / "book.tex"), format_files=("macros.tex",))
    assert sub.metadata["main_file"] == latex_project.FORMAT_ROOT
    [statement] = latex_project.extract(sub, Limits()).statements
    assert (statement.number, statement.file) == ("1.1", "book.tex")
    assert statement.statement_latex.endswith(r"$\mathbb{R}$")


def test_missing_inputs_are_recorded_failures(tmp_path):
    [missing] = list(latex_project.read([str(tmp_path / "absent")]))
    assert missing.events[0].fatal and missing.events[0].error_class == "FileNotFoundError"
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "notes.txt").write_text("no tex here")
    [empty] = list(latex_project.read([str(tmp_path / "empty")]))
    assert empty.events[-1].error_class == "no-main-file"
    assert latex_project.extract(empty, Limits()).statements == []


def test_file_over_the_limit_is_recorded(project):
    sub = latex_project.project_submission(str(project / "book.tex"), Limits(max_file_bytes=150))
    assert any(e.error_class == "file-too-large" and e.location == "book.tex" for e in sub.events)


@pytest.mark.shared
def test_symmetry_book_compiles_with_its_macros_format(shared_corpora):
    book = shared_corpora / "books" / "symmetry-book"
    sub = latex_project.project_submission(str(book / "book.tex"), format_files=("macros.tex",))
    result = latex_project.extract(sub, Limits())
    assert not any(e.fatal for e in result.events)
    assert len(result.statements) > 300
    numbered = [s for s in result.statements if s.number]
    assert len(numbered) > 0.8 * len(result.statements)
    assert all(s.number.split(".")[0].isdigit() or s.number[0].isalpha() for s in numbered)


@pytest.mark.shared
def test_extraction_report_accounts_for_every_declared_begin(shared_corpora, capsys):
    import benchmarks.extraction_report as report

    assert report.main(["--corpora", str(shared_corpora), "--only", "pfr-blueprint"]) == 0
    out = capsys.readouterr().out
    assert "== papers/pfr-blueprint" in out
    assert "unaccounted 0" in out and "FAILED" not in out
