"""The linear segmentation pass: statements, titles, labels, sections, proofs, nesting, events."""
from transforms.latex.discover import discover
from transforms.latex.segment import AFTER_END, UNCLOSED, segment

PREAMBLE = r"""
\newtheorem{theorem}{Theorem}[section]
\newtheorem{lemma}[theorem]{Lemma}
\newtheorem{remark}{Remark}
\newcommand{\ollabel}[1]{\label{#1}}
"""


def _seg(body, preamble=PREAMBLE):
    return segment(body, discover(preamble, body))


def test_title_balanced_with_math_braces_and_brackets():
    seg = _seg(r"\begin{theorem}[Zorn's lemma for $\{x_i\}$ in {[0,1]}]Body.\end{theorem}")
    (s,) = seg.statements
    assert (s.title, s.body) == (r"Zorn's lemma for $\{x_i\}$ in {[0,1]}", "Body.")


def test_bracket_after_blank_line_is_not_a_title():
    (s,) = _seg("\\begin{theorem}\n\n[0,1] is compact.\\end{theorem}").statements
    assert s.title is None and s.body.startswith("[0,1]")


def test_label_first_later_in_body_and_custom_label_macro():
    seg = _seg(r"\begin{theorem}Let $x$. \begin{equation}\label{eq}x\end{equation}\label{thm}\end{theorem}"
               r"\begin{lemma}\ollabel{lem:ol}y\end{lemma}")
    assert [s.label for s in seg.statements] == ["thm", "lem:ol"]


def test_section_path_and_events():
    body = (r"\chapter{C}\section{S1}\subsection[short]{Sub}\begin{theorem}a\end{theorem}"
            r"\section*{S2}\setcounter{theorem}{4}\begin{lemma}b\end{lemma}\appendix\section{App}"
            r"\begin{equation}x\end{equation}")
    seg = _seg(body)
    assert [s.section_path for s in seg.statements] == [("C", "S1", "Sub"), ("C", "S2")]
    kinds = [(e.type, e.name, e.arg) for e in seg.doc_events]
    assert kinds == [("sectioning", "chapter", {"starred": False}), ("sectioning", "section", {"starred": False}),
                     ("sectioning", "subsection", {"starred": False}), ("begin_statement", "theorem", 0),
                     ("sectioning", "section", {"starred": True}), ("setcounter", "theorem", 4),
                     ("begin_statement", "lemma", 1), ("appendix", "", None),
                     ("sectioning", "section", {"starred": False}), ("begin_env", "equation", 1)]


def test_proof_attached_only_when_it_directly_follows():
    seg = _seg(r"\begin{theorem}a\end{theorem} \begin{proof}P1\end{proof}"
               r"\begin{lemma}b\end{lemma} Some text. \begin{proof}P2\end{proof}")
    assert [s.proof for s in seg.statements] == ["P1", None]


def test_nested_statements_both_extracted_in_document_order():
    seg = _seg(r"\begin{remark}outer \begin{theorem}inner\end{theorem} tail\end{remark}")
    assert [(s.ordinal, s.env) for s in seg.statements] == [(0, "remark"), (1, "theorem")]
    assert "inner" in seg.statements[0].body and seg.statements[1].body == "inner"


def test_verbatim_listings_minted_and_verb_hide_statements():
    body = ("\\begin{verbatim}\\begin{theorem}no\\end{theorem}\\end{verbatim}"
            "\\begin{lstlisting}\\begin{lemma}no\\end{lemma}\\end{lstlisting}"
            "\\begin{minted}{latex}\\begin{lemma}no\\end{lemma}\\end{minted}"
            "\\verb|\\begin{theorem}| \\begin{lemma}yes\\end{lemma}")
    assert [s.body for s in _seg(body).statements] == ["yes"]


def test_comment_like_environments_cut_from_body_and_slogan_kept():
    pre = PREAMBLE + r"\excludecomment{history}"
    body = (r"\begin{lemma}\label{l}\begin{slogan}Short story.\end{slogan}"
            r"Statement.\begin{history}Old.\end{history}\begin{reference}[X]\end{reference} End.\end{lemma}")
    (s,) = _seg(body, pre).statements
    assert s.slogan == "Short story." and s.label == "l"
    assert "Old" not in s.body and "[X]" not in s.body and "Statement." in s.body and "End." in s.body


def test_unclosed_and_after_end_document_are_listed():
    text = r"\begin{theorem}never closed \begin{lemma}ok\end{lemma}"
    seg = segment(text + r"\end{document}\begin{lemma}late\end{lemma}", discover(PREAMBLE, text),
                  0, len(text))
    assert [s.body for s in seg.statements] == ["ok"] and seg.statements[0].ordinal == 0
    assert sorted(seg.skipped) == [("lemma", AFTER_END), ("theorem", UNCLOSED)]


def test_mismatched_end_closes_inner_frames():
    seg = _seg(r"\begin{theorem}\begin{itemize}\item a\end{theorem}")
    assert [s.body for s in seg.statements] == [r"\begin{itemize}\item a"]


def test_tcolorbox_theorem_title_and_label():
    pre = r"\newtcbtheorem{mytheo}{My Theorem}{}{th}"
    (s,) = segment(r"\begin{mytheo}{Nice}{key}Body\end{mytheo}", discover(pre, "")).statements
    assert (s.title, s.label, s.body) == ("Nice", "th:key", "Body")


def test_equation_rows_counted_for_shared_counters():
    seg = _seg(r"\begin{align}a\\b\nonumber\\c\end{align}")
    assert [(e.type, e.arg) for e in seg.doc_events] == [("begin_env", 2)]


def test_solution_inside_an_exercise_is_cut_and_kept_as_its_proof():
    pre = PREAMBLE + r"\newtheorem{exercise}{Exercise}"
    (s,) = _seg(r"\begin{exercise}Show $x$.\begin{solution}Because $y$.\end{solution}\end{exercise}"
                r"\begin{solution}outside a statement: ordinary text\end{solution}", pre).statements
    assert (s.body, s.proof) == ("Show $x$.", "Because $y$.")


def test_sectioning_command_named_but_not_used_is_no_event():
    seg = _seg(r"\titleformat{\chapter}[display]{\bfseries}\let\oldsection\section\chapter{Real}")
    assert [(e.type, e.name) for e in seg.doc_events] == [("sectioning", "chapter")]
