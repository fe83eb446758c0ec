"""Decoding (UTF-8, declared inputenc, detector) and comment removal that keeps line numbers."""
from transforms.latex.comments import strip_comment_environments, strip_comments, strip_iffalse, strip_line_comments
from transforms.latex.decode import declared_encoding, decode_tex, looks_binary


def test_utf8_first_and_bom_dropped():
    assert decode_tex("é".encode("utf-8-sig")) == ("é", "utf-8")


def test_declared_inputenc_wins_over_detector():
    data = "\\usepackage[latin1]{inputenc}\nCaf\xe9 na\xefve".encode("latin-1")
    assert declared_encoding(data) == "latin-1"
    assert decode_tex(data) == ("\\usepackage[latin1]{inputenc}\nCafé naïve", "latin-1")


def test_windows_1252_without_declaration_is_read_as_written():
    text = "Le \u201cprix\u201d d\u2019un th\u00e9or\u00e8me \u2014 5 \u20ac, caract\u00e8res."
    assert decode_tex(text.encode("cp1252")) == (text, "cp1252")


def test_other_encodings_go_to_the_detector_and_decoding_never_fails():
    text, encoding = decode_tex("\u041f\u0440\u0438\u043c\u0435\u0440 \u0442\u0435\u043e\u0440\u0435\u043c\u044b".encode("cp1251") * 5)
    assert encoding not in ("utf-8", "cp1252") and isinstance(text, str)
    assert decode_tex(b"\xff\xfe\x81\x8d")[1]


def test_binary_data_is_recognised():
    assert looks_binary(b"%PDF-1.4\x00\x01")
    assert not looks_binary(b"\\documentclass{article}")


def test_line_comments_respect_escaped_percent_and_keep_newlines():
    text = "a % gone\n50\\% kept % gone\n\\\\% gone too\n"
    assert strip_line_comments(text) == "a \n50\\% kept \n\\\\\n"


def test_comment_environment_removed_lines_kept():
    text = "x\n\\begin{comment}\n\\begin{theorem}no\\end{theorem}\n\\end{comment}\ny"
    out = strip_comment_environments(text)
    assert "theorem" not in out and out.count("\n") == text.count("\n") and out.endswith("y")


def test_iffalse_nested_and_else_branch():
    text = "a\\iffalse hidden \\ifx\\a\\b inner\\fi still hidden\\fi b \\iffalse x\\else shown\\fi"
    out = strip_iffalse(text)
    assert "hidden" not in out and "inner" not in out and out.startswith("a") and "b" in out and "shown" in out
    assert "x" not in out.replace("\\fi", "")


def test_iffalse_ignores_argument_taking_if_macros():
    text = "\\iffalse \\ifthenelse{a}{b}{c} gone \\fi kept"
    assert strip_iffalse(text).strip() == "kept"


def test_strip_comments_is_linear_on_a_long_single_line():
    line = ("x\\%y" * 2_000_000) + "% tail"
    assert strip_comments(line).endswith("x\\%y")


def test_an_iffalse_copied_by_let_opens_no_comment():
    text = ("\\let\\ifdraft\\iffalse\n\\expandafter\\let\\csname ifproofs\\endcsname=\\iffalse\n\\newif\\ifshort\n"
            "kept \\iffalse\\let\\ifother\\iffalse gone\\fi kept too")
    out = strip_iffalse(text)
    assert out.count("\n") == text.count("\n") and "gone" not in out
    assert out.split() == ["\\let\\ifdraft\\iffalse", "\\expandafter\\let\\csname", "ifproofs\\endcsname=\\iffalse",
                           "\\newif\\ifshort", "kept", "kept", "too"]
