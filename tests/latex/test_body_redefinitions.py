"""Definitions that change printed numbers (issue 18): a `\\the<counter>` format redefined in the body from that
point on (`\\renewcommand`, `\\def`; to the end of its group, or of the document for `\\gdef`/`\\global`),
`\\edef`/`\\xdef`, which freeze counter values and formats as they are at the definition (in the body, the
preamble or a class, and in the rest of the statement that makes one), references in formats, and the class
code lipics-style classes number with (an option's flag, `\\LoadClass{article}`). Each rule on a small
document written for this test, through the real extraction."""
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


# A conference class built on article, as lipics-style classes are: its formats made with \edef tricks.
CONFERENCE_CLASS = rb"""\NeedsTeXFormat{LaTeX2e}
\ProvidesClass{confpaper}
\DeclareOption{bysection}{\let\confbysection\relax}
\DeclareOption*{\PassOptionsToClass{\CurrentOption}{article}}
\ProcessOptions
\LoadClass{article}
\RequirePackage{amsthm}
\newtheorem{theorem}{Theorem}
\newtheorem{lemma}[theorem]{Lemma}
\newtheorem{remark}{Remark}
\ifx\confbysection\relax
  \@addtoreset{theorem}{section}
  \edef\thetheorem{\expandafter\noexpand\thesection\@thmcountersep\@thmcounter{theorem}}
\fi
\edef\theremark{\expandafter\noexpand\csname thesection\endcsname-\noexpand\Alph{remark}}
\newcommand{\chapterlike}{\chapter}
"""
CONFERENCE_BODY = rb"""\begin{document}
\section{One}
\begin{theorem}A.\end{theorem}\begin{lemma}B.\end{lemma}\begin{remark}R.\end{remark}
\section{Two}
\begin{lemma}C.\end{lemma}\begin{remark}S.\end{remark}
\end{document}
"""


def conference_numbers(options: str) -> list:
    main = b"\\documentclass" + options.encode() + b"{confpaper}\n" + CONFERENCE_BODY
    result = extract_submission({"main.tex": main, "confpaper.cls": CONFERENCE_CLASS})
    assert not [e for e in result.events if e.fatal]
    return [(s.statement_text, s.number) for s in result.statements]


def test_a_class_edef_of_a_format_is_expanded_as_tex_expands_it():
    """`\\expandafter\\noexpand\\thesection` keeps `\\thesection` (article's is one token) to be printed at each
    statement, `\\@thmcountersep` is ".", `\\@thmcounter{c}` is `\\noexpand\\arabic{c}`, and
    `\\expandafter\\noexpand\\csname thesection\\endcsname` keeps the command it names."""
    assert conference_numbers("[bysection]") == [
        ("A.", "1.1"), ("B.", "1.2"), ("R.", "1-A"), ("C.", "2.1"), ("S.", "2-B")]


def test_an_option_not_given_leaves_its_flag_undefined():
    """Without the option, `\\confbysection` is undefined, `\\ifx\\confbysection\\relax` is false and the theorem
    counter is not per section; the class is built on article (`\\LoadClass`), so a `\\chapter` in its text
    does not make it a book."""
    assert conference_numbers("") == [("A.", "1"), ("B.", "2"), ("R.", "1-A"), ("C.", "3"), ("S.", "2-B")]


def test_a_preamble_edef_freezes_what_is_not_kept_from_a_one_level_expansion():
    """book's `\\thesection` is `\\thechapter.\\@arabic\\c@section`: after `\\expandafter\\noexpand` only
    `\\thechapter` stays live; the section number is frozen at its preamble value, 0, as in the PDF.
    `\\noexpand`, `\\protect` (in `\\protected@edef`) and `\\the\\value` work the same in the preamble."""
    preamble = r"""\newtheorem{lemma}{Lemma}[section]\newtheorem{note}{Note}\newtheorem{claim}{Claim}
\edef\thelemma{\expandafter\noexpand\thesection:\noexpand\arabic{lemma}}
\setcounter{note}{4}
\edef\thenote{\the\value{note}/\noexpand\roman{note}}
\makeatletter\protected@edef\theclaim{\protect\thechapter(\protect\alph{claim})}\makeatother"""
    body = r"""\chapter{One}\chapter{Two}\section{S}
\begin{lemma}L.\end{lemma}\begin{lemma}M.\end{lemma}\begin{note}N.\end{note}\begin{claim}C.\end{claim}"""
    main = f"\\documentclass{{book}}\n{preamble}\n\\begin{{document}}\n{body}\n\\end{{document}}\n".encode()
    result = extract_submission({"main.tex": main})
    assert [(s.statement_text, s.number) for s in result.statements] == [
        ("L.", "2.0:1"), ("M.", "2.0:2"), ("N.", "4/v"), ("C.", "2(a)")]


def test_an_xdef_in_a_statement_holds_from_there_on_in_its_own_text():
    """`\\xdef\\here{\\thetheorem}` inside a statement: the rest of that statement prints the value too (and later
    statements, as before); `\\thelemma` of a lemma sharing the theorem counter is that counter's format; a later
    definition in a statement replaces the value from its point on."""
    body = r"""\section{Start}
\begin{theorem}\label{t:a}\xdef\here{\thetheorem}This is Theorem \here.\end{theorem}
\begin{shared}\xdef\here{\theshared}Now \here, again \here.\end{shared}
\begin{theorem}Still \here; \def\here{gone}then \here.\end{theorem}"""
    preamble = r"\newtheorem{theorem}{Theorem}[section]\newtheorem{shared}[theorem]{Shared}"
    assert numbers(preamble, body) == [
        ("This is Theorem 1.1.", "1.1"), ("Now 1.2, again 1.2.", "1.2"), ("Still 1.2; then gone.", "1.3")]


def test_cref_autoref_and_nameref_in_a_format_print_as_in_the_text():
    """A restatement numbered `\\cref{t:main}'` prints what `\\cref` prints in a statement's text (cleveref's
    lowercase name, or the `\\crefname` the author gave), `\\autoref` hyperref's name and `\\nameref` the title,
    for labels set later too."""
    preamble = r"""\usepackage{hyperref}\usepackage{cleveref}
\newtheorem{theorem}{Theorem}[section]\newtheorem{lemma}[theorem]{Lemma}\newtheorem{prop}[theorem]{Proposition}
\crefname{prop}{Prop.}{Props.}"""
    body = r"""\section{Intro}
{\renewcommand{\thetheorem}{\cref{t:main}'}\begin{theorem}Announced.\end{theorem}\addtocounter{theorem}{-1}}
{\renewcommand{\thetheorem}{\autoref{l:key}}\begin{theorem}Key, announced.\end{theorem}\addtocounter{theorem}{-1}}
{\renewcommand{\thetheorem}{\nameref{t:main}}\begin{theorem}Named.\end{theorem}\addtocounter{theorem}{-1}}
{\renewcommand{\thetheorem}{\Cref{p:one,t:main}}\begin{theorem}Both.\end{theorem}\addtocounter{theorem}{-1}}
\section{Main}
\begin{theorem}[Main theorem]\label{t:main}Main.\end{theorem}
\begin{lemma}\label{l:key}Key.\end{lemma}
\begin{prop}\label{p:one}One.\end{prop}
\begin{theorem}See \cref{t:main}, \autoref{l:key} and \Cref{p:one,t:main}.\end{theorem}"""
    result = extracted(preamble, body)
    assert [(s.statement_text, s.number) for s in result.statements] == [
        ("Announced.", "theorem 2.1'"), ("Key, announced.", "Lemma 2.2"), ("Named.", "Main theorem"),
        ("Both.", "Prop. 2.3 and Theorem 2.1"), ("Main.", "2.1"), ("Key.", "2.2"), ("One.", "2.3"),
        ("See theorem 2.1, Lemma 2.2 and Prop. 2.3 and Theorem 2.1.", "2.4")]


def test_an_edef_of_a_format_expands_the_documents_own_macros():
    """TeX's `\\edef` expands every expandable macro: the author's `\\numsep` is its text in the format, in the
    preamble as in the body; `\\noexpand\\numsep` would keep it."""
    preamble = r"""\newcommand{\numsep}{--}\newtheorem{theorem}{Theorem}[section]
\edef\thetheorem{\noexpand\thesection\numsep\noexpand\arabic{theorem}}"""
    body = r"""\section{One}\begin{theorem}A.\end{theorem}
{\edef\thetheorem{\noexpand\Roman{section}\numsep\noexpand\alph{theorem}}\begin{theorem}B.\end{theorem}}"""
    assert numbers(preamble, body) == [("A.", "1--1"), ("B.", "I--b")]
