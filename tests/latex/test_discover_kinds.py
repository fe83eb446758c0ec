"""Theorem-environment discovery from declarations, and display titles to canonical kinds."""
import pytest

from transforms.latex.discover import discover
from transforms.latex.kinds import kind_for


@pytest.mark.parametrize("title,env,kind", [
    ("Main Theorem", "mainthm", "theorem"), ("Theorem A", "thmA", "theorem"), ("Key Lemma", "kl", "lemma"),
    ("Proposition", "prop", "proposition"), ("Corollary", "cor", "corollary"), ("Definition", "defn", "definition"),
    ("Conjecture", "conj", "conjecture"), ("Claim", "claim", "claim"), ("Remark", "rem", "remark"),
    ("Example", "ex", "example"), ("Exercise", "exer", "exercise"), ("Fact", "fact", "fact"),
    ("Observation", "obs", "observation"), ("Assumption", "ass", "assumption"), ("Axiom", "ax", "axiom"),
    ("Notation", "notn", "notation"), ("Problem", "prob", "problem"), ("Question", "qu", "question"),
    ("Hypothesis", "hyp", "hypothesis"), ("Satz", "satz", "theorem"), ("Théorème", "thm", "theorem"),
    ("\\lemmaname", "lem", "lemma"), ("Widget", "widget", "other"), ("Proof", "pf", "proof"),
    ("{\\bfseries Definition-Lemma}", "dl", "definition"),
])
def test_kind_for(title, env, kind):
    assert kind_for(title, env) == kind


def test_newtheorem_three_forms_and_starred():
    found = discover(r"""
\newtheorem{theorem}{Theorem}[section]
\newtheorem{lemma}[theorem]{Lemma}
\newtheorem*{mainthm}{Main Theorem}
\newtheorem{conj} {Conjecture}
""")
    th, lem, main, conj = (found.envs[n] for n in ("theorem", "lemma", "mainthm", "conj"))
    assert (th.within, th.counter, th.numbered) == ("section", None, True)
    assert (lem.counter, lem.kind) == ("theorem", "lemma")
    assert (main.numbered, main.kind, main.display_name) == (False, "theorem", "Main Theorem")
    assert conj.kind == "conjecture"


def test_declaretheorem_spnewtheorem_mdtheorem_tcb():
    found = discover(r"""
\declaretheorem[name=Satz, numberwithin=chapter]{satz}
\declaretheorem[sibling=satz]{lemma}
\declaretheorem{definition}[style=definition,numbered=no]
\spnewtheorem{fact}[satz]{Fact}{\bfseries}{\itshape}
\spnewtheorem*{remark*}{Remark}{\itshape}{\rmfamily}
\newmdtheoremenv[linecolor=red]{boxed}[satz]{Boxed Theorem}
\newtcbtheorem[number within=section]{mytheo}{My Theorem}{colback=green}{th}
""")
    envs = found.envs
    assert (envs["satz"].display_name, envs["satz"].within, envs["satz"].kind) == ("Satz", "chapter", "theorem")
    assert (envs["lemma"].display_name, envs["lemma"].counter) == ("Lemma", "satz")
    assert envs["definition"].numbered is False
    assert (envs["fact"].counter, envs["remark*"].numbered) == ("satz", False)
    assert (envs["boxed"].counter, envs["boxed"].kind) == ("satz", "theorem")
    assert envs["mytheo"].within == "section" and found.tcb_label_prefix["mytheo"] == "th"


def test_proof_declared_as_theorem_is_a_proof():
    found = discover(r"\theoremstyle{nonumberplain}\theorembodyfont{\normalfont}\newtheorem*{proof}{Proof}"
                     r"\newtheorem{pf}{Beweis}")
    assert "proof" not in found.envs and {"proof", "pf"} <= found.proof_envs


def test_newenvironment_wrappers_comment_and_verbatim_envs():
    found = discover(r"""
\newtheorem{thm}{Theorem}
\newenvironment{mainthm}[1][]{\begin{thm}[#1]}{\end{thm}}
\newenvironment{myproof}{\begin{proof}}{\end{proof}}
\newenvironment{hidden}{\comment}{\endcomment}
\excludecomment{answer}
\lstnewenvironment{code}{}{}
\newenvironment{eqwrap}{\csname equation\endcsname}{\csname endequation\endcsname}
""")
    assert found.envs["mainthm"].kind == "theorem" and found.envs["mainthm"].declared_by == "\\newenvironment"
    assert "myproof" in found.proof_envs
    assert {"hidden", "answer"} <= found.comment_envs and "code" in found.verbatim_envs
    assert found.equation_aliases == {"eqwrap": "equation"}


def test_standard_names_used_without_declaration_count():
    found = discover(r"\documentclass{llncs}", r"\begin{theorem}x\end{theorem}\begin{lemma}y\end{lemma}")
    assert set(found.envs) == {"theorem", "lemma"} and found.envs["lemma"].declared_by == "builtin"


def test_label_macros_found_from_definitions():
    found = discover(r"\newcommand*{\ollabel}[1]{\label{#1}\marginpar{#1}}\newcommand{\other}[1]{#1}")
    assert found.label_macros == {"label", "ollabel"}


def test_title_macros_are_expanded_for_display():
    found = discover(r"\newtheorem{lem}{\lemmaname}", expand=lambda s: s.replace("\\lemmaname", "Lemma"))
    assert found.envs["lem"].display_name == "Lemma"
