"""Hostile submissions through the pure reader and extractor: every case ends with a reason.

The same cases run through the whole pipeline in `test_hostile_pipeline.py`; here each goes
through `arxiv.submission_from_bytes` and `corpus.process_submission` (what the Beam DoFn calls),
so the assertions can look at events, files and statements one by one.
"""
import os
import tarfile
import threading
import time

import pytest

import hostile_cases as hc
from transforms import corpus
from transforms.latex.decode import decode_tex
from transforms.latex.extract import extract_submission
from transforms.latex.model import Limits
from transforms.sources import archive, arxiv, arxiv_ids, folder

LIMITS = Limits(max_submission_bytes=hc.BOMB_LIMIT)
CASES = hc.cases()


def outcome(case: hc.Case, limits: Limits = LIMITS) -> corpus.PaperOutcome:
    ref = arxiv_ids.member_ref(case.member, f"/in/{hc.BUNDLE}", 0, len(case.data))
    return corpus.process_submission(arxiv.submission_from_bytes(ref, case.data, limits), arxiv.extract, limits)


@pytest.mark.parametrize("case", hc.params())
def test_each_case_ends_with_its_status_and_reason(case):
    started = time.process_time()
    got = outcome(case)
    assert time.process_time() - started < 20
    paper = got.paper
    classes = [f["error_class"] for f in got.failures]
    assert paper["paper_id"] == case.paper_id
    assert (paper["status"], set(case.failures) - set(classes)) == (case.status, set())
    if case.reason is not None:
        assert paper["status_reason"] == case.reason
    if case.status == "failed":
        fatal = [f for f in got.failures if f["fatal"]]
        assert fatal and paper["status_reason"] == fatal[0]["error_class"]
        assert got.theorems == []
    if case.statements is not None:
        assert paper["n_statements"] == len(got.theorems) == case.statements
    if case.encoding is not None:
        assert paper["encoding"] == case.encoding
    for failure in got.failures:   # every failure row says where and what
        assert failure["stage"] and failure["error_class"] and failure["message"] and failure["location"]
        assert failure["bundle"] == hc.BUNDLE   # the input's name, never the path as typed


def test_unsafe_members_are_each_counted_and_only_safe_files_kept():
    data = hc.tgz_entries([
        hc.Entry("main.tex", hc.GOOD), hc.Entry("/abs.tex", b"a"), hc.Entry("../up.tex", b"b"),
        hc.Entry("a/../../up2.tex", b"c"), hc.Entry("C:/win.tex", b"d"), hc.Entry("./ok/./x.tex", b"e"),
        hc.Entry("sym", type=tarfile.SYMTYPE, linkname="../../etc/passwd"),
        hc.Entry("hard", type=tarfile.LNKTYPE, linkname="main.tex"),
        hc.Entry("chr", type=tarfile.CHRTYPE), hc.Entry("blk", type=tarfile.BLKTYPE),
        hc.Entry("fifo", type=tarfile.FIFOTYPE), hc.Entry("zero.tex", b""),
    ])
    unpacked = archive.unpack_submission(data, "x.tex", LIMITS, "b!m")
    assert sorted(unpacked.files) == ["main.tex", "ok/x.tex", "zero.tex"]
    assert unpacked.files["zero.tex"] == b""
    unsafe = [e for e in unpacked.events if e.error_class == "unsafe-member"]
    assert len(unsafe) == 9 and not unpacked.fatal
    assert {e.location.rsplit("/", 1)[-1] for e in unsafe} >= {"sym", "hard", "chr", "blk", "fifo"}


def test_truncated_tar_keeps_what_was_read_before_the_damage():
    unpacked = archive.unpack_submission(hc.case("truncated tar").data, "x.tex", LIMITS, "b!m")
    assert list(unpacked.files) == ["main.tex"] and unpacked.files["main.tex"] == hc.GOOD
    assert [e.error_class for e in unpacked.events] == ["truncated-tar"]


def test_truncated_gzip_keeps_the_decompressed_prefix():
    data, events = archive.gunzip_bounded(hc.gz(hc.PADDED)[:-30], 1 << 20, "loc")
    assert hc.PADDED.startswith(data) and len(data) > len(hc.PADDED) - 200
    assert [e.error_class for e in events] == ["truncated-gzip"]


def test_gzip_bomb_stops_at_the_limit_without_inflating_the_rest():
    bomb = hc.case("gzip bomb").data
    assert len(bomb) < hc.BOMB_BYTES // 500          # small compressed, huge decompressed
    data, events = archive.gunzip_bounded(bomb, 4 << 20, "loc")
    assert len(data) == 4 << 20
    assert [(e.error_class, e.fatal) for e in events] == [("submission-too-large", True)]


def test_tar_bomb_of_many_files_hits_the_file_limit():
    data = hc.tgz({f"f{i}.tex": b"x" for i in range(300)})
    unpacked = archive.unpack_submission(data, "x.tex", Limits(max_files=100), "b!m")
    assert unpacked.fatal and any(e.error_class == "too-many-files" for e in unpacked.events)


def test_oversized_file_is_ignored_and_recorded_the_rest_kept():
    data = hc.tgz({"main.tex": hc.GOOD, "huge.tex": b"%" * 300_000})
    unpacked = archive.unpack_submission(data, "x.tex", Limits(max_file_bytes=100_000), "b!m")
    assert list(unpacked.files) == ["main.tex"]
    assert [e.error_class for e in unpacked.events] == ["file-too-large"]


def test_member_claiming_more_bytes_than_the_limit_is_refused_before_reading():
    ref = arxiv_ids.member_ref("2201/2201.00001.gz", "/in/b.tar", 0, 10_000)
    sub = arxiv.submission_from_bytes(ref, b"", Limits(max_submission_bytes=1000))
    assert [(e.error_class, e.fatal) for e in sub.events] == [("submission-too-large", True)]


def test_windows_1252_text_decodes_to_the_characters_written():
    french = ("Nous d\u00e9montrons un th\u00e9or\u00e8me g\u00e9n\u00e9ral sur les groupes finis; le \u201cprix\u201d "
              "est de 5 \u20ac, voir la premi\u00e8re partie o\u00f9 l'on \u00e9tudie les caract\u00e8res. ") * 20
    text, encoding = decode_tex(french.encode("cp1252"))
    assert text == french, f"decoded as {encoding}"


def test_latin1_declared_by_inputenc_wins_over_detection():
    tex = hc.paper_tex(preamble="\\usepackage[latin1]{inputenc}\n", theorem="Ein \u00fcberall stetiger Operator, \u00e0 la Fr\u00e9chet.")
    result = extract_submission({"main.tex": tex.encode("latin-1")})
    assert result.encoding == "latin-1"
    assert result.statements[0].statement_text == "Ein \u00fcberall stetiger Operator, \u00e0 la Fr\u00e9chet."


def test_single_line_file_is_extracted_with_correct_lines_and_linear_time():
    small, large = hc.single_line_tex(1 << 20), hc.single_line_tex(8 << 20)
    timings = []
    for data in (small, large):
        started = time.process_time()
        result = extract_submission({"main.tex": data})
        timings.append(time.process_time() - started)
        assert [s.statement_text for s in result.statements] == [f"Statement number {n} holds." for n in (1, 2, 3)]
        assert {s.line for s in result.statements} == {1}
    assert timings[1] < 8 * timings[0] * 3 + 1.0        # 8x the bytes, at most ~3x worse per byte


def test_every_recursive_macro_is_recorded_mutual_recursion():
    result = extract_submission({"main.tex": hc.paper_tex("\\begin{theorem}Uses \\c here.\\end{theorem}",
                                                          preamble=hc.RECURSIVE_MACROS).encode()})
    assert "\\c" in result.unexpanded_macros
    assert any(e.error_class == "macro-not-expanded" for e in result.events)


def test_every_recursive_macro_is_recorded_self_reference():
    """`\\def\\a{\\a}` and `\\newcommand\\b{\\b x}` are left unexpanded: that must be on record too."""
    result = extract_submission({"main.tex": hc.paper_tex("\\begin{theorem}Uses \\a and \\b here.\\end{theorem}",
                                                          preamble=hc.RECURSIVE_MACROS).encode()})
    assert result.statements[1].statement_latex == "Uses \\a and \\b here."
    recorded = " ".join(result.unexpanded_macros + [e.message for e in result.events])
    assert "\\a" in recorded and "\\b" in recorded


def test_input_cycle_and_self_input_are_cut_and_recorded():
    result = extract_submission({"main.tex": hc.paper_tex("\\input{a}\n\\input{main}").encode(),
                                 "a.tex": b"\\input{b}\nA text.\n", "b.tex": b"\\input{a}\nB text.\n"})
    cycles = [e.message for e in result.events if e.error_class == "include-cycle"]
    assert len(cycles) == 2
    assert any("a.tex -> b.tex -> a.tex" in m for m in cycles) and any("main.tex -> main.tex" in m for m in cycles)


def test_deep_include_chain_hits_the_include_depth():
    files = {f"f{i}.tex": f"\\input{{f{i + 1}}}\n".encode() for i in range(40)}
    files["main.tex"] = hc.paper_tex("\\input{f0}").encode()
    result = extract_submission(files, limits=Limits(include_depth=8))
    assert [e.error_class for e in result.events if e.stage == "flatten"] == ["include-depth"]
    assert len(result.statements) == 1


def test_paper_over_the_time_budget_fails_with_timeout_and_the_next_paper_is_fine():
    limits = Limits(timeout_s=0.1)
    slow = hc.Case("slow", "2201/2201.00099.gz", hc.slow_paper(), "failed")
    got = outcome(slow, limits)
    assert (got.paper["status"], got.paper["status_reason"]) == ("failed", "timeout")
    assert [f["error_class"] for f in got.failures if f["fatal"]] == ["timeout"]
    assert outcome(CASES[0], limits).paper["status"] == "ok"


def test_extractor_exception_is_isolated_to_its_paper():
    def explode(sub, limits):
        raise IndexError("list index out of range")

    ref = arxiv_ids.member_ref(CASES[0].member, "/in/b.tar", 0, len(CASES[0].data))
    got = corpus.process_submission(arxiv.submission_from_bytes(ref, CASES[0].data, LIMITS), explode, LIMITS)
    assert (got.paper["status"], got.paper["status_reason"]) == ("failed", "IndexError")
    assert got.failures[-1]["stage"] == "extract" and got.failures[-1]["fatal"]


def test_library_failure_falls_back_to_a_simpler_rendering():
    result = extract_submission({"main.tex": hc.paper_tex(
        "\\begin{theorem}See it for the proof.\\footnote\\end{theorem}").encode()})
    assert [(e.stage, e.error_class, e.fatal) for e in result.events] == [("render", "KeyError", False)]
    assert result.statements[1].statement_text.startswith("See ")
    assert result.statements[1].statement_text.endswith("for the proof.")


def test_time_budget_holds_inside_a_slow_stage():
    """40,000 `\\section{{a}` whose titles never close (480 kB; each is scanned over its 2,000-character
    limit, as a group holding braces must be): the budget must stop segmentation, not wait for it to end."""
    tex = hc.paper_tex("\\section{{a}" * 40_000).encode()
    started = time.process_time()
    result = extract_submission({"main.tex": tex}, limits=Limits(timeout_s=0.5))
    elapsed = time.process_time() - started
    assert [e.error_class for e in result.events if e.fatal] == ["timeout"]
    assert elapsed < 2.5, f"a 0.5 s budget took {elapsed:.1f} s"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_folder_of_submissions_with_links_and_a_named_pipe_never_blocks(tmp_path):
    """A FIFO among unpacked submissions must be refused: opening it would wait for a writer forever."""
    (tmp_path / "2201.00001").mkdir()
    (tmp_path / "2201.00001" / "main.tex").write_bytes(hc.GOOD)
    os.mkfifo(tmp_path / "2201.00001" / "pipe.tex")
    os.mkfifo(tmp_path / "2201.00002.tex")
    (tmp_path / "2201.00003.tex").symlink_to("/etc/passwd")
    outcomes = []

    def read_all():
        found = folder.index_folder(str(tmp_path))
        outcomes.extend(corpus.process_submission(arxiv.Arxiv().fetch(ref, LIMITS), arxiv.extract, LIMITS) for ref in found.refs)
        outcomes.append(found)

    reader = threading.Thread(target=read_all, daemon=True)
    reader.start()
    reader.join(timeout=10)
    blocked = reader.is_alive()
    if blocked:      # let the blocked open() return, so the thread ends
        os.close(os.open(tmp_path / "2201.00002.tex", os.O_WRONLY | os.O_NONBLOCK))
        reader.join(timeout=5)
    assert not blocked, "reading the folder blocked on a named pipe"
    *papers, found = outcomes
    assert [o.paper["status"] for o in papers] == ["ok"]
    assert sum(e.error_class == "unsafe-member" for e in found.events) == 2          # the pipe and the link
    assert [f["error_class"] for f in papers[0].failures] == ["unsafe-member"]


def test_control_characters_do_not_reach_the_plain_text():
    """NUL, BEL and terminal escape sequences (past the 8 KiB binary probe) must not land in statement_text,
    which `thmforge search` prints to a terminal."""
    body = "A\x00\x00B \x07 \x1b[31mred\x1b[0m \x7f end"
    tex = hc.paper_tex(theorem=body, preamble="%" * 9000 + "\n").encode()
    text = extract_submission({"main.tex": tex}).statements[0].statement_text
    assert not [c for c in text if ord(c) < 32 or ord(c) == 127], repr(text)
    assert text.startswith("A") and text.endswith("end")


PAGE = ("<page><title>{title}</title><ns>0</ns><id>{id}</id><revision><id>9{id}</id>"
        "<timestamp>2021-01-01T00:00:00Z</timestamp><text>== Theorem ==\n{text}\n</text></revision></page>")


@pytest.mark.parametrize("name, doctype, pages, kept, error", [
    ("billion laughs", "<!ENTITY lol \"lol\">" + "".join(
        f"<!ENTITY lol{i} \"{('&lol%s;' % (i - 1 if i > 1 else '')) * 10}\">" for i in range(1, 10)),
     [("Bomb Theorem", "Laughs &lol9;")], [], "amplification"),
    ("external entity", "<!ENTITY xxe SYSTEM \"file:///etc/hostname\">",
     [("Good Theorem", "Fine."), ("XXE Theorem", "Secret &xxe; here.")], ["proofwiki:Good Theorem"], "undefined entity"),
])
def test_hostile_proofwiki_exports_fail_on_record_and_leak_nothing(tmp_path, name, doctype, pages, kept, error):
    from transforms.sources import proofwiki

    body = "".join(PAGE.format(title=t, id=i, text=x) for i, (t, x) in enumerate(pages))
    path = tmp_path / "export.xml"
    path.write_text(f'<?xml version="1.0"?>\n<!DOCTYPE mediawiki [{doctype}]>\n<mediawiki>{body}</mediawiki>')
    started = time.process_time()
    subs = list(proofwiki.read([str(path)], LIMITS))
    assert time.process_time() - started < 5
    *good, broken = subs
    assert [s.paper_id for s in good] == kept
    assert [(e.stage, e.error_class, e.fatal) for e in broken.events] == [("read", "ParseError", True)]
    assert error in broken.events[0].message
    assert not any(b"lollollol" in data for s in subs for data in s.files.values())
