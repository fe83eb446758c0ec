"""`\\the`, `\\number`, `\\romannumeral` and `\\noexpand` as TeX expands them (issue 18): counter values in
`\\the<counter>` formats and in names built with `\\csname`, `\\noexpand` under `\\expandafter` and in
`\\edef`. Each rule on a small document written for this test."""
from transforms.latex.definitions import collect_macros, definition_spans
from transforms.latex.extract import extract_submission
from transforms.latex.macros import expand_after
from transforms.latex.model import Limits
from transforms.latex.numbering import parse_format


def doc(preamble: str, body: str) -> bytes:
    return f"\\documentclass{{article}}\n{preamble}\n\\begin{{document}}\n{body}\n\\end{{document}}\n".encode()


def statements(preamble: str, body: str):
    result = extract_submission({"p.tex": doc(preamble, body)})
    assert not [e for e in result.events if e.fatal]
    return [(s.env_name, s.display_name, s.number, s.statement_latex) for s in result.statements]


def test_counter_formats_written_with_tex_primitives():
    assert parse_format(r"\number\value{section}.\arabic{theorem}") == [
        ("arabic", "section"), ("text", "."), ("arabic", "theorem")]
    assert parse_format(r"\the\c@chapter-\romannumeral\value{lemma}") == [
        ("arabic", "chapter"), ("text", "-"), ("roman", "lemma")]
    preamble = r"""\newtheorem{theorem}{Theorem}[section]
\renewcommand\thetheorem{\number\value{section}.\arabic{theorem}}
\newtheorem{lemma}{Lemma}
\renewcommand{\thelemma}{\Alph{section}-\romannumeral\value{lemma}}
\makeatletter\expandafter\def\csname theremark\endcsname{\the\c@section/\number\c@remark}\makeatother
\newtheorem{remark}{Remark}"""
    body = r"""\section{A}\section{B}
\begin{theorem}t\end{theorem}\begin{lemma}l\end{lemma}\begin{lemma}l\end{lemma}\begin{remark}r\end{remark}"""
    assert [s[2] for s in statements(preamble, body)] == ["2.1", "B-i", "B-ii", "2/1"]


def test_csname_with_counter_values_builds_definitions_and_declarations():
    preamble = r"""\newcounter{variant}\setcounter{variant}{2}\stepcounter{variant}
\newcommand{\prefix}{ex}
\expandafter\def\csname \prefix\romannumeral\value{variant}\endcsname{exvar}
\expandafter\newtheorem\expandafter{\exiii}{Exercise variant}
\newcommand{\bump}{\stepcounter{variant}}
\expandafter\def\csname title\romannumeral\value{variant}\endcsname{Problem}
\newtheorem{problem}{\titleiii}"""
    body = r"\begin{exvar}a\end{exvar}\begin{problem}b\end{problem}"
    assert statements(preamble, body) == [("exvar", "Exercise variant", "1", "a"), ("problem", "Problem", "1", "b")]


def test_the_and_number_under_expandafter_and_names_that_are_not_letters():
    text = (r"\newcounter{n}\addtocounter{n}{4}\newcommand\later{\setcounter{n}{9}}"
            r"\expandafter\a\the\value{n} \expandafter\b\number\value{unknown}"
            r"\expandafter\def\csname thm\the\value{n}\endcsname{X}"
            r"\expandafter\c\noexpand\foo")
    table = collect_macros(text, Limits())
    out = expand_after(text, lambda: table, definition_spans(text))
    assert r"\a4" in out                                  # the counter set before, not in \later's body
    assert r"\expandafter\b\number\value{unknown}" in out  # a counter not known here: left as written
    assert r"\def\csname thm4\endcsname{X}" in out      # built as TeX builds it, kept in \csname form
    assert r"\c\foo" in out


def test_edef_expands_at_the_definition_and_noexpand_keeps_a_token():
    preamble = r"""\newtheorem{theorem}{Theorem}
\edef\R{\noexpand\mathbb{R}}
\def\C{\noexpand\mathbb{C}}
\newcommand{\envname}{lem}\newcommand{\field}{\mathbb{F}}
\edef\declarelemma{\noexpand\newtheorem{\envname}[theorem]{Lemma}}
\edef\F{\field}\edef\G{\noexpand\field}
\renewcommand{\field}{\mathbb{K}}
\declarelemma"""
    body = r"\begin{theorem}$\R$ and $\C$.\end{theorem}\begin{lem}$\F \ne \G$\end{lem}"
    assert statements(preamble, body) == [("theorem", "Theorem", "1", r"$\mathbb{R}$ and $\C$."),
                                          ("lem", "Lemma", "2", r"$\mathbb{F} \ne \mathbb{K}$")]
