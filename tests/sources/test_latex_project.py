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


FRONT = r"""\documentclass{book}
\newtheorem{theorem}{Theorem}
\input{front}
\begin{document}
\begin{theorem}A statement.\end{theorem}
\end{document}
"""


def front_project(tmp_path, front: str):
    root = tmp_path / "front-notes"
    root.mkdir()
    (root / "book.tex").write_text(FRONT)
    (root / "front.tex").write_text(front)
    return root


def test_title_authors_and_year_come_from_the_front_matter_of_included_files(tmp_path):
    root = front_project(tmp_path, r"""% \title{Commented out}
\title[Short]{Notes on \emph{Rings}\thanks{Grant 7.}}
\author{Ann One\\ Some University \and Bob Two}
\date{March 2019, revised 2021}""")
    sub = latex_project.project_submission(str(root))
    assert (sub.metadata["title"], sub.metadata["authors"], sub.year) == ("Notes on Rings", ["Ann One", "Bob Two"], 2019)
    assert not sub.events
    given = latex_project.project_submission(str(root), title="Ring Notes", authors=("C. Three",), year=2020)
    assert (given.metadata["title"], given.metadata["authors"], given.year) == ("Ring Notes", ["C. Three"], 2020)


def test_without_title_or_year_the_name_and_a_recorded_unknown_year_stand_in(tmp_path):
    sub = latex_project.project_submission(str(front_project(tmp_path, r"\date{\today}")))
    assert (sub.metadata["title"], sub.metadata["authors"], sub.year) == ("front-notes", [], latex_project.UNKNOWN_YEAR)
    assert [(e.error_class, e.fatal) for e in sub.events] == [("no-year", False)]


def test_a_project_name_with_a_bidi_override_fails_under_a_printable_id(tmp_path):
    sub = latex_project.project_submission(str(front_project(tmp_path, "")), name="notes\u202egpj.exe")
    assert sub.paper_id == "latex-project:notes\\u202egpj.exe" and sub.paper_id.isascii()
    assert [(e.error_class, e.fatal) for e in sub.events] == [("bad-project-name", True)]


@pytest.mark.slow
def test_a_built_book_has_a_title_and_no_null_year_partition(tmp_path):
    import duckdb

    from runners.cli import main
    from schemas import PAPERS, theorems_table

    root = front_project(tmp_path, r"\title{Front Notes}\author{Ann One}")
    out = tmp_path / "out"
    assert main(["build-corpus", "--source", "latex-project", "--input", str(root), "--output", str(out),
                 "--embed-model", "none", "--no-progress"]) == 0
    assert [p.name for p in (out / "theorems" / "source=latex-project").iterdir()] == ["year=0"]
    con = duckdb.connect()
    con.execute(PAPERS.view_sql(str(out)))
    con.execute(theorems_table().view_sql(str(out)))
    assert con.execute("SELECT title, authors, year FROM papers").fetchall() == [("Front Notes", ["Ann One"], 0)]
    assert con.execute("SELECT count(*) FROM theorems WHERE year IS NULL").fetchall() == [(0,)]


@pytest.mark.shared
def test_shared_books_have_titles_and_years(shared_corpora):
    books = sorted((shared_corpora / "books").iterdir())
    subs = {book.name: latex_project.project_submission(str(book)) for book in books}
    assert all(sub.metadata["title"] and isinstance(sub.year, int) for sub in subs.values())
    assert subs["hott-book"].metadata["title"] == "Homotopy Type Theory: Univalent Foundations of Mathematics"
    assert subs["hott-book"].metadata["authors"] == ["The Univalent Foundations Program"]
    assert (subs["napkin"].metadata["title"], subs["napkin"].metadata["authors"]) == \
        ("An Infinitely Large Napkin", ["Evan Chen"])
