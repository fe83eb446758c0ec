"""Pure rules of the describe stage: answer validation, prompts, keys and context choice."""
import pytest

from describe_helpers import make_row
from transforms.describe.prompts import available_templates, first_messages, load_template, stricter_messages
from transforms.describe.records import description_key, effective_context, statement_hash
from transforms.describe.validate import clean_answer, count_sentences, rejection_reason, to_ascii


@pytest.mark.parametrize("answer, reason", [
    ("", "empty answer"),
    ("One. Two. Three. Four. Five.", "overlong: 5 sentences (at most 4)"),
    ("x" * 801, "overlong: 801 characters (at most 800)"),
    ("Ein Satz über Gruppen ÄÖÜ äöü ßßß ∀∃∈ gilt.", "not plain ASCII"),
    ("Every $n$ is a sum of four squares.", "contains LaTeX"),
    ("The map \\phi is injective.", "contains LaTeX"),
    ("Then a_i^2 + b_{j} is positive.", "contains LaTeX"),
    ("This theorem says that primes are infinite.", "refers to 'This theorem'"),
])
def test_rejections_carry_a_reason(answer, reason):
    assert rejection_reason(clean_answer(answer)).startswith(reason)


def test_acceptable_answers_pass_and_are_cleaned():
    answer = clean_answer('Description: "Every finite group of prime order is cyclic. It has no proper subgroups."')
    assert answer == "Every finite group of prime order is cyclic. It has no proper subgroups."
    assert rejection_reason(answer) is None
    assert count_sentences("A result of Poincaré, e.g. for spheres. Second one.") == 2
    assert to_ascii("Poincaré’s conjecture – proved") == "Poincare's conjecture - proved"


def test_templates_render_context_and_stricter_retry():
    template = load_template("slogan-v1")
    assert "slogan-v1" in available_templates()
    messages = first_messages(template, "theorem (Lagrange)", "$|H|$ divides $|G|$.", "body+intro", "We study groups.")
    assert messages[0]["role"] == "system" and "at most four sentences" in messages[0]["content"]
    user = messages[1]["content"]
    assert user.startswith("For context, the introduction of the paper it comes from:\nWe study groups.")
    assert "Describe the following theorem (Lagrange)." in user and user.endswith("$|H|$ divides $|G|$.")
    assert "introduction" not in first_messages(template, "lemma", "S.", "body", None)[1]["content"]
    retry = stricter_messages(template, messages, "Bad $x$", "contains LaTeX or math symbols")
    assert [m["role"] for m in retry] == ["system", "user", "assistant", "user"]
    assert retry[3]["content"].startswith("That answer was rejected: contains LaTeX or math symbols.")
    with pytest.raises(ValueError, match="unknown describe template"):
        load_template("slogan-v0")


def test_keys_ignore_layout_but_not_content():
    a = make_row(0, "Every  bounded\nsequence converges.")
    b = make_row(5, "Every bounded sequence converges.", paper="other")
    assert statement_hash(a) == statement_hash(b)
    assert statement_hash(a) != statement_hash(make_row(0, "Every bounded sequence converges.", title="BW"))
    assert statement_hash(a) != statement_hash({**a, "kind": "lemma"})
    key = description_key(statement_hash(a), "body", "slogan-v1", "m")
    assert key != description_key(statement_hash(a), "body+abstract", "slogan-v1", "m")
    assert key != description_key(statement_hash(a), "body", "slogan-v1", "other-model")


def test_context_falls_back_to_body_when_missing():
    row = make_row(0, "S.", _abstract="  An   abstract. ")
    assert effective_context("body+abstract", row, 100) == ("body+abstract", "An abstract.")
    assert effective_context("body+intro", row, 100) == ("body", None)
    assert effective_context("body+abstract", row, 5) == ("body+abstract", "An ab")
