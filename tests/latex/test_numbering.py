"""Numbering from hand-written event streams: each rule of LaTeX's counters that theorems meet."""
import pytest

from transforms.latex.comments import strip_comments
from transforms.latex.declarations import prepare_declarations
from transforms.latex.definitions import collect_macros
from transforms.latex.extract import extract_submission
from transforms.latex.model import DocEvent, EnvSpec, Limits
from transforms.latex.numbering import (Numberer, count_equation_numbers, equation_wrappers, parse_format,
                                        render_value)


def spec(name, counter=None, within=None, numbered=True):
    return EnvSpec(name=name, display_name=name.title(), kind="theorem", numbered=numbered,
                   counter=counter, within=within)


def sec(level, starred=False):
    return DocEvent(0, "sectioning", level, {"starred": starred})


def stmt(env):
    return DocEvent(0, "begin_statement", env, 0)


def prepared(preamble, limits=Limits()):
    """The preamble as the extractor hands it to numbering: comments stripped, wrappers expanded."""
    preamble = strip_comments(preamble)
    return prepare_declarations(preamble, collect_macros(preamble, limits), limits)


def run(preamble, envs, events, book=False):
    numberer = Numberer(prepared(preamble), {e.name: e for e in envs}, book=book)
    numbers = [(e.type, numberer.feed(e)) for e in events]
    return [number for kind, number in numbers if kind == "begin_statement"]


def test_own_counter_per_environment():
    envs = [spec("theorem"), spec("lemma")]
    assert run("", envs, [stmt("theorem"), stmt("lemma"), stmt("theorem")]) == ["1", "1", "2"]


def test_shared_counter():
    envs = [spec("theorem"), spec("lemma", counter="theorem"), spec("corollary", counter="lemma")]
    assert run("", envs, [stmt("theorem"), stmt("lemma"), stmt("corollary"), stmt("theorem")]) == \
        ["1", "2", "3", "4"]


def test_within_section_resets_and_prefixes():
    envs = [spec("theorem", within="section"), spec("lemma", counter="theorem")]
    events = [stmt("theorem"), sec("section"), stmt("theorem"), stmt("lemma"), sec("subsection"),
              stmt("lemma"), sec("section"), stmt("lemma")]
    assert run("", envs, events) == ["0.1", "1.1", "1.2", "1.3", "2.1"]


def test_sectioning_counter_as_shared_counter_stacks_style():
    envs = [spec("lemma", counter="subsection"), spec("definition", counter="subsection")]
    events = [sec("section"), stmt("lemma"), sec("subsection"), stmt("definition"), sec("section"),
              stmt("lemma")]
    assert run("", envs, events) == ["1.1", "1.3", "2.1"]


def test_equation_as_shared_counter():
    envs = [spec("theorem", counter="equation")]
    events = [stmt("theorem"), DocEvent(0, "begin_env", "equation", 2), stmt("theorem")]
    assert run("", envs, events) == ["1", "4"]


def test_numberwithin_in_preamble():
    envs = [spec("theorem"), spec("lemma", counter="theorem")]
    events = [sec("section"), stmt("theorem"), sec("section"), stmt("lemma")]
    assert run(r"\numberwithin{theorem}{section}", envs, events) == ["1.1", "2.1"]


def test_starred_and_unnumbered_get_none():
    envs = [spec("theorem"), spec("theorem*", numbered=False)]
    assert run("", envs, [stmt("theorem*"), stmt("theorem"), stmt("unknown")]) == [None, "1", None]


def test_starred_sections_do_not_step():
    envs = [spec("theorem", within="section")]
    events = [sec("section"), sec("section", starred=True), stmt("theorem")]
    assert run("", envs, events) == ["1.1"]


def test_setcounter_and_addtocounter():
    envs = [spec("theorem", within="section")]
    events = [sec("section"), DocEvent(0, "setcounter", "theorem", 4), stmt("theorem"),
              DocEvent(0, "addtocounter", "theorem", 10), stmt("theorem"),
              DocEvent(0, "setcounter", "section", 6), sec("section"), stmt("theorem")]
    assert run("", envs, events) == ["1.5", "1.16", "7.1"]


def test_appendix_in_article_letters_sections():
    envs = [spec("theorem", within="section")]
    events = [sec("section"), sec("section"), stmt("theorem"), DocEvent(0, "appendix"), sec("section"),
              stmt("theorem"), sec("section"), stmt("theorem")]
    assert run("", envs, events) == ["2.1", "A.1", "B.1"]


def test_book_chapters_and_appendix():
    envs = [spec("theorem", within="section"), spec("exercise", within="chapter")]
    events = [sec("chapter", starred=True), sec("chapter"), sec("section"), stmt("theorem"),
              stmt("exercise"), sec("chapter"), sec("section"), stmt("theorem"), stmt("exercise"),
              DocEvent(0, "appendix"), sec("chapter"), sec("section"), stmt("theorem")]
    assert run("", envs, events, book=True) == ["1.1.1", "1.1", "2.1.1", "2.1", "A.1.1"]


def test_frontmatter_chapters_are_unnumbered():
    envs = [spec("theorem", within="chapter")]
    events = [DocEvent(0, "frontmatter"), sec("chapter"), DocEvent(0, "mainmatter"), sec("chapter"),
              stmt("theorem")]
    assert run("", envs, events, book=True) == ["1.1"]


def test_secnumdepth_stops_deep_sections_from_stepping():
    envs = [spec("theorem", counter="subsubsection")]
    events = [sec("section"), sec("subsection"), sec("subsubsection"), stmt("theorem")]
    assert run(r"\setcounter{secnumdepth}{2}", envs, events) == ["1.1.1"]
    assert run("", envs, events) == ["1.1.2"]


def test_aliascnt_through_author_wrapper_and_equations_sharing_the_register():
    # The HoTT book's setup: \defthm wraps \newaliascnt, equations use the theorem counter.
    preamble = r"""
\def\defthm#1#2#3{%
  \newaliascnt{#1}{thm}
  \newtheorem{#1}[#1]{#2}
  \aliascntresetthe{#1}
  \crefname{#1}{#2}{#3}%
}
\newtheorem{thm}{Theorem}[section]
\defthm{lem}{Lemma}{Lemmas}
\newtheorem{ex}{Exercise}[chapter]
\let\c@equation\c@thm
\numberwithin{equation}{section}
"""
    envs = [spec("thm", within="section"), spec("lem", counter="lem"), spec("ex", within="chapter")]
    events = [sec("chapter"), sec("section"), stmt("thm"), DocEvent(0, "begin_env", "equation", 1),
              stmt("lem"), stmt("ex"), sec("section"), stmt("lem"), sec("chapter"), stmt("lem"),
              stmt("ex")]
    assert run(preamble, envs, events, book=True) == ["1.1.1", "1.1.3", "1.1", "1.2.1", "2.0.1", "2.1"]


def test_numbering_reads_the_declarations_prepared_within_the_run_limits():
    # \lemma shares the theorem counter only through a wrapper two calls deep: with --macro-depth 1
    # the wrapper is left as written for discovery, and numbering must not expand it on its own.
    tex = (r"\documentclass{article}\newtheorem{theorem}{Theorem}\newtheorem{lemma}{Lemma}"
           r"\newcommand{\share}[1]{\newaliascnt{#1}{theorem}}\newcommand{\setup}{\share{lemma}}\setup"
           r"\begin{document}\begin{theorem}A\end{theorem}\begin{lemma}B\end{lemma}\end{document}")
    numbers = {}
    for depth in (32, 1):
        result = extract_submission({"a.tex": tex.encode()}, limits=Limits(macro_depth=depth))
        numbers[depth] = [s.number for s in result.statements]
    assert numbers == {32: ["1", "2"], 1: ["1", "1"]}


def test_renewed_the_formats():
    envs = [spec("theorem"), spec("conjecture")]
    preamble = r"""\renewcommand{\thetheorem}{\Roman{theorem}}
                   \renewcommand\theconjecture{\thesection.\Alph{conjecture}}"""
    events = [sec("section"), stmt("theorem"), stmt("theorem"), stmt("conjecture")]
    assert run(preamble, envs, events) == ["I", "II", "1.A"]


def test_thmtools_sibling_and_numberwithin_via_envspec():
    envs = [spec("theorem", within="section"), spec("lemma", counter="theorem"),
            spec("remark", within="subsection")]
    events = [sec("section"), sec("subsection"), stmt("lemma"), stmt("remark"), stmt("theorem")]
    assert run("", envs, events) == ["1.1", "1.1.1", "1.2"]


def test_counterwithout_and_newcounter():
    preamble = r"\newcounter{step}[section]\counterwithout{equation}{chapter}"
    numberer = Numberer(prepared(preamble), {}, book=True)
    numberer.feed(sec("chapter"))
    numberer.feed(DocEvent(0, "begin_env", "equation", 1))
    assert numberer.format("equation") == "1"
    numberer.feed(DocEvent(0, "stepcounter", "step"))
    assert numberer.format("step") == "1"


@pytest.mark.parametrize("style, n, expected", [
    ("arabic", 12, "12"), ("roman", 14, "xiv"), ("Roman", 1999, "MCMXCIX"), ("alph", 3, "c"),
    ("Alph", 26, "Z"), ("fnsymbol", 2, "\u2020"),
])
def test_render_value(style, n, expected):
    assert render_value(style, n) == expected


def test_parse_format_keeps_text_and_drops_formatting():
    assert parse_format(r"\textbf{\thesection}.\arabic{theorem}") == [
        ("macro", "textbf"), ("the", "section"), ("text", "."), ("arabic", "theorem")]
    assert parse_format(r"\@Alph\c@section") == [("Alph", "section")]
    preamble = r"\renewcommand{\thetheorem}{\textbf{\thesection}.\arabic{theorem}}"
    assert run(preamble, [spec("theorem")], [sec("section"), stmt("theorem")]) == ["1.1"]   # \textbf prints nothing


@pytest.mark.parametrize("env, body, expected", [
    ("equation", "a=b", 1),
    ("equation", r"a=b\nonumber", 0),
    ("equation*", "a=b", 0),
    ("align", r"a&=b\\ c&=d", 2),
    ("align", r"a&=b\notag\\ c&=d\\", 1),
    ("align", r"a&=\begin{aligned}x\\y\end{aligned}\\ c&=\frac{1}{2}\tag{$*$}", 1),
    ("gather", r"a\\b\\c", 3),
    ("multline", r"a\\+b", 1),
])
def test_count_equation_numbers(env, body, expected):
    assert count_equation_numbers(env, body) == expected


def test_author_display_environments_that_wrap_a_numbered_one():
    preamble = r"""
\newenvironment{narrowmultline}{\csname equation\endcsname}{\csname endequation\endcsname}
\newenvironment{narrowmultline*}{\csname equation*\endcsname}{\csname endequation*\endcsname}
\newenvironment{eqn}{\begin{align}}{\end{align}}
\newenvironment{note}{\begin{quote}}{\end{quote}}
"""
    assert equation_wrappers(preamble) == {"narrowmultline": "equation", "eqn": "align"}
    envs = {"theorem": spec("theorem", counter="equation")}
    numberer = Numberer(preamble, envs, book=False)
    for event in [DocEvent(0, "begin_env", "narrowmultline"), DocEvent(0, "begin_env", "narrowmultline*"),
                  DocEvent(0, "begin_env", "note")]:
        numberer.feed(event)
    assert numberer.feed(stmt("theorem")) == "2"


def test_body_events_renew_formats_and_numberwithin():
    envs = [spec("theorem")]
    events = [sec("section"), stmt("theorem"), DocEvent(0, "numberwithin", "theorem", "section"),
              sec("section"), stmt("theorem"), DocEvent(0, "renewthe", "theorem", (r"\roman{theorem}", None)),
              stmt("theorem")]
    assert run("", envs, events) == ["1", "2.1", "ii"]
