"""extract_submission / segment_only end to end on small submissions written for the tests."""
import time

from transforms.latex.extract import extract_submission, segment_only
from transforms.latex.model import Limits

MAIN = r"""\documentclass{amsart}
\usepackage{paperthm}
\newcommand{\R}{\mathbb{R}}
\newcommand{\norm}[1]{\lVert #1\rVert}
\def\defthm#1#2{\newtheorem{#1}[theorem]{#2}}
\defthm{prop}{Proposition}
\begin{document}
\section{Introduction}
We prove that norms are \emph{fine}.
\section{Results}
\begin{theorem}[Main]\label{thm:main}
For $x\in\R$ we have $\norm{x}\ge 0$.
\end{theorem}
\begin{proof}Clear.\end{proof}
\input{sections/more}
\end{document}
"""
MORE = r"""\subsection{More}
\begin{prop}\label{prop:p} A proposition. \end{prop}
\begin{equation} a = b \end{equation}
\begin{lemma*} Unnumbered. \end{lemma*}
\begin{lemma} Numbered after the equation. \end{lemma}
"""
STY = r"""\newtheorem{theorem}{Theorem}[section]
\newtheorem{lemma}[theorem]{Lemma}
\newtheorem*{lemma*}{Lemma}
"""
FILES = {"paper.tex": MAIN.encode(), "sections/more.tex": MORE.encode(), "paperthm.sty": STY.encode(),
         "fig.pdf": b"%PDF-1.5\x00\x00binary"}


def test_end_to_end_statements_numbers_macros_rendering_locations():
    result = extract_submission(FILES)
    assert result.main_file == "paper.tex" and result.encoding == "utf-8"
    rows = [(s.ordinal, s.kind, s.env_name, s.number, s.title, s.label, s.file, s.line) for s in result.statements]
    assert rows == [
        (0, "theorem", "theorem", "2.1", "Main", "thm:main", "paper.tex", 11),
        (1, "proposition", "prop", "2.2", None, "prop:p", "sections/more.tex", 2),
        (2, "lemma", "lemma*", None, None, None, "sections/more.tex", 4),
        (3, "lemma", "lemma", "2.3", None, None, "sections/more.tex", 5),
    ]
    main = result.statements[0]
    assert main.statement_latex_raw == "\\label{thm:main}\nFor $x\\in\\R$ we have $\\norm{x}\\ge 0$."
    assert main.statement_latex == "\\label{thm:main}\nFor $x\\in\\mathbb{R}$ we have $\\lVert x\\rVert\\ge 0$."
    assert main.statement_text == "For $x\\in\\mathbb{R}$ we have $\\lVert x\\rVert\\ge 0$."
    assert main.proof_latex == "Clear." and main.section_path == ["Results"]
    assert result.statements[1].section_path == ["Results", "More"]
    assert result.introduction == "We prove that norms are fine."
    assert result.skipped_environments == [] and result.unexpanded_macros == []
    assert result.n_bytes == len(MAIN) + len(MORE) + len(STY)
    assert not [e for e in result.events if e.fatal]


def test_segment_only_gives_raw_statements_without_rendering():
    result = segment_only(FILES)
    assert [s.env_name for s in result.statements] == ["theorem", "prop", "lemma*", "lemma"]
    assert all(s.statement_text == "" and s.number is None for s in result.statements)
    assert result.statements[0].statement_latex == result.statements[0].statement_latex_raw


def test_no_main_file_is_fatal_and_recorded():
    result = extract_submission({"notes.txt": b"hello", "fig.png": b"\x89PNG\x00"})
    assert result.statements == []
    assert [(e.error_class, e.fatal) for e in result.events] == [("no-main-file", True)]


def test_timeout_is_a_fatal_event_not_an_exception():
    body = "\\begin{theorem}x\\end{theorem}\n" * 20000
    files = {"m.tex": ("\\documentclass{article}\\newtheorem{theorem}{Theorem}\\begin{document}"
                       + body + "\\end{document}").encode()}
    start = time.process_time()
    result = extract_submission(files, limits=Limits(timeout_s=0.05))
    assert time.process_time() - start < 5
    assert [e.error_class for e in result.events if e.fatal] == ["timeout"]


def test_latin1_paper_decoded_and_encoding_recorded():
    tex = ("\\documentclass{article}\\usepackage[latin1]{inputenc}\\newtheorem{thm}{Satz}\\begin{document}"
           "\\begin{thm}F\xfcr alle $x$ gilt \xe9.\\end{thm}\\end{document}").encode("latin-1")
    result = extract_submission({"a.tex": tex})
    assert result.encoding == "latin-1"
    assert result.statements[0].statement_text == "Für alle $x$ gilt é." and result.statements[0].kind == "theorem"


def test_include_cycle_and_binary_tex_are_events_and_the_rest_is_kept():
    files = {"a.tex": b"\\documentclass{article}\\begin{document}\\input{b}\\begin{theorem}t\\end{theorem}\\end{document}",
             "b.tex": b"\\input{a}", "c.tex": b"\x00\x01\x02"}
    result = extract_submission(files)
    assert [s.statement_text for s in result.statements] == ["t"]
    assert {e.error_class for e in result.events} >= {"include-cycle"}


def test_macro_failures_are_recorded_and_statement_kept():
    tex = (r"\documentclass{article}\newcommand{\a}{\b}\newcommand{\b}{\a}\newcommand{\pair}[2]{(#1,#2)}"
           r"\newtheorem{thm}{Theorem}\begin{document}\begin{thm}Uses $\a$ and $\pair$\end{thm}\end{document}")
    result = extract_submission({"a.tex": tex.encode()})
    assert result.unexpanded_macros == ["\\a", "\\pair"]
    assert result.statements[0].statement_latex == r"Uses $\a$ and $\pair$"
    assert [(e.stage, e.error_class, e.location) for e in result.events] == [("macros", "macro-not-expanded", "a.tex:1")]


def test_requested_main_file_is_used():
    files = {"a.tex": b"\\documentclass{article}\\begin{document}\\begin{lemma}A\\end{lemma}\\end{document}",
             "b.tex": b"\\documentclass{article}\\begin{document}\\begin{lemma}B\\end{lemma}\\end{document}"}
    assert [s.statement_text for s in extract_submission(files, main_file="b.tex").statements] == ["B"]


def test_member_paths_normalized_and_resource_forks_ignored():
    files = {"./paper.tex": b"\\documentclass{article}\\begin{document}\\input{./sec/a}\\end{document}",
             "./sec/a.tex": b"\\begin{lemma}L\\end{lemma}", "./._paper.tex": b"\x00\x05\x16\x07Mac OS X"}
    result = extract_submission(files)
    assert result.main_file == "paper.tex" and result.events == []
    assert [(s.file, s.statement_text) for s in result.statements] == [("sec/a.tex", "L")]


def test_include_bomb_is_cut_at_a_size_cap_and_recorded():
    files = {"m.tex": b"\\documentclass{article}\\begin{document}" + b"\\input{a}" * 300 + b"\\end{document}",
             "a.tex": b"\\input{b}" * 300, "b.tex": b"x" * 200}
    started = time.process_time()
    result = extract_submission(files)
    assert time.process_time() - started < 10
    assert "flatten-too-large" in [e.error_class for e in result.events]


def test_every_label_is_kept_with_what_it_names_and_references_print_numbers():
    doc = r"""\documentclass{amsart}
\newtheorem{theorem}{Theorem}[section]
\newtheorem{lemma}[theorem]{Lemma}
\begin{document}
\section{Intro}\label{sec:intro}
\begin{lemma}\label{lem:a} One. \end{lemma}
\begin{lemma}[Key]\label{lem:b} Two \begin{align}x&=1\\ y&=2\label{eq:y}\end{align} \end{lemma}
\begin{figure}\caption{F}\label{fig:f}\end{figure}
\begin{theorem}\label{thm:c} By \cref{lem:a,lem:b}, Section~\ref{sec:intro}, \eqref{eq:y}, \ref{nope}, \cite[p.~4]{knu}.
\begin{enumerate}[(a)] \item a \item b\label{it:b} \end{enumerate} See \ref{it:b}, \nameref{lem:b}, \ref{fig:f}.
\index{x!y}\end{theorem}
\begin{thebibliography}{9}\bibitem{knu} K.\end{thebibliography}
\end{document}"""
    result = extract_submission({"a.tex": doc.encode()})
    named = {k: (v.kind, v.number, v.display_name) for k, v in result.labels.items()}
    assert named == {"sec:intro": ("section", "1", "Section"), "lem:a": ("statement", "1.1", "Lemma"),
                     "lem:b": ("statement", "1.2", "Lemma"), "eq:y": ("equation", "2", "Equation"),
                     "fig:f": ("figure", "1", "Figure"), "thm:c": ("statement", "1.3", "Theorem"),
                     "it:b": ("item", "(b)", "Item")}
    assert result.bibliography == {"knu": "1"}
    assert result.statements[2].statement_text == (
        "By lemmas 1.1 and 1.2, Section 1, (2), ??, [1, p. 4]. * a * b See (b), Key, 1.")
    assert "\\cref{lem:a,lem:b}" in result.statements[2].statement_latex


def test_author_crefnames_and_redefined_reference_commands():
    doc = r"""\documentclass{article}
\newtheorem{lem}{Lemma}
\crefname{lem}{Lemma}{Lemmas}
\def\autoref#1{\ref{#1@}}\let\cref\autoref
\begin{document}
\begin{lem}\label{a} A. \end{lem}
\begin{lem}\label{b} By \cref{a} and \autoref{a}. \end{lem}
\end{document}"""
    result = extract_submission({"a.tex": doc.encode()})
    assert result.statements[1].statement_text == "By Lemma 1 and Lemma 1."


def test_proof_text_is_rendered_like_statement_text():
    """`proof_text`: macros expanded, references printed as the PDF prints them, `\\label` dropped;
    `proof_latex` stays as written."""
    main = MAIN.replace(r"\begin{proof}Clear.\end{proof}",
                        r"\begin{proof}\label{pf:main}By Proposition~\ref{prop:p}, $\norm{x}\in\R$.\end{proof}")
    result = extract_submission({**FILES, "paper.tex": main.encode()})
    proof = result.statements[0]
    assert proof.proof_latex == r"\label{pf:main}By Proposition~\ref{prop:p}, $\norm{x}\in\R$."
    assert proof.proof_text == "By Proposition 2.2, $\\lVert x\\rVert\\in\\mathbb{R}$."
    assert result.statements[1].proof_text is None       # no proof: no text
