"""Definitions in the document body that change printed numbers (issue 18): a `\\the<counter>` format
redefined from that point on (`\\renewcommand`, `\\def`; to the end of its group, or of the document for
`\\gdef`/`\\global`), and `\\edef`/`\\xdef`, which freeze counter values and formats as they are at the
definition. Each rule on a small document written for this test, through the real extraction."""
from transforms.latex.extract import extract_submission


def doc(preamble: str, body: str) -> bytes:
    return f"\\documentclass{{article}}\n{preamble}\n\\begin{{document}}\n{body}\n\\end{{document}}\n".encode()


def extracted(preamble: str, body: str):
    result = extract_submission({"p.tex": doc(preamble, body)})
    assert not [e for e in result.events if e.fatal]
    return result


def numbers(preamble: str, body: str) -> list:
    return [(s.statement_text, s.number) for s in extracted(preamble, body).statements]


PREAMBLE = r"\newtheorem{theorem}{Theorem}[section]\newtheorem{lemma}{Lemma}\newtheorem*{restated}{Theorem}"


def test_a_format_redefined_in_the_body_counts_from_there_on():
    body = r"""\section{Start}
\begin{theorem}Before.\end{theorem}
\renewcommand{\thetheorem}{\Roman{theorem}}
\renewcommand\thelemma{\Alph{lemma}}
\begin{theorem}After.\end{theorem}\begin{lemma}Lettered.\end{lemma}
\def\thetheorem{T\arabic{theorem}}
\begin{theorem}Redefined again.\label{t:again}\end{theorem}
See Theorem~\ref{t:again}."""
    result = extracted(PREAMBLE, body)
    assert [(s.statement_text, s.number) for s in result.statements] == [
        ("Before.", "1.1"), ("After.", "II"), ("Lettered.", "A"), ("Redefined again.", "T3")]
    assert result.labels["t:again"].number == "T3"


def test_a_redefinition_in_a_group_or_environment_ends_with_it_unless_global():
    body = r"""\section{Start}
{\renewcommand{\thetheorem}{\Roman{theorem}}\begin{theorem}In a group.\end{theorem}}
\begin{theorem}After the group.\end{theorem}
\begin{center}\def\thetheorem{C\arabic{theorem}}\begin{theorem}In an environment.\end{theorem}\end{center}
\begin{theorem}After the environment.\end{theorem}
{\gdef\thetheorem{G\arabic{theorem}}}
\begin{theorem}After a global one.\end{theorem}
\newcommand{\restyle}{\gdef\thetheorem{never run}}
\begin{theorem}Defined, not run.\end{theorem}"""
    assert numbers(PREAMBLE, body) == [
        ("In a group.", "I"), ("After the group.", "1.2"), ("In an environment.", "C3"),
        ("After the environment.", "1.4"), ("After a global one.", "G5"), ("Defined, not run.", "G6")]


def test_edef_freezes_counter_values_and_formats_at_the_definition():
    body = r"""\section{Start}
\begin{theorem}\label{t:main}\xdef\mainnumber{\thetheorem}Main.\end{theorem}
\begin{theorem}Second.\end{theorem}
\begin{restated}[Theorem \mainnumber{} again]Main, restated.\end{restated}
\edef\resume{\arabic{theorem}}
\begin{theorem}Third.\end{theorem}
\setcounter{theorem}{\resume}
\begin{theorem}Third again.\end{theorem}
{\edef\thetheorem{\thetheorem}\begin{theorem}Frozen.\end{theorem}}
\begin{theorem}Unfrozen.\end{theorem}
\edef\thetheorem{\thesection-\noexpand\arabic{theorem}}
\section{Next}
\begin{theorem}Section frozen, theorem not.\end{theorem}"""
    result = extracted(PREAMBLE, body)
    assert [(s.title, s.statement_text, s.number) for s in result.statements] == [
        (None, "Main.", "1.1"), (None, "Second.", "1.2"), ("Theorem 1.1 again", "Main, restated.", None),
        (None, "Third.", "1.3"), (None, "Third again.", "1.3"), (None, "Frozen.", "1.3"),
        (None, "Unfrozen.", "1.5"), (None, "Section frozen, theorem not.", "1-1")]


def test_a_restatement_prints_the_number_of_the_theorem_it_refers_to():
    """`\\renewcommand{\\thetheorem}{\\ref{...}}` in a group: the number of that label, also when the theorem
    comes later (as a second LaTeX run prints it), "??" for a label never set."""
    body = r"""\section{Introduction}
{\renewcommand{\thetheorem}{\ref{t:main}}\begin{theorem}\label{t:intro}Main, announced.\end{theorem}
\addtocounter{theorem}{-1}}
\begin{theorem}First.\end{theorem}
\section{Proofs}
\begin{theorem}\label{t:main}Main.\end{theorem}
{\renewcommand{\thetheorem}{\ref{t:main}}\begin{theorem}Main, again.\end{theorem}\addtocounter{theorem}{-1}}
{\renewcommand{\thetheorem}{\ref{t:missing}}\begin{theorem}Lost.\end{theorem}\addtocounter{theorem}{-1}}
\begin{theorem}Next.\end{theorem}"""
    result = extracted(PREAMBLE, body)
    assert [(s.statement_text, s.number) for s in result.statements] == [
        ("Main, announced.", "2.1"), ("First.", "1.1"), ("Main.", "2.1"), ("Main, again.", "2.1"),
        ("Lost.", "??"), ("Next.", "2.2")]
    assert result.labels["t:intro"].number == "2.1"
