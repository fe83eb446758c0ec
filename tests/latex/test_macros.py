"""Macro collection and expansion: one snippet per rule, plus the depth and size guards."""
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from transforms.latex.declarations import prepare_declarations
from transforms.latex.definitions import collect_macros
from transforms.latex.macros import expand_macros
from transforms.latex.model import Limits

LIMITS = Limits()


def expand(preamble: str, text: str, limits: Limits = LIMITS):
    return expand_macros(text, collect_macros(preamble, limits), limits)


@pytest.mark.parametrize("preamble, text, expected", [
    (r"\newcommand{\R}{\mathbb{R}}", r"$x\in\R^n$", r"$x\in\mathbb{R}^n$"),
    (r"\newcommand\R{\mathbb{R}}", r"$\R$", r"$\mathbb{R}$"),
    (r"\newcommand*{\abs}[1]{\lvert #1\rvert}", r"$\abs{x}+\abs y$", r"$\lvert x\rvert+\lvert y\rvert$"),
    (r"\newcommand{\pr}[2]{(#1,#2)}", r"\pr{a}{\pr{b}{c}}", r"(a,(b,c))"),
    (r"\renewcommand{\vec}[1]{\mathbf{#1}}", r"$\vec v$", r"$\mathbf{v}$"),
    (r"\providecommand{\one}{1}", r"\one", "1"),
    (r"\def\pair#1#2{\langle #1,#2\rangle}", r"\pair{a}{b}", r"\langle a,b\rangle"),
    (r"\gdef\eps{\varepsilon}", r"$\eps$", r"$\varepsilon$"),
    (r"\newcommand{\eg}{e.g.\@\xspace}", r"see \eg this", r"see e.g.\@\xspace this"),
    (r"\DeclareMathOperator{\Hom}{Hom}", r"$\Hom(A,B)$", r"$\operatorname{Hom}(A,B)$"),
    (r"\DeclareMathOperator*{\colim}{colim}", r"$\colim_i F$", r"$\operatorname*{colim}_i F$"),
    (r"\NewDocumentCommand{\set}{O{x} m}{\{#1 : #2\}}", r"\set{p} \set[y]{q}", r"\{x : p\} \{y : q\}"),
    (r"\def\interval[#1,#2]{[#1;#2]}", r"\interval[0,1]", r"[0;1]"),
])
def test_definition_forms_expand(preamble, text, expected):
    expanded, failed = expand(preamble, text)
    assert expanded == expected
    assert failed == []


def test_paired_delimiters_with_star_and_size():
    pre = r"\DeclarePairedDelimiter\abs{\lvert}{\rvert}\DeclarePairedDelimiter{\sem}{[\![}{]\!]}\newcommand{\R}{\mathbb R}"
    expanded, failed = expand(pre, r"$\abs{x} + \abs*{\frac12} + \abs[\big]{y} = \sem{\R}$")
    assert expanded == r"$\lvert x\rvert + \left\lvert\frac12\right\rvert + \bigl\lvert y\bigr\rvert = [\![\mathbb R]\!]$"
    assert failed == []


def test_optional_argument_uses_default_or_given_value():
    pre = r"\newcommand{\norm}[2][2]{\|#2\|_{#1}}"
    assert expand(pre, r"\norm{v}")[0] == r"\|v\|_{2}"
    assert expand(pre, r"\norm[\infty]{v}")[0] == r"\|v\|_{\infty}"


def test_doubled_hash_parameters_of_a_nested_definition_are_skipped_not_fatal():
    pre = r"\def\makelabel##1{\textbf{##1}}\newcommand{\DC}{\mathrm{DC}}"
    assert expand(pre, r"$\DC$")[0] == r"$\mathrm{DC}$"


def test_newcommand_keeps_first_renewcommand_and_def_take_latest_providecommand_fills_gap():
    pre = r"""\newcommand{\a}{first}\newcommand{\a}{second}
              \newcommand{\b}{old}\renewcommand{\b}{new}
              \def\c{one}\def\c{two}
              \newcommand{\d}{kept}\providecommand{\d}{ignored}"""
    assert expand(pre, r"\a \b \c \d")[0] == "first new two kept"


def test_let_copies_current_meaning_and_aliases_of_builtins_do_not_recurse():
    pre = r"""\newcommand{\x}{X}\let\y\x\renewcommand{\x}{Z}
              \let\oldsqrt=\sqrt \renewcommand{\sqrt}[1]{\oldsqrt{#1}}"""
    expanded, failed = expand(pre, r"\x\y $\sqrt{2}$")
    assert expanded == r"ZX $\sqrt{2}$"
    assert failed == []


def test_nested_macros_expand_through_each_other():
    pre = r"\newcommand{\N}{\mathbb{N}}\newcommand{\Nn}[1]{\N^{#1}}"
    assert expand(pre, r"$\Nn{k}$")[0] == r"$\mathbb{N}^{k}$"


def test_control_word_is_not_glued_to_a_following_letter():
    pre = r"\newcommand{\dd}{d}\newcommand{\bigo}{\mathcal{O}}\newcommand{\al}{\alpha}"
    assert expand(pre, r"\int f\,\dd x, \cdot\dd")[0] == r"\int f\,d x, \cdot d"
    assert expand(pre, r"\al{}x")[0] == r"\alpha{}x"


def test_longer_names_are_not_matched_by_a_prefix():
    pre = r"\newcommand{\R}{\mathbb{R}}"
    assert expand(pre, r"\Rightarrow \R")[0] == r"\Rightarrow \mathbb{R}"


def test_doubled_hash_in_body():
    pre = r"\newcommand{\mk}[1]{\foo##1{#1}}"
    assert expand(pre, r"\mk{a}")[0] == r"\foo#1{a}"


def test_infinite_recursion_is_given_up_and_recorded_and_rest_still_expands():
    pre = r"\newcommand{\loop}{x\pool}\newcommand{\pool}{y\loop}\newcommand{\R}{\mathbb{R}}"
    expanded, failed = expand(pre, r"\loop and \R and \loop")
    assert r"\loop" in failed
    assert expanded == r"\loop and \mathbb{R} and \loop"


@pytest.mark.parametrize("definition, name, reason", [
    (r"\renewcommand\scriptsize{\@setfontsize\scriptsize\@viipt\@viiipt}", "scriptsize", "TeX programming in body"),
    (r"\newcommand{\vect}[1]{\vect{\mathbf{#1}}}", "vect", "refers to itself"),
    (r"\newcommand{\sgn}{\ifmmode s\else t\fi}", "sgn", "TeX programming in body"),
    (r"\expandafter\def\expandafter\freelist\expandafter{x}", "expandafter", "primitive"),
    (r"\let\c@equation\c@thm", "c@equation", "internal name"),
])
def test_macros_only_tex_can_run_are_left_as_written(definition, name, reason):
    table = collect_macros(definition, LIMITS)
    assert name not in table and table.unexpandable[name] == reason
    text = "\\" + name + " x"
    # a use of a self-referencing macro is recursion and goes on record; TeX internals do not
    recorded = ["\\" + name] if reason == "refers to itself" else []
    assert expand_macros(text, table, LIMITS) == (text, recorded)


def test_mutual_recursion_is_given_up():
    pre = r"\def\ping{\pong}\def\pong{\ping}"
    expanded, failed = expand(pre, r"a \ping b")
    assert set(failed) >= {r"\ping"}
    assert expanded == r"a \ping b"


def test_exponential_blow_up_hits_the_size_limit_quickly():
    pre = "".join(rf"\def\m{chr(97 + i)}{{\m{chr(98 + i)}\m{chr(98 + i)}}}" for i in range(24)) + r"\def\my{xx}"
    limits = Limits(macro_output_bytes=10_000)
    start = time.perf_counter()
    expanded, failed = expand(pre, r"before \ma after", limits)
    assert time.perf_counter() - start < 5.0        # bounded by the size limit, not exponential
    assert r"\ma" in failed
    assert expanded == r"before \ma after"


def test_depth_limit_applies_to_long_but_finite_chains():
    pre = "".join(rf"\def\c{chr(97 + i)}{{\c{chr(98 + i)}}}" for i in range(10)) + r"\def\ck{end}"
    assert expand(pre, r"\ca")[0] == "end"
    expanded, failed = expand(pre, r"\ca", Limits(macro_depth=5))
    assert expanded == r"\ca" and r"\ca" in failed


def test_missing_argument_is_recorded_not_fatal():
    expanded, failed = expand(r"\newcommand{\abs}[1]{|#1|}", r"x \abs")
    assert expanded == r"x \abs"
    assert failed == [r"\abs"]


def test_text_without_macros_is_returned_unchanged():
    text = r"$\alpha + \beta$ plain"
    assert expand("", text) == (text, [])
    assert expand(r"\newcommand{\R}{r}", "no backslash") == ("no backslash", [])


def test_defthm_wrapper_becomes_plain_declarations():
    pre = r"""\def\defthm#1#2#3{%
  \newaliascnt{#1}{thm}
  \newtheorem{#1}[#1]{#2}
  \aliascntresetthe{#1}
  \crefname{#1}{#2}{#3}%
}
\newtheorem{thm}{Theorem}[section]
\defthm{lem}{Lemma}{Lemmas}
"""
    out = prepare_declarations(pre, collect_macros(pre, LIMITS), LIMITS)
    assert r"\newaliascnt{lem}{thm}" in out
    assert r"\newtheorem{lem}[lem]{Lemma}" in out
    assert r"\aliascntresetthe{lem}" in out
    assert out.count(r"\def\defthm#1#2#3{") == 1     # the definition itself is untouched
    assert r"\defthm{lem}" not in out


def test_delimited_def_wrapper_and_wrapper_calling_wrapper():
    pre = r"""\def\cnewtheorem#1[#2]#3{\newtheorem{#1}[#2]{#3}}
\newcommand{\both}[2]{\cnewtheorem{#1}[theorem]{#2}\newtheorem*{#1*}{#2}}
\cnewtheorem{lemma}[theorem]{Lemma}
\both{claim}{Claim}
"""
    out = prepare_declarations(pre, collect_macros(pre, LIMITS), LIMITS)
    assert r"\newtheorem{lemma}[theorem]{Lemma}" in out
    assert r"\newtheorem{claim}[theorem]{Claim}\newtheorem*{claim*}{Claim}" in out


def test_preamble_without_wrappers_is_unchanged():
    pre = r"\newcommand{\R}{\mathbb{R}}\newtheorem{theorem}{Theorem}"
    assert prepare_declarations(pre, collect_macros(pre, LIMITS), LIMITS) == pre


def test_large_statement_with_a_large_table():
    pre = "".join(rf"\newcommand{{\m{chr(65 + i % 26)}{chr(97 + i // 26)}}}{{X{i}}}" for i in range(300))
    table = collect_macros(pre, LIMITS)
    text = r"Let $\mAa + \alpha_{i} \mBb$ be \emph{given}, $\frac{1}{2}\sum_k x_k$. " * 20000
    expanded, failed = expand_macros(text, table, LIMITS)
    assert failed == [] and expanded.count("X0") == 20000 and expanded.count("X27") == 20000
    assert r"\mAa" not in expanded and r"\alpha_{i}" in expanded


def test_wrapper_written_with_tex_programming_still_declares():
    pre = r"""\makeatletter
\newcommand{\mythm}[2]{\newtheorem{#1}{#2}\expandafter\def\csname #1@note\endcsname{}}
\makeatother
\mythm{conj}{Conjecture}
"""
    table = collect_macros(pre, LIMITS)
    assert "mythm" not in table
    out = prepare_declarations(pre, table, LIMITS)
    assert r"\newtheorem{conj}{Conjecture}" in out


def test_body_ending_in_a_call_takes_its_arguments_from_the_following_text():
    # The HoTT book: \def\pizero{\trunc0} used as \pizero{X}.
    pre = r"\newcommand{\trunc}[2]{\Vert #2\Vert_{#1}}\def\pizero{\trunc0}\newcommand{\wrap}{\pizero}"
    assert expand(pre, r"$\pizero{X}$ and $\wrap Y$") == (r"$\Vert X\Vert_{0}$ and $\Vert Y\Vert_{0}$", [])
    expanded, failed = expand(pre, r"at the end \pizero")
    assert expanded == r"at the end \trunc0" and failed == [r"\trunc"]


_PIECES = [r"\newcommand{\a}[1]{", r"\def\b#1#2{", r"\let\c\a", r"\renewcommand\a{", r"\DeclareMathOperator{\d}{",
           r"\a", r"\b", r"\c", r"\d", "#1", "#2", "##", "{", "}", "[", "]", "x", " ", "\\", "%", "\n", r"\def\e[#1]{"]


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(preamble=st.lists(st.sampled_from(_PIECES), max_size=30).map("".join),
       text=st.lists(st.sampled_from(_PIECES), max_size=40).map("".join))
def test_any_input_terminates_without_raising_and_stays_bounded(preamble, text):
    limits = Limits(macro_depth=8, macro_output_bytes=20_000)
    table = collect_macros(preamble, limits)
    expanded, failed = expand_macros(text, table, limits)
    assert isinstance(expanded, str) and all(name.startswith("\\") for name in failed)
    assert len(expanded) <= len(text) + 2 * limits.macro_output_bytes + 10 * len(text)
    prepare_declarations(preamble, table, limits)
