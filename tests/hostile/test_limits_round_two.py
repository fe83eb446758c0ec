"""Limits bound what is read and kept, never the readable statements (issues 18 and 21).
Every input is built here at test time, scaled down with the limits so each test stays small."""
import io
import tarfile
import tracemalloc

from transforms.corpus import MAX_FAILURE_ROWS_PER_PAPER, process_submission
from transforms.latex.extract import extract_submission
from transforms.latex.model import Limits, Submission
from transforms.sources import archive

MAIN = (b"\\documentclass{article}\\newtheorem{theorem}{Theorem}\\begin{document}"
        b"\\begin{theorem}Kept.\\end{theorem}\\end{document}")


class _Zeros(io.RawIOBase):
    """`size` zero bytes, produced as read: a member's data without holding it in memory."""

    def __init__(self, size):
        self.left = size

    def readable(self):
        return True

    def readinto(self, buffer):
        n = min(len(buffer), self.left)
        buffer[:n] = bytes(n)
        self.left -= n
        return n


def tgz(entries) -> bytes:
    """entries: (name, data bytes | int size of zeros | "dir" | ("link", target))."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz", compresslevel=1) as tar:
        for name, data in entries:
            info = tarfile.TarInfo(name)
            if data == "dir":
                info.type = tarfile.DIRTYPE
                tar.addfile(info)
            elif isinstance(data, tuple):
                info.type, info.linkname = tarfile.SYMTYPE, data[1]
                tar.addfile(info)
            elif isinstance(data, int):
                info.size = data
                tar.addfile(info, _Zeros(data))
            else:
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


def test_thousands_of_figure_files_keep_the_main_file_and_its_statements():
    limits = Limits(max_files=50)
    data = tgz([(f"figs/f{i:04d}.png", b"\x89PNG\x00") for i in range(150)] + [("main.tex", MAIN)])
    unpacked = archive.unpack_submission(data, "x.tex", limits, "b!m")
    assert not unpacked.fatal and "main.tex" in unpacked.files and len(unpacked.files) == 51
    [cut] = [e for e in unpacked.events if e.error_class == "too-many-files"]
    assert "100 files other than TeX sources left unread" in cut.message
    result = extract_submission(unpacked.files, limits=limits)
    assert [s.statement_latex_raw for s in result.statements] == ["Kept."]


def test_directories_count_as_entries_and_reading_stops_past_the_entry_bound():
    limits = Limits(max_files=20)
    data = tgz([(f"d{i}", "dir") for i in range(200)] + [("main.tex", MAIN)])
    unpacked = archive.unpack_submission(data, "x.tex", limits, "b!m")
    assert unpacked.files == {} and "too-many-entries" in [e.error_class for e in unpacked.events]


def test_a_gzipped_tar_of_large_members_never_holds_them_in_memory():
    limit = 8 << 20
    data = tgz([("main.tex", MAIN)] + [(f"blob{i}.dat", 6 << 20) for i in range(7)])
    assert len(data) < 1 << 20
    tracemalloc.start()
    try:
        unpacked = archive.unpack_submission(data, "x.tex", Limits(max_submission_bytes=limit, max_file_bytes=limit),
                                             "b!m")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert unpacked.fatal and unpacked.events[-1].error_class == "submission-too-large"
    assert peak < 2 * limit


def test_thousands_of_links_write_a_bounded_number_of_failure_rows():
    data = tgz([("main.tex", MAIN)] + [(f"l{i}", ("link", "/etc/passwd")) for i in range(3000)])
    unpacked = archive.unpack_submission(data, "x.tex", Limits(), "b!m")
    unsafe = [e for e in unpacked.events if e.error_class == "unsafe-member"]
    assert len(unsafe) == archive.RECORDED_PER_CLASS + 1
    assert unsafe[-1].message.startswith(f"{3000 - archive.RECORDED_PER_CLASS} more")
    sub = Submission("arxiv:2101.00001", "arxiv", "2101.00001", unpacked.files, events=unpacked.events)
    outcome = process_submission(sub, lambda s, limits: extract_submission(s.files, limits=limits), Limits())
    assert outcome.paper["status"] == "ok" and len(outcome.theorems) == 1
    assert len(outcome.failures) <= MAX_FAILURE_ROWS_PER_PAPER + 1


def test_failure_rows_are_capped_per_paper_with_a_count_of_what_was_cut():
    body = "".join("\\begin{theorem}\\undefinedmacro\\end{theorem}\\end{lemma}\n" for _ in range(300))
    tex = ("\\documentclass{article}\\newtheorem{theorem}{Theorem}\\newtheorem{lemma}{Lemma}"
           "\\begin{document}" + body + "\\end{document}").encode()
    sub = Submission("arxiv:2101.00002", "arxiv", "2101.00002", {"m.tex": tex})
    outcome = process_submission(sub, lambda s, limits: extract_submission(s.files, limits=limits), Limits())
    assert len(outcome.theorems) == 300
    assert len(outcome.failures) == MAX_FAILURE_ROWS_PER_PAPER + 1
    assert outcome.failures[-1]["error_class"] == "failures-cut"
    assert outcome.failures[-1]["message"] == "200 more failure rows not written: stray-end 200"
