"""Conditionals in the document body (issue 18), decided where the preamble says how: a `\\newif` switch
set before, `\\ifdefined`/`\\ifx` of a macro the document defines, `\\iffalse` used to comment out. The
branch not taken yields no statement and declares nothing; undecidable ones keep both branches, and
statements keep their lines. Each rule on a small document written for this test."""
from transforms.latex.conditionals import Switches, resolve_body_conditionals
from transforms.latex.extract import extract_submission


def doc(preamble: str, body: str) -> bytes:
    return f"\\documentclass{{article}}\n{preamble}\n\\begin{{document}}\n{body}\n\\end{{document}}\n".encode()


def found(preamble: str, body: str):
    result = extract_submission({"p.tex": doc(preamble, body)})
    assert not [e for e in result.events if e.fatal]
    return [(s.env_name, s.number, s.label, s.line, s.statement_text) for s in result.statements]


DRAFT_BODY = r"""\section{One}
\ifdraft
\begin{theorem}\label{t:draft}Only in the draft.\end{theorem}
\else
\begin{theorem}\label{t:final}Only in the final version.\end{theorem}
\fi
\begin{theorem}\label{t:both}Always.\end{theorem}"""


def test_a_newif_switch_set_in_the_preamble_chooses_the_branch():
    preamble = r"\newtheorem{theorem}{Theorem}[section]\newif\ifdraft \draftfalse"
    assert found(preamble, DRAFT_BODY) == [("theorem", "1.1", "t:final", 8, "Only in the final version."),
                                           ("theorem", "1.2", "t:both", 10, "Always.")]
    assert [s[2] for s in found(preamble.replace("false", "true"), DRAFT_BODY)] == ["t:draft", "t:both"]


def test_a_switch_set_in_the_body_counts_from_there_on():
    body = r"""\newif\ifextended
\ifextended\begin{lemma}A\end{lemma}\fi
\extendedtrue
\ifextended\begin{lemma}B\end{lemma}\else\begin{lemma}C\end{lemma}\fi"""
    assert [(s[0], s[1], s[4]) for s in found(r"\newtheorem{lemma}{Lemma}", body)] == [("lemma", "1", "B")]


def test_an_environment_declared_in_the_branch_not_taken_is_not_a_theorem():
    preamble = r"\newtheorem{theorem}{Theorem}\newif\ifsolutions"
    body = r"""\ifsolutions \newtheorem{solution}{Solution} \else \newtheorem{answer}{Answer} \fi
\begin{theorem}T\end{theorem}
\begin{solution}S\end{solution}
\begin{answer}A\end{answer}"""
    assert [(s[0], s[1]) for s in found(preamble, body)] == [("theorem", "1"), ("answer", "1")]


def test_ifdefined_and_ifx_of_preamble_macros_in_the_body():
    preamble = r"""\newtheorem{theorem}{Theorem}\newcommand{\longversion}{}\def\mode{full}\def\full{full}"""
    body = r"""\ifdefined\longversion \begin{theorem}Long.\end{theorem} \else \begin{theorem}Short.\end{theorem}\fi
\ifx\mode\full \begin{theorem}Full.\end{theorem} \fi
\ifx\mode\undefined \begin{theorem}No mode.\end{theorem} \fi"""
    assert [(s[1], s[4]) for s in found(preamble, body)] == [("1", "Long."), ("2", "Full.")]


def test_iffalse_blocks_comment_out_statements():
    body = r"""\iffalse
\begin{theorem}Commented out.\end{theorem}
\fi
\iffalse\begin{theorem}Also out.\end{theorem}\else\begin{theorem}Kept.\end{theorem}\fi
\iftrue\begin{theorem}In.\end{theorem}\else\begin{theorem}Out.\end{theorem}\fi"""
    assert [(s[1], s[3], s[4]) for s in found(r"\newtheorem{theorem}{Theorem}", body)] == [
        ("1", 7, "Kept."), ("2", 8, "In.")]


def test_undecidable_conditionals_in_the_body_keep_both_branches():
    body = r"""\ifpdf\begin{theorem}A\end{theorem}\else\begin{theorem}B\end{theorem}\fi
\ifx\somepackagecommand\undefined\begin{theorem}C\end{theorem}\fi
\ifnum\value{section}>0 \begin{theorem}D\end{theorem}\fi"""
    assert [s[4] for s in found(r"\newtheorem{theorem}{Theorem}", body)] == ["A", "B", "C", "D"]


def test_a_macro_named_like_a_conditional_opens_none():
    """`\\iftag{tags}{yes}{no}` (Open Logic) and `\\iffeq` are macros: the `\\fi` after them closes the
    conditional before, so the switch is still decided."""
    preamble = r"""\newtheorem{theorem}{Theorem}\newif\ifdraft\newcommand{\iftag}[3]{#2}\newcommand{\iffeq}{\mathsf{iff}}"""
    body = r"""\ifdraft \iftag{a}{b}{c} $\iffeq$ \begin{theorem}Draft.\end{theorem}\fi
\begin{theorem}Final $\iffeq$.\end{theorem}"""
    assert [(s[1], s[4][:5]) for s in found(preamble, body)] == [("1", "Final")]


def test_blanking_keeps_offsets_and_an_unclosed_decided_conditional_leaves_the_body_alone():
    switches = Switches(booleans={"draft": False})
    body = "A\n\\ifdraft B\n\\else C\\fi D"
    out = resolve_body_conditionals(body, Switches(booleans=dict(switches.booleans)))
    assert len(out) == len(body) and out.count("\n") == 2 and "B" not in out and "C" in out and "D" in out
    unclosed = "A \\ifdraft B \\else C"               # its \fi would come from a macro
    assert resolve_body_conditionals(unclosed, Switches(booleans={"draft": False})) == unclosed
    untouched = "no conditional we can decide: \\ifpdf x\\fi $a\\iff b$"
    assert resolve_body_conditionals(untouched, Switches(booleans={"draft": False})) is untouched


def test_a_conditional_inside_a_statement_is_decided_in_its_text():
    preamble = r"\newtheorem{theorem}{Theorem}\newif\ifdraft"
    body = r"""\begin{theorem}\label{t}Every group\ifdraft{} (check this!)\fi{} is a monoid.\end{theorem}
\ifdraft\begin{theorem}[Draft title]\else\begin{theorem}[Final title]\fi
Body.\end{theorem}"""
    result = extract_submission({"p.tex": doc(preamble, body)})
    assert [(s.number, s.title, s.line, s.statement_text) for s in result.statements] == [
        ("1", None, 4, "Every group is a monoid."), ("2", "Final title", 5, "Body.")]


def test_a_test_of_a_command_the_body_defines_is_decided():
    body = r"""\newcommand{\extended}{yes}
\ifdefined\extended \begin{theorem}A\end{theorem} \else \begin{theorem}B\end{theorem} \fi
\ifcsname extended\endcsname \begin{theorem}C\end{theorem} \fi
\ifx\extended\undefined \begin{theorem}D\end{theorem} \fi
\ifdefined\neverdefined \begin{theorem}E\end{theorem} \fi"""
    assert [s[4] for s in found(r"\newtheorem{theorem}{Theorem}", body)] == ["A", "C", "E"]


def test_a_conditional_let_to_iftrue_or_iffalse_chooses_the_branch_and_its_declarations():
    """`\\let\\ifdraft\\iffalse` sets a conditional without `\\newif`: the theorem declarations of the branch
    taken count (the lemma shares the theorem counter), and the `\\iffalse` it names opens no comment."""
    preamble = r"""\newtheorem{theorem}{Theorem}[section]
\let\ifdraft\iffalse
\ifdraft \newtheorem{lemma}{Lemma} \else \newtheorem{lemma}[theorem]{Lemma} \fi"""
    body = r"""\section{One}
\begin{theorem}T\end{theorem}
\ifdraft \begin{lemma}Draft.\end{lemma} \else \begin{lemma}Final.\end{lemma} \fi"""
    assert [(s[0], s[1], s[3], s[4]) for s in found(preamble, body)] == [
        ("theorem", "1.1", 7, "T"), ("lemma", "1.2", 8, "Final.")]
    drafted = found(preamble.replace(r"\iffalse", r"\iftrue"), body)
    assert [(s[0], s[1], s[4]) for s in drafted] == [("theorem", "1.1", "T"), ("lemma", "1", "Draft.")]


def test_a_conditional_let_in_the_body_and_a_copy_of_another_switch():
    preamble = r"\newtheorem{theorem}{Theorem}\newif\ifproofs \proofstrue"
    body = r"""\let\ifappendix\iffalse
\ifappendix \begin{theorem}A\end{theorem} \fi
\let\ifappendix\ifproofs
\ifappendix \begin{theorem}B\end{theorem} \else \begin{theorem}C\end{theorem} \fi"""
    assert [(s[1], s[4]) for s in found(preamble, body)] == [("1", "B")]


def test_ifx_of_a_let_copy_is_true_whatever_the_copied_command_means():
    """`\\let\\a\\b` then `\\ifx\\a\\b`: true although `\\b` comes from a package not in the submission; two
    such commands the document never relates stay undecided (both branches read)."""
    preamble = r"""\let\plainsection\section
\ifx\plainsection\section \newtheorem{theorem}{Theorem}[section] \else \newtheorem{theorem}{Theorem} \fi"""
    body = r"""\section{One}\begin{theorem}A\end{theorem}
\ifx\plainsection\section \begin{theorem}B\end{theorem} \fi
\ifx\plainsection\subsection \begin{theorem}C\end{theorem} \fi"""
    assert [(s[1], s[4]) for s in found(preamble, body)] == [("1.1", "A"), ("1.2", "B"), ("1.3", "C")]
