"""Extraction rules met on documents the project had never seen (issue 18) and hostile inputs
(issue 21), each shown on a small document written for this test."""
from transforms.latex.extract import extract_submission


def doc(preamble: str, body: str, cls: str = "article") -> bytes:
    return (f"\\documentclass{cls}\n{preamble}\n\\begin{{document}}\n{body}\n\\end{{document}}\n").encode()


def numbers(result):
    return [(s.env_name, s.number) for s in result.statements]


# -- class 1: llncs options choose the counters of the class's environments ---------------------

LLNCS_BODY = r"""\section{A}
\begin{theorem}t\end{theorem}
\begin{lemma}l\end{lemma}
\begin{claim}c\end{claim}
\begin{definition}d\end{definition}
\section{B}
\begin{lemma}l\end{lemma}
"""


def test_llncs_envcountsame_shares_the_theorem_counter():
    result = extract_submission({"p.tex": doc("", LLNCS_BODY, "[envcountsame]{llncs}")})
    assert numbers(result) == [("theorem", "1"), ("lemma", "2"), ("claim", None), ("definition", "3"),
                               ("lemma", "4")]


def test_llncs_envcountsect_with_envcountsame_numbers_within_sections():
    result = extract_submission({"p.tex": doc("", LLNCS_BODY, "[envcountsame,envcountsect]{llncs}")})
    assert numbers(result) == [("theorem", "1.1"), ("lemma", "1.2"), ("claim", None), ("definition", "1.3"),
                               ("lemma", "2.1")]


def test_llncs_default_gives_each_environment_its_own_counter():
    result = extract_submission({"p.tex": doc("", LLNCS_BODY, "{llncs}")})
    assert numbers(result) == [("theorem", "1"), ("lemma", "1"), ("claim", None), ("definition", "1"),
                               ("lemma", "2")]


# -- class 2: a reset cascades down the reset lists -----------------------------------------------

def test_counter_within_subsection_restarts_at_each_section():
    preamble = r"\newtheorem{theorem}{Theorem}[subsection]"
    body = r"""\section{A}\subsection{a}\begin{theorem}x\end{theorem}\begin{theorem}y\end{theorem}
\section{B}\begin{theorem}before any subsection\end{theorem}
\subsection{b}\begin{theorem}z\end{theorem}"""
    result = extract_submission({"p.tex": doc(preamble, body)})
    assert [n for _, n in numbers(result)] == ["1.1.1", "1.1.2", "2.0.1", "2.1.1"]


# -- class 4: a proof that names its statement belongs to that statement -------------------------

def test_proof_attaches_to_the_statement_it_names():
    preamble = r"""\newtheorem{theorem}{Theorem}\newtheorem{lemma}{Lemma}
\newenvironment{proofof}[1]{\begin{proof}[Proof of \ref{#1}]}{\end{proof}}"""
    body = r"""\begin{theorem}\label{thm:y}main\end{theorem}
\begin{lemma}\label{lem:x}helper\end{lemma}
\begin{lemma}\label{lem:z}other\end{lemma}
\begin{proof}[Proof of Theorem~\ref{thm:y}]uses lemmas\end{proof}
\begin{proofof}{lem:x}by hand\end{proofof}
\begin{proof}[Proof of Lemma~\ref{lem:w}]a statement given later\end{proof}
\begin{lemma}\label{lem:w}late\end{lemma}"""
    result = extract_submission({"p.tex": doc(preamble, body)})
    assert [(s.label, s.proof_latex) for s in result.statements] == [
        ("thm:y", "uses lemmas"), ("lem:x", "by hand"), ("lem:z", None), ("lem:w", "a statement given later")]


# -- class 5: includes resolve as TeX resolves them ----------------------------------------------

def test_includes_resolve_like_tex_and_unused_definitions_report_nothing():
    main = doc(r"""\newtheorem{theorem}{Theorem}
\newcommand{\appendixpart}{\input{never-written}}""", r"""\input{knowledges.kl}
\input{chapters/one}
\input{deep}""")
    files = {"src/main.tex": main,
             "src/knowledges.kl": rb"\begin{theorem}from another extension\end{theorem}",
             "src/chapters/one.tex": rb"\input{two}",                        # the including file's folder
             "src/chapters/two.tex": rb"\begin{theorem}beside its includer\end{theorem}",
             "src/styles/tex/deep.tex": rb"\begin{theorem}in a TEXINPUTS subfolder\end{theorem}"}
    result = extract_submission(files)
    assert [s.statement_latex_raw for s in result.statements] == [
        "from another extension", "beside its includer", "in a TEXINPUTS subfolder"]
    assert [s.number for s in result.statements] == ["1", "2", "3"]
    assert [e for e in result.events if e.stage == "flatten"] == []


def test_a_missing_include_that_runs_is_still_reported():
    result = extract_submission({"m.tex": doc("", r"\input{nowhere}")})
    assert [(e.error_class, e.location) for e in result.events] == [("missing-include", "m.tex:4")]


# -- class 6: macros of a local package, and macros a statement defines before use ---------------

def test_local_package_macros_and_statement_local_definitions_expand():
    sty = rb"""\ProvidesPackage{widebar}
\DeclareRobustCommand{\widebar}[1]{\overline{#1}}"""
    main = doc(r"\usepackage[narrow]{widebar}\newtheorem{theorem}{Theorem}",
               r"\begin{theorem}\newcommand{\ff}{F}\def\gg#1{G_#1} $\widebar{x}=\ff+\gg{2}$\end{theorem}")
    result = extract_submission({"m.tex": main, "sty/widebar.sty": sty})
    [statement] = result.statements
    assert statement.statement_latex == r"$\overline{x}=F+G_2$"
    assert statement.statement_text == r"$\overline{x}=F+G_2$"
    assert result.unexpanded_macros == []


# -- issue 21: what cannot be extracted is recorded with its location ----------------------------

def failures(result, stage="segment"):
    return [(e.error_class, e.location) for e in result.events if e.stage == stage]


def test_unclosed_statement_and_stray_end_are_recorded_with_their_location():
    body = "\\begin{lemma}closed\\end{lemma}\n\\end{lemma}\n\\begin{lemma}never closed\n"
    result = extract_submission({"m.tex": doc(r"\newtheorem{lemma}{Lemma}", body)})
    assert [s.statement_latex_raw for s in result.statements] == ["closed"]
    assert failures(result) == [("stray-end", "m.tex:5"), ("unclosed-environment", "m.tex:6")]


def test_cr_only_line_endings_give_real_line_numbers():
    text = doc(r"\newtheorem{lemma}{Lemma}", "\\begin{lemma}a\\end{lemma}\n\n\\begin{lemma}b\\end{lemma}")
    result = extract_submission({"m.tex": text.replace(b"\n", b"\r")})
    assert [s.line for s in result.statements] == [4, 6]


def test_environments_begun_through_csname_and_let_aliases_are_statements():
    preamble = r"""\newtheorem{lemma}{Lemma}\newtheorem{principle}{\def\x{Principle}\x}
\let\mainlemma\lemma \let\endmainlemma\endlemma"""
    body = r"""\begin{lemma}a\end{lemma}
\csname lemma\endcsname b\csname endlemma\endcsname
\begin{mainlemma}c\end{mainlemma}
\begin{principle}d\end{principle}"""
    result = extract_submission({"m.tex": doc(preamble, body)})
    assert [(s.env_name, s.display_name, s.number, s.statement_latex_raw) for s in result.statements] == [
        ("lemma", "Lemma", "1", "a"), ("lemma", "Lemma", "2", "b"), ("mainlemma", "Lemma", "3", "c"),
        ("principle", "Principle", "1", "d")]


def test_includeonly_leaves_out_the_chapters_latex_excludes():
    main = doc(r"\newtheorem{lemma}{Lemma}\includeonly{cha}", r"\include{cha}\include{chb}")
    result = extract_submission({"m.tex": main, "cha.tex": rb"\begin{lemma}in\end{lemma}",
                                 "chb.tex": rb"\begin{lemma}out\end{lemma}"})
    assert [s.statement_latex_raw for s in result.statements] == ["in"]
    assert result.skipped_environments == [("lemma", "excluded-by-includeonly")]


# -- class 3: declarations inside conditionals of a local package --------------------------------

THMS_STY = rb"""\ProvidesPackage{thms}
\newif\ifsharedcounter
\newif\ifbysection \bysectiontrue
\DeclareOption{shared}{\sharedcountertrue}
\DeclareOption{flat}{\bysectionfalse}
\ProcessOptions\relax
\ifbysection
  \newtheorem{theorem}{Theorem}[section]
\else
  \newtheorem{theorem}{Theorem}
\fi
\ifsharedcounter
  \newtheorem{lemma}[theorem]{Lemma}
\else
  \newtheorem{lemma}{Lemma}
\fi
\ifdefined\thmsfancy \newtheorem{fancy}{Fancy}\fi
\ifdefined\thmsnumbered \newtheorem{remark}{Remark}\else \newtheorem*{remark}{Remark}\fi
\newcommand{\thmsnumbered}{}
"""


def test_package_options_choose_the_declaring_branch():
    body = r"""\section{A}\begin{theorem}t\end{theorem}\begin{lemma}l\end{lemma}\begin{remark}r\end{remark}
\begin{lemma}l\end{lemma}"""
    shared = extract_submission({"m.tex": doc(r"\usepackage[shared]{thms}", body), "thms.sty": THMS_STY})
    assert numbers(shared) == [("theorem", "1.1"), ("lemma", "1.2"), ("remark", None), ("lemma", "1.3")]
    flat = extract_submission({"m.tex": doc(r"\usepackage[flat]{thms}", body), "thms.sty": THMS_STY})
    assert numbers(flat) == [("theorem", "1"), ("lemma", "1"), ("remark", None), ("lemma", "2")]
    [line] = [s.line for s in flat.statements if s.env_name == "theorem"]
    assert line == 4



def test_a_global_class_option_reaches_the_packages_that_declare_it():
    """`\\documentclass[shared]{article}`: LaTeX's `\\ProcessOptions` in `thms.sty` runs the global `shared` it
    declares, so theorems and lemmas share a counter; a local option adds to the global ones."""
    body = r"""\section{A}\begin{theorem}t\end{theorem}\begin{lemma}l\end{lemma}"""
    main = doc(r"\usepackage{thms}", body, cls="[11pt,shared]{article}")
    assert main.startswith(rb"\documentclass[11pt,shared]{article}")
    shared = extract_submission({"m.tex": main, "thms.sty": THMS_STY})
    assert numbers(shared) == [("theorem", "1.1"), ("lemma", "1.2")]
    both = extract_submission({"m.tex": doc(r"\usepackage[flat]{thms}", body, cls="[shared]{article}"),
                               "thms.sty": THMS_STY})
    assert numbers(both) == [("theorem", "1"), ("lemma", "2")]

# -- no work for stages that are off -------------------------------------------------------------

def test_introduction_is_extracted_only_when_asked_for():
    from transforms.corpus import ExtractPapers, ReadConfig
    from transforms.latex.model import Limits

    files = {"m.tex": doc("", r"\section{Introduction}We study things.")}
    assert extract_submission(files).introduction == "We study things."
    assert extract_submission(files, limits=Limits(introduction_chars=0)).introduction is None
    for context, chars in (("body", 0), ("body+abstract", 0), ("body+intro", Limits().introduction_chars)):
        stage = ExtractPapers(ReadConfig(describe_context=context))
        stage.setup()
        stage.teardown()
        assert stage.limits.introduction_chars == chars


def test_environment_names_built_from_macros():
    preamble = r"\newtheorem{theorem}{Theorem}\newcommand{\thmenv}{theorem}"
    body = r"""\expandafter\begin\expandafter{\thmenv}a\expandafter\end\expandafter{\thmenv}
\begin{\thmenv}b\end{\thmenv}"""
    result = extract_submission({"m.tex": doc(preamble, body)})
    assert [(s.env_name, s.number, s.statement_latex_raw) for s in result.statements] == [
        ("theorem", "1", "a"), ("theorem", "2", "b")]
