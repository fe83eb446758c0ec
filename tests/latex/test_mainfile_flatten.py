"""Main-file detection and include flattening with a map back to (file, line)."""
from transforms.latex.flatten import flatten
from transforms.latex.mainfile import find_main_file, rank_main_candidates
from transforms.latex.model import Limits

DOC = "\\documentclass{article}\n\\title{T}\n\\begin{document}\n\\section{A}\n\\end{document}\n"


def test_main_file_prefers_document_over_included_and_beamer():
    texts = {"talk.tex": "\\documentclass{beamer}\\begin{document}\\end{document}",
             "paper.tex": DOC + "\\input{sec1}", "sec1.tex": "\\section{B}",
             "old/paper.tex": DOC}
    assert find_main_file(texts) == "paper.tex"
    assert [p for p, _ in rank_main_candidates(texts)][:2] == ["paper.tex", "old/paper.tex"]


def test_main_file_penalises_files_that_others_include():
    texts = {"a.tex": DOC + "\\include{b}", "b.tex": DOC}
    assert find_main_file(texts) == "a.tex"


def test_no_main_file_among_fragments():
    assert find_main_file({"a.tex": "\\section{x}", "b.tex": "y"}) is None


def _flatten(files, main="main.tex", **kw):
    return flatten(files.get, sorted(files), main, **kw)


def test_input_include_subfile_import_and_source_map():
    files = {
        "main.tex": "L1\n\\input{ch/one}\nL3\n\\include{two}\n\\subimport{sub/}{three}\nend",
        "ch/one.tex": "one1\none2",
        "two.tex": "two1",
        "sub/three.tex": "three1\n\\input{four}",
        "sub/four.tex": "four1",
    }
    flat = _flatten(files)
    text = flat.text
    for word in ("one2", "two1", "three1", "four1", "end"):
        assert word in text
    offsets = [text.index(w) for w in ("one2", "L3", "two1", "four1", "end")]
    where = flat.source_map.locate_all(text, offsets)
    assert [where[o] for o in offsets] == [("ch/one.tex", 2), ("main.tex", 3), ("two.tex", 1),
                                             ("sub/four.tex", 1), ("main.tex", 6)]
    assert flat.events == []


def test_bare_input_and_subfile_body_only():
    files = {"main.tex": "\\input part \\subfile{s}", "part.tex": "P",
             "s.tex": "\\documentclass[main]{subfiles}\n\\begin{document}\nBODY\n\\end{document}"}
    text = _flatten(files).text
    assert "P" in text and "BODY" in text and "subfiles" not in text


def test_cycle_missing_and_depth_are_events_not_errors():
    files = {"main.tex": "\\input{a}\\input{nope}", "a.tex": "A\\input{b}", "b.tex": "B\\input{a}"}
    flat = _flatten(files)
    classes = sorted(e.error_class for e in flat.events)
    assert classes == ["include-cycle", "missing-include"]
    assert flat.text.count("A") == 1
    deep = {"main.tex": "\\input{f0}", **{f"f{i}.tex": f"\\input{{f{i + 1}}}" for i in range(30)}}
    assert [e.error_class for e in _flatten(deep, limits=Limits(include_depth=5)).events] == ["include-depth"]


def test_includes_never_leave_the_submission():
    files = {"main.tex": "\\input{../../etc/passwd}\\input{/etc/passwd}"}
    assert [e.error_class for e in _flatten(files).events] == ["missing-include", "missing-include"]


def test_local_package_inlined_and_path_macros_expanded():
    files = {"main.tex": "\\usepackage{amsthm,mythm}\\input{\\dir/x}", "sty/mythm.sty": "\\newtheorem{lem}{Lemma}",
             "content/x.tex": "X"}
    flat = _flatten(files, expand_path=lambda s: s.replace("\\dir", "content"))
    assert "\\newtheorem{lem}{Lemma}" in flat.text and "X" in flat.text and flat.events == []


def test_endinput_stops_the_file():
    assert "after" not in _flatten({"main.tex": "a\\input{b}", "b.tex": "b\\endinput after"}).text


def test_endinput_inside_a_macro_body_and_include_being_defined_are_not_run():
    files = {"main.tex": "\\input{p.sty}AFTER", "p.sty": "\\newcommand*{\\hook}[1]{\n\\endinput\n}\nKEPT"
             "\\DeclareDocumentCommand \\olimport { s o m o }{\\subfile{#3}}"}
    flat = _flatten(files)
    assert "KEPT" in flat.text and "AFTER" in flat.text and flat.ignored == [] and flat.events == []


def test_statements_after_endinput_are_remembered():
    flat = _flatten({"main.tex": "a\\input{b}", "b.tex": "b\\endinput\\begin{lemma}x\\end{lemma}"})
    assert flat.ignored == [("b.tex", "\\begin{lemma}x\\end{lemma}", "after-endinput")]


def test_a_local_package_is_loaded_once():
    flat = _flatten({"main.tex": "\\usepackage{p}\\RequirePackage{p}\\input{q}", "p.sty": "PKG",
                     "q.tex": "\\usepackage[opt]{p}"})
    assert flat.text.count("PKG") == 1


def test_a_root_that_sets_options_and_inputs_the_document_wins():
    texts = {"main.tex": DOC, "online.tex": "\\input{opt-letter}\n\\input{main}", "opt-letter.tex": "\\def\\x{}"}
    assert find_main_file(texts) == "online.tex"
