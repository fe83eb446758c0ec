"""Plain-text rendering: prose via pylatexenc, math verbatim between $, failures fall back."""
import pytest

from transforms.latex.render import render_text, split_math


def test_math_kept_verbatim_prose_rendered():
    text, events = render_text(r"Let $G$ be a \emph{finite} group, \(H\le G\) and \[ |G| = \{1\} \]. 50\%.")
    assert text == r"Let $G$ be a finite group, $H\le G$ and $$|G| = \{1\}$$ . 50%."
    assert events == []


def test_display_environments_labels_dropped():
    text, _ = render_text("A \\begin{align*} a &= b \\\\ c &= d \\label{x}\\end{align*} B")
    assert text == r"A $$\begin{aligned}a &= b \\ c &= d\end{aligned}$$ B"


def test_escaped_dollar_is_not_math_and_unbalanced_math_is_prose():
    assert split_math(r"costs \$5")[1] == []
    assert render_text("odd $x")[0] == "odd $x"


def test_whitespace_and_nfc_normalized():
    assert render_text("Cafe\u0301 \n\n  ok")[0] == "Caf\u00e9 ok"


def test_openlogic_markup_readable():
    assert render_text(r"If !!a{formula} $A$ and !A{sentence} hold, all !!^{structure} are !!{model}.")[0] == \
        "If a formula $A$ and A sentence hold, all structures are model."


def test_pylatexenc_failure_falls_back_and_is_recorded():
    # latex2text raises KeyError on \footnote without its argument; the fallback leaves no TeX behind.
    text, events = render_text(r"A \textbf{bold} claim\postdisplaypenalty=100 about $x$\footnote", "f.tex:3")
    assert text == "A bold claim about $x$"
    assert [(e.stage, e.error_class, e.location) for e in events] == [("render", "KeyError", "f.tex:3")]


@pytest.mark.parametrize("latex", [r"\frac", r"\begin{enumerate}\item", r"{{{", r"\verb", "}}}", r"\\\\[", "$$", "\\"])
def test_real_pylatexenc_on_broken_input_never_raises(latex):
    text, _ = render_text(latex)
    assert isinstance(text, str)


def test_drawings_are_left_out_of_the_text():
    assert render_text(r"Consider \begin{tikzpicture}\draw (0,0) -- (1,1);\end{tikzpicture} this.")[0] == \
        "Consider this."


def test_huge_prose_skips_latex2text_and_says_so():
    """Prose the fast path cannot vouch for (a `\\footnote` without its text, on which latex2text fails),
    too much of it: the regex rendering, said so."""
    text, events = render_text("\\mbox{word} " * 20_000 + "\\footnote", "big.tex:1")
    assert text.startswith("word word") and [e.error_class for e in events] == ["too-large-for-latex2text"]


def _references():
    from transforms.latex.model import LabelTarget
    from transforms.latex.references import References
    labels = {"lem:a": LabelTarget("lem:a", "statement", "2.3", "Lemma", 0),
              "lem:b": LabelTarget("lem:b", "statement", "2.4", "Lemma", 1),
              "eq:x": LabelTarget("eq:x", "equation", "4.1", "Equation"),
              "sec:s": LabelTarget("sec:s", "section", "3", "Section", title="Setting")}
    return References(labels, {"knuth": "Knu84"}, capitalise=True)


@pytest.mark.parametrize("latex, printed", [
    (r"By \cref{lem:a,lem:b}.", "By Lemmas 2.3 and 2.4."),
    (r"By Lemma~\ref{lem:a} and \eqref{eq:x}.", "By Lemma 2.3 and (4.1)."),
    (r"See \autoref{sec:s}, \nameref{sec:s} and \ref{missing}.", "See Section 3, Setting and ??."),
    (r"As in \cite[p.~4]{knuth,other}.", "As in [Knu84, other, p. 4]."),
    (r"By \cite[\href{http://x.org/0117}{Tag 0117}]{knuth}.", "By [Knu84, Tag 0117]."),
    (r"A \href{http://x.org}{link}\index{link!web|defstyle} to \hyperref[lem:a]{it}\label{l}.", "A link to it."),
    (r"Hy\-phen \emph{x}\xspace and \ensuremath{x^2}\xspace.", "Hyphen x and $x^2$."),
    (r"Uses\uses{lem:a}\lean{Foo.bar}\leanok{} nothing.", "Uses nothing."),
])
def test_references_print_as_the_pdf_does(latex, printed):
    assert render_text(latex, references=_references()) == (printed, [])


def test_cref_without_labels_prints_like_a_missing_label():
    """An author's macro can pass `\\cref{}` nothing: LaTeX prints ?? and the paper must not fail."""
    from transforms.latex.references import NO_REFERENCES, resolve_references

    assert resolve_references(r"see \cref{} and \Cref{}.", NO_REFERENCES, lambda text: text) == "see ?? and ??."


def test_math_put_back_in_order_and_stray_placeholders_dropped():
    """Math returns at its placeholders; a private-use placeholder already in the source that names
    no math piece prints nothing."""
    text, _ = render_text("a \ue0009\ue001 $x$ b \\[y\\] c \\(z\\)")
    assert text == "a $x$ b $$y$$ c $z$"
