"""Property tests: random and mutated LaTeX never makes an extractor entry point raise or hang.

Mutations start from slices of ../shared/corpora when present (else from snippets written here):
cut anywhere, with braces, brackets, `\\begin`/`\\end`, `%`, `$` and `\\input` spliced in. About
2,300 examples per run in total.
"""
import builtins
import pathlib
import random
import time

import pytest
from hypothesis import HealthCheck, Phase, given, settings, strategies as st

from transforms.latex import extract as extraction
from transforms.latex.comments import strip_comments
from transforms.latex.decode import decode_tex
from transforms.latex.extract import extract_submission, segment_only
from transforms.latex.model import Limits
from transforms.latex.references import NO_REFERENCES, resolve_references
from transforms.latex.render import fast_prose, normalize_space, render_text, _converter

SHARED = pathlib.Path(__file__).resolve().parents[3] / "shared" / "corpora"
SNIPPETS = [
    r"\begin{theorem}[Title $x$]\label{t} Let $f\colon X\to Y$. \end{theorem}\begin{proof}Ok.\end{proof}",
    r"\newtheorem{lem}[theorem]{Lemma}\newcommand{\R}[1][x]{\mathbb{R}^{#1}}\def\a#1#2{#2#1}",
    r"\section{Intro}\subsection*{A}\setcounter{section}{3}\appendix\chapter{B}",
    r"\begin{verbatim}\begin{theorem}\end{verbatim} \verb|\begin{lemma}| \iffalse x \fi % c",
    r"$$a$$ \[b\] \(c\) \begin{align}x\\y\end{align} \$ \% {[}]",
]
LIMITS = Limits(timeout_s=2.0)
TOKENS = ["{", "}", "[", "]", "$", "$$", "%", "\\", "\\begin{theorem}", "\\end{theorem}", "\\begin{proof}",
          "\\end{proof}", "\\label{x}", "\\input{main}", "\\iffalse", "\\fi", "\\verb", "\n\n", "#1",
          "\\newtheorem{", "\\section{", "\\begin{comment}", "\\def\\x#1{", "\\end{document}", "\\begin{document}"]


def _corpus_slices(n=300, width=1500):
    files = sorted(SHARED.glob("*/*/**/*.tex"))[:400] if SHARED.is_dir() else []
    rng = random.Random(7)
    slices = []
    for path in rng.sample(files, min(len(files), 120)):
        text = path.read_text("utf-8", "replace")
        for _ in range(3):
            start = rng.randrange(max(len(text) - width, 1))
            slices.append(text[start:start + rng.randrange(50, width)])
    return slices[:n] or SNIPPETS


SOURCES = _corpus_slices() + SNIPPETS


@st.composite
def mutated_latex(draw):
    text = draw(st.sampled_from(SOURCES))
    for _ in range(draw(st.integers(0, 6))):
        i = draw(st.integers(0, len(text)))
        op = draw(st.sampled_from(["insert", "delete", "random"]))
        if op == "insert":
            text = text[:i] + draw(st.sampled_from(TOKENS)) + text[i:]
        elif op == "delete":
            text = text[:i] + text[i + draw(st.integers(1, 40)):]
        else:
            text = text[:i] + draw(st.text(max_size=12)) + text[i:]
    return text


def _document(body: str, preamble: str = "") -> bytes:
    return ("\\documentclass{article}\\newtheorem{theorem}{Theorem}\\newtheorem{lemma}[theorem]{Lemma}"
            + preamble + "\\begin{document}" + body + "\\end{document}").encode("utf-8", "surrogatepass")


def _is_crash(event) -> bool:
    """An event that records an exception of the extractor's own code (a bug), not a finding.

    Findings have their own names ("missing-include", "timeout", ...). Only latex2text, a third-party
    parser with a regex fallback behind it, may fail with a Python exception on hostile text.
    """
    raised = getattr(builtins, event.error_class, None)
    return isinstance(raised, type) and issubclass(raised, BaseException) and event.stage != "render"


def _check(result, started):
    assert time.process_time() - started < LIMITS.timeout_s + 3
    assert isinstance(result.statements, list)
    for event in result.events:
        assert event.stage and event.error_class
        assert not _is_crash(event), f"the extractor crashed: {event}"
    assert [s.ordinal for s in result.statements] == list(range(len(result.statements)))


COMMON = dict(deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def extract_submission_property(body, preamble, included):
    files = {"main.tex": _document(body + "\\input{part}", preamble[:400]), "part.tex": included.encode("utf-8", "replace")}
    started = time.process_time()
    _check(extract_submission(files, limits=LIMITS), started)


def segment_only_property(body, raw):
    started = time.process_time()
    _check(segment_only({"a.tex": _document(body), "b.tex": raw, "c/d.sty": raw}, limits=LIMITS), started)


EXTRACT_INPUTS = dict(body=mutated_latex(), preamble=mutated_latex(), included=mutated_latex())
SEGMENT_INPUTS = dict(body=mutated_latex(), raw=st.binary(max_size=300))
test_extract_submission_never_raises = settings(max_examples=700, **COMMON)(
    given(**EXTRACT_INPUTS)(extract_submission_property))
test_segment_only_never_raises = settings(max_examples=600, **COMMON)(given(**SEGMENT_INPUTS)(segment_only_property))


@pytest.mark.parametrize("prop, inputs", [(extract_submission_property, EXTRACT_INPUTS),
                                          (segment_only_property, SEGMENT_INPUTS)])
def test_property_checks_fail_when_the_segmenter_raises(prop, inputs, monkeypatch):
    """The two properties above are worth something only if a crashing extractor fails them."""
    def broken_segment(*args, **kwargs):
        raise IndexError("segmenter bug")

    monkeypatch.setattr(extraction, "segment", broken_segment)
    quick = settings(max_examples=5, phases=[Phase.generate], **COMMON)(given(**inputs)(prop))
    with pytest.raises(AssertionError, match="crashed"):
        quick()


@settings(max_examples=500, **COMMON)
@given(text=mutated_latex())
def test_render_and_comments_never_raise(text):
    rendered, events = render_text(text)
    assert isinstance(rendered, str) and all(e.stage == "render" for e in events)
    assert strip_comments(text).count("\n") == text.count("\n")


@settings(max_examples=300, **COMMON)
@given(data=st.binary(max_size=400))
def test_decode_never_raises(data):
    text, encoding = decode_tex(data)
    assert isinstance(text, str) and encoding


FAST_PIECES = ["word ", "two words", "\\emph{x}", "\\textbf{a b}", "\\cref{a:b}", "\\ref{x}", "\\cite[p.~3]{k}",
               "\\label{l}", "~", "--", "---", "``q''", "\\%", "\\&", "\\_", "{g}", "\\ldots", "\\noindent ",
               "\\begin{itemize}", "\\end{itemize}", "\\item ", "\\begin{enumerate}[(a)]", "\\end{enumerate}",
               "\\textit{\\emph{n}}", ", ", ". ", "\\qedhere", "\\color{red}", "\\index{i}", "\\\\", "\\ ",
               # what pylatexenc does not know: an author's macros and environments, and the specials
               "\\cG", "\\fS ", "\\myop*", "\\myop[o]{a}", "\\begin{mathpar}", "\\end{mathpar}",
               "\\begin{claim}[T]", "\\and ",
               "\\footnote{n \\emph{m}}", "\\footnote{a\\cG b}", "*", "[", "]", "!`", "?`", "!", "?", "`",
               # what the fast path hands to latex2text one construct at a time (issue 18's census)
               "\\'e", '\\"{o}', "\\v c", "\\c{c}", "\\'\\i", "\\L", "\\vdash", "\\in ", "\\lnot", "\\qquad ",
               "\\vspace*{2pt}", "\\\\[2pt]", "\\item[(b)]", "\\begin{enumerate}[label=(\\roman*)]", "&", "_", "^",
               "\\begin{tabular}{cc}", "\\end{tabular}", "\\begin{lemma}[T]", "\\end{lemma}", "\\mathsf{X}",
               "\\texttt{t}", "\\fcolorbox{a}{b}{c}", "\\setlength{\\parskip}{1pt}", "\\mbox{m}",
               # what the fast path prints itself since: control symbols and the characters pylatexenc reads as text
               "\\;", "\\:", "\\!", "\\{", "\\}", "\\-", "\\$", "#", "a_b", "x^2", "_{1}", "^{\\emph{e}}"]


@settings(max_examples=300, **COMMON)
@given(pieces=st.lists(st.sampled_from(FAST_PIECES), max_size=12))
def test_fast_prose_renders_exactly_like_latex2text(pieces):
    prose = resolve_references("".join(pieces), NO_REFERENCES, lambda printed: "\ue0000\ue001")
    fast = fast_prose(prose)
    if fast is not None:
        assert normalize_space(fast) == normalize_space(_converter.latex_to_text(prose))


@pytest.mark.parametrize("prose", [r"Let \'etale maps \vdash x", r"\begin{enumerate}[label=(\alph*)]\item a\end{enumerate}",
                                   r"a\\[2pt] b \vspace*{1ex} c", r"\item[(i)] P\v{c}ech \& Erd\H{o}s"])
def test_common_constructs_take_the_fast_path_and_render_as_latex2text_does(prose):
    """The commonest reasons prose reached latex2text whole on the shared corpora are now rendered
    construct by construct: the fast path vouches for the prose, and prints what latex2text prints."""
    fast = fast_prose(prose)
    assert fast is not None and normalize_space(fast) == normalize_space(_converter.latex_to_text(prose))


@pytest.mark.parametrize("size", [2_000_000])
def test_pathological_single_line_input_finishes(size):
    """Bounded by the per-paper timeout, which counts CPU time: so does this test (a loaded machine
    stretches wall time, not the work done)."""
    line = ("{[$\\begin{theorem}" * (size // 18))[:size]
    started = time.process_time()
    result = extract_submission({"a.tex": _document(line)}, limits=Limits(timeout_s=10))
    assert time.process_time() - started < 15 and isinstance(result.events, list)
