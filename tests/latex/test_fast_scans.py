"""The scans that skip work (a `str.find` instead of a token walk, a count that stops at its cap, a
shortcut for displays without row breaks) against plain definitions of what they compute, on
random text built from the characters that matter to each."""
import re
import unicodedata

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from transforms.latex import scan
from transforms.latex.comments import strip_line_comments
from transforms.latex.decode import _WESTERN_EXTRA, _western
from transforms.latex.mainfile import _count_upto
from transforms.latex.numbering import count_equation_numbers
from transforms.latex.render import normalize_space
from transforms.latex.segment import _token_re

COMMON = dict(deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])


def _text(pieces, max_size=40):
    return st.lists(st.sampled_from(pieces), max_size=max_size).map("".join)


def _comments_by_definition(text: str) -> str:
    """Each line up to its first `%` that is not the second character of a backslash pair."""
    lines = []
    for line in text.split("\n"):
        i = 0
        while i < len(line) and line[i] != "%":
            i += 2 if line[i] == "\\" else 1
        lines.append(line[:i] if i < len(line) else line)
    return "\n".join(lines)


@settings(max_examples=600, **COMMON)
@given(_text(["%", "\\", "\\\\", "\\%", "a", " ", "\n", "\r\n", "%%", "\\\n"]))
def test_line_comments_as_defined(text):
    assert strip_line_comments(text) == _comments_by_definition(text)


@settings(max_examples=800, **COMMON)
@given(_text(["{", "}", "[", "]", "\\", "\\{", "\\}", "\\]", "a", " ", "$"]), st.integers(1, 30))
def test_group_without_nesting_is_what_the_brace_scan_finds(text, max_len):
    for pos, opener in enumerate(text):
        if opener not in "{[":
            continue
        stop = scan._balanced_stop(text, pos + 1, min(len(text), pos + max_len), scan._GROUP_CHARS[opener],
                                   opener == "{")
        expected = None if stop is None else (text[pos + 1:stop.start()], stop.end())
        assert scan.group(text, pos, max_len) == expected


@settings(max_examples=300, **COMMON)
@given(_text(["a", " ", "\t", "\n", "\x0b", "\x1c", "\x85", "\xa0", "\u2028", "\u3000", "\x01", "\x7f",
              "e\u0301", "\u00e9"]))
def test_normalize_space_collapses_every_unicode_space(text):
    expected = unicodedata.normalize("NFC", re.sub(r"\s+", " ", re.sub(r"[\x00-\x08\x0e-\x1b\x7f]", "", text)).strip())
    assert normalize_space(text) == expected


def _equation_numbers_by_definition(env: str, body: str) -> int:
    """Rows split at `\\\\` outside braces and environments; a row numbers when it has content and
    no `\\nonumber`/`\\notag`/`\\tag` at its level. `equation` and `multline` number once, if none."""
    rows, suppressed, depth, i, start = [], [False], 0, 0, 0
    while i < len(body):
        begin_or_end = re.match(r"\\(begin|end)\{[^{}]*\}", body[i:])
        suppress = re.match(r"\\(nonumber|notag|tag)(?![A-Za-z])", body[i:])
        if begin_or_end:
            depth += 1 if begin_or_end.group(1) == "begin" else -1
            i += begin_or_end.end()
        elif suppress:
            suppressed[-1] |= depth == 0
            i += suppress.end()
        elif body.startswith("\\\\", i) and depth == 0:
            rows.append(bool(body[start:i].strip()) and not suppressed[-1])
            suppressed.append(False)
            i += 2
            start = i
        elif body[i] == "\\":
            i += 2
        else:
            depth += {"{": 1, "}": -1}.get(body[i], 0)
            i += 1
    rows.append(bool(body[start:].strip()) and not suppressed[-1])
    if env in ("equation", "multline"):
        return 0 if any(suppressed) else 1
    return sum(rows)


@settings(max_examples=800, **COMMON)
@given(st.sampled_from(["equation", "multline", "align", "gather", "eqnarray"]),
       _text(["x", " ", "\n", "\\\\", "\\", "{", "}", "\\{", "\\}", "\\nonumber", "\\notag", "\\tag{1}", "\\tagx",
              "\\begin{cases}", "\\end{cases}", "&"], max_size=25))
def test_equation_numbers_as_defined(env, body):
    assert count_equation_numbers(env, body) == _equation_numbers_by_definition(env, body)


@given(st.integers(1, 6), _text(["\\section{", "\\section*[", "\\chapter ", "x", "\\sec"], max_size=12))
@settings(max_examples=200, **COMMON)
def test_count_upto_stops_at_its_cap(cap, text):
    pattern = re.compile(r"\\(?:chapter|section)\*?\s*[\[{]")
    assert _count_upto(pattern, text, cap) == min(len(pattern.findall(text)), cap)


@pytest.mark.parametrize("definitions", [False, True])
def test_segment_token_keeps_the_expandafter_prefix_and_finds_labels(definitions):
    token = _token_re(frozenset({"label", "ollabel"}), definitions)
    text = r"x \expandafter\begin\expandafter{\x} \expandafter\relax \ollabel{a} \labelx \begin {lemma}"
    found = [(m.start(), m.group("be"), m.group("env"), m.group("label")) for m in token.finditer(text)]
    assert found == [(2, "begin", "\\x", None), (text.index("\\ollabel"), None, None, "ollabel"),
                     (text.index("\\begin {"), "begin", "lemma", None)]


@settings(max_examples=500, **COMMON)
@given(st.lists(st.sampled_from([b"a", b"Z", b" ", b"1", b"\xe9", b"\xc0", b"\xff", b"\x93", b"\x94", b"\x80", b"\xa0",
                                 b"\xbf", b"\xd7", b"\x8a", b"\x81", b"\xb5"]), max_size=40).map(b"".join))
def test_western_guess_counts_characters_as_defined(data):
    """The Windows-1252 guess counts bytes; the rule is stated over the characters they decode to."""
    try:
        text = data.decode("cp1252")
    except UnicodeDecodeError:
        assert _western(data) is None
        return
    special = [c for c in text if ord(c) > 127]
    western = sum(1 for c in special if "\u00c0" <= c <= "\u00ff" or c in _WESTERN_EXTRA)
    letters = sum(1 for c in text if c.isascii() and c.isalpha())
    plausible = special and western >= 0.95 * len(special) and len(special) <= 0.5 * letters
    assert _western(data) == (text if plausible else None)
