"""TeX programming in preambles, run as LaTeX runs it (issues 18 and 15): llncs `envcountreset`,
`\\ifx`/`\\@ifundefined`/`\\ifcsname` decided from what the document defines, `\\expandafter` expanding
the token after the next, and `\\crefname`s inside conditionals that cannot be decided here. Each rule
is shown on a small document written for this test."""
import re

from transforms.latex.conditionals import Switches, first_definitions, resolve_conditionals
from transforms.latex.definitions import collect_macros
from transforms.latex.extract import extract_submission
from transforms.latex.macros import expand_after
from transforms.latex.model import Limits


def doc(preamble: str, body: str, cls: str = "{article}") -> bytes:
    return (f"\\documentclass{cls}\n{preamble}\n\\begin{{document}}\n{body}\n\\end{{document}}\n").encode()


def numbered(result):
    return [(s.env_name, s.number) for s in result.statements]


def texts(result):
    return [s.statement_text for s in result.statements]


# -- llncs envcountreset: counters restart at each section, the section number is not printed ----

LLNCS_BODY = r"""\section{A}
\begin{theorem}t\end{theorem}
\begin{lemma}l\end{lemma}
\begin{lemma}l\end{lemma}
\section{B}
\begin{lemma}l\end{lemma}
\begin{theorem}t\end{theorem}
"""


def test_llncs_envcountreset_restarts_each_counter_at_sections():
    result = extract_submission({"p.tex": doc("", LLNCS_BODY, "[envcountreset]{llncs}")})
    assert numbered(result) == [("theorem", "1"), ("lemma", "1"), ("lemma", "2"), ("lemma", "1"), ("theorem", "1")]


def test_llncs_envcountreset_with_envcountsame_restarts_the_shared_counter():
    result = extract_submission({"p.tex": doc("", LLNCS_BODY, "[envcountsame,envcountreset]{llncs}")})
    assert numbered(result) == [("theorem", "1"), ("lemma", "2"), ("lemma", "3"), ("lemma", "1"), ("theorem", "2")]


def test_llncs_envcountsect_wins_over_envcountreset():
    result = extract_submission({"p.tex": doc("", LLNCS_BODY, "[envcountsect,envcountreset]{llncs}")})
    assert numbered(result) == [("theorem", "1.1"), ("lemma", "1.1"), ("lemma", "1.2"), ("lemma", "2.1"),
                                ("theorem", "2.1")]


# -- \ifx, \@ifundefined, \ifcsname: decided when the document defines what they test -------------

def test_ifx_of_two_document_macros_chooses_the_branch():
    preamble = r"""\def\version{long}\def\long@version{long}\def\short@version{short}
\makeatletter
\ifx\version\long@version
  \newtheorem{theorem}{Theorem}[section]
\else
  \newtheorem{theorem}{Theorem}
\fi
\ifx\version\short@version \newtheorem{lemma}{Lemma} \else \newtheorem{lemma}[theorem]{Lemma}\fi
\makeatother"""
    body = r"\section{S}\begin{theorem}a\end{theorem}\begin{lemma}b\end{lemma}"
    assert numbered(extract_submission({"p.tex": doc(preamble, body)})) == [("theorem", "1.1"), ("lemma", "1.2")]


def test_ifx_undefined_after_a_definition_takes_the_else_branch():
    preamble = r"""\newcommand{\thmstyle}{plain}
\ifx\thmstyle\undefined \newtheorem{theorem}{Theorem} \else \newtheorem{theorem}{Theorem}[section] \fi
\expandafter\ifx\csname thmstyle\endcsname\relax \newtheorem{lemma}{Lemma}\else\newtheorem{lemma}{Lemma}[section]\fi"""
    body = r"\section{S}\begin{theorem}a\end{theorem}\begin{lemma}b\end{lemma}"
    assert numbered(extract_submission({"p.tex": doc(preamble, body)})) == [("theorem", "1.1"), ("lemma", "1.1")]


def test_ifx_undefined_of_a_newif_switch_keeps_the_value_set_before():
    preamble = r"""\newif\ifnumbered\numberedtrue
\ifx\numberedtrue\undefined
  \newif\ifnumbered
  \numberedfalse
\fi
\ifnumbered \newtheorem{theorem}{Theorem}[section] \else \newtheorem{theorem}{Theorem} \fi"""
    body = r"\section{S}\begin{theorem}a\end{theorem}"
    assert numbered(extract_submission({"p.tex": doc(preamble, body)})) == [("theorem", "1.1")]


def test_ifundefined_and_ifcsname_of_a_document_macro():
    preamble = r"""\newcommand\numberedbysection{}
\makeatletter
\@ifundefined{numberedbysection}{\newtheorem{theorem}{Theorem}}{\newtheorem{theorem}{Theorem}[section]}
\makeatother
\ifcsname numberedbysection\endcsname \newtheorem{lemma}{Lemma}[section]\else \newtheorem{lemma}{Lemma}\fi"""
    body = r"\section{S}\begin{theorem}a\end{theorem}\begin{lemma}b\end{lemma}"
    assert numbered(extract_submission({"p.tex": doc(preamble, body)})) == [("theorem", "1.1"), ("lemma", "1.1")]


def test_a_command_the_document_does_not_define_leaves_the_conditional_undecided():
    text = r"\ifx\crefname\undefined A\else B\fi \ifcsname thm\endcsname C\fi \@ifundefined{thm}{D}{E}"
    assert resolve_conditionals(text, None, Switches()) == text


def test_ifx_meanings_follow_let_and_definition_kind():
    switches = Switches()
    text = r"""\def\a{x}\def\b{x}\newcommand\c{x}\let\d\a
\ifx\a\b SAME\fi \ifx\a\c DEF-VS-LONG\fi \ifx\d\a LET\fi \let\a\undefined \ifdefined\a STILL\fi"""
    out = resolve_conditionals(text, None, switches)
    assert "SAME" in out and "LET" in out
    assert "DEF-VS-LONG" not in out
    assert "STILL" in out and r"\ifdefined" in out          # \let to \undefined: no longer known as defined
    assert out.count("\n") == text.count("\n")


# -- \expandafter: the token after the next expanded once ------------------------------------------

def test_expandafter_builds_definitions_and_declarations():
    preamble = r"""\newcommand{\lemmaname}{lemma}
\expandafter\def\csname thmtitle\endcsname{Theorem}
\expandafter\newcommand\csname Rset\endcsname{\mathbb{R}}
\expandafter\newtheorem\expandafter{\lemmaname}{Lemma}
\expandafter\newtheorem\csname\endcsname
\newtheorem{theorem}{\thmtitle}"""
    body = r"""\begin{theorem}On $\Rset$.\end{theorem}\begin{lemma}x\end{lemma}\begin{lemma}y\end{lemma}"""
    result = extract_submission({"p.tex": doc(preamble, body)})
    assert numbered(result) == [("theorem", "1"), ("lemma", "1"), ("lemma", "2")]
    assert [s.display_name for s in result.statements] == ["Theorem", "Lemma", "Lemma"]
    assert result.statements[0].statement_latex == r"On $\mathbb{R}$."


def test_expandafter_in_a_declaration_wrapper():
    preamble = r"""\newcommand{\mkthm}[2]{\expandafter\newtheorem\expandafter{#1}[theorem]{#2}}
\newtheorem{theorem}{Theorem}
\mkthm{prop}{Proposition}"""
    body = r"\begin{theorem}a\end{theorem}\begin{prop}b\end{prop}"
    result = extract_submission({"p.tex": doc(preamble, body)})
    assert numbered(result) == [("theorem", "1"), ("prop", "2")]


def test_expandafter_is_one_step_and_leaves_what_it_cannot_expand():
    text = (r"\newcommand\inner{X}\newcommand\outer{\inner}\newcommand\pair[2]{#2#1}"
            r"\expandafter\a\outer \expandafter\b\pair{1}{2} \expandafter\c\unknowncs"
            r"\newcommand\wrap{\expandafter\d\csname q\endcsname}")
    table = collect_macros(text, Limits())
    from transforms.latex.definitions import definition_spans
    out = expand_after(text, lambda: table, definition_spans(text))
    assert r"\a\inner" in out                     # one step: \outer's body, not \inner's
    assert r"\b21" in out
    assert r"\expandafter\c\unknowncs" in out      # a command of a package not in the submission
    assert r"\expandafter\d\csname q\endcsname" in out   # inside a definition: runs only when called


# -- issue 15: a \crefname in a conditional that cannot be decided here still counts ---------------

CREF_BODY = r"""\begin{lemma}\label{l1}a\end{lemma}\begin{lemma}\label{l2}b\end{lemma}
\begin{theorem}By \cref{l1} and \cref{l1,l2}.\end{theorem}"""


def test_crefname_in_an_undecided_conditional_counts_from_its_first_branch():
    preamble = r"""\usepackage{cleveref}\newtheorem{theorem}{Theorem}\newtheorem{lemma}[theorem]{lemma}
\ifpdf
  \crefname{lemma}{Lemma}{Lemmas}
\else
  \crefname{lemma}{lem.}{lems.}
\fi"""
    result = extract_submission({"p.tex": doc(preamble, CREF_BODY)})
    assert texts(result)[2] == "By Lemma 1 and Lemmas 1 and 2."


def test_crefname_only_in_the_else_branch_of_an_undecided_conditional_counts():
    preamble = r"""\usepackage{cleveref}\newtheorem{theorem}{Theorem}\newtheorem{lemma}[theorem]{lemma}
\ifx\crefname\undefined\else\crefname{lemma}{Lemma}{Lemmas}\fi"""
    result = extract_submission({"p.tex": doc(preamble, CREF_BODY)})
    assert texts(result)[2] == "By Lemma 1 and Lemmas 1 and 2."


def test_first_definitions_outside_conditionals_the_last_one_counts():
    pattern = re.compile(r"\\crefname\{(\w+)\}\{(\w+)\}")
    text = r"\crefname{a}{One}\ifpdf\crefname{a}{Two}\else\crefname{a}{Three}\crefname{b}{B}\fi\crefname{a}{Four}"
    kept = [m.group(2) for m in first_definitions(text, pattern, lambda m: m.group(1))]
    assert kept == ["One", "Two", "B", "Four"]
