"""A hostile arXiv corpus, built in memory at test time (no committed binaries).

Each `Case` is one bundle member (`YYMM/<id>.gz` or `.pdf`) crafted to break a reader or an
extractor, with what the run must make of it: the paper's status and status reason, the failure
rows (error classes) it must leave, and for readable papers the statements still found.
"""
from __future__ import annotations

import dataclasses
import functools
import gzip
import io
import tarfile
import zlib
from typing import Optional

import pytest

YYMM = "2201"
BUNDLE = f"arXiv_src_{YYMM}_001.tar"


def paper_tex(body: str = "", preamble: str = "", theorem: str = "Every finite group has an identity element.") -> str:
    """A small but complete paper: one theorem (so ok papers have a statement to find) plus `body`."""
    return ("\\documentclass{amsart}\n" + preamble + "\\newtheorem{theorem}{Theorem}\n"
            "\\begin{document}\n\\section{Intro}\n"
            f"\\begin{{theorem}}\\label{{thm:main}}\n{theorem}\n\\end{{theorem}}\n" + body + "\n\\end{document}\n")


# ------------------------------------------------------------------------------- byte builders

def gz(data: bytes) -> bytes:
    return gzip.compress(data, compresslevel=6, mtime=0)


@dataclasses.dataclass
class Entry:
    """One tar member: a regular file unless `type` says otherwise (tarfile's type constants)."""

    name: str
    data: bytes = b""
    type: bytes = tarfile.REGTYPE
    linkname: str = ""


def tar_bytes(entries: list[Entry]) -> bytes:
    """An uncompressed tar of the entries, links and devices included, written in memory."""
    sink = io.BytesIO()
    with tarfile.open(fileobj=sink, mode="w", format=tarfile.GNU_FORMAT) as archive:
        for entry in entries:
            info = tarfile.TarInfo(entry.name)
            info.type = entry.type
            info.linkname = entry.linkname
            info.mtime = 0
            if entry.type == tarfile.REGTYPE:
                info.size = len(entry.data)
                archive.addfile(info, io.BytesIO(entry.data))
            else:
                archive.addfile(info)
    return sink.getvalue()


def tgz_entries(entries: list[Entry]) -> bytes:
    return gz(tar_bytes(entries))


def tgz(files: dict[str, bytes]) -> bytes:
    return tgz_entries([Entry(name, data) for name, data in files.items()])


def gzip_bomb(decompressed_bytes: int) -> bytes:
    """Gzip of `decompressed_bytes` zero bytes, compressed in 1 MiB steps (never held whole)."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
    block = bytes(1 << 20)
    parts = [compressor.compress(block) for _ in range(decompressed_bytes >> 20)]
    parts.append(compressor.flush())
    return b"".join(parts)


def single_line_tex(target_bytes: int) -> bytes:
    """A generated paper on ONE line of about `target_bytes`: prose, math, macros, three theorems."""
    unit = "Let $x_{1}+\\alpha^{2} \\leq \\sum_{i} y_i$ hold for \\emph{every} index; "
    filler = unit * (target_bytes // len(unit) // 2)
    theorem = lambda n: f"\\begin{{theorem}}Statement number {n} holds.\\end{{theorem}} "  # noqa: E731
    text = ("\\documentclass{article}\\newtheorem{theorem}{Theorem}\\begin{document}" + theorem(1)
            + filler + theorem(2) + filler + theorem(3) + "\\end{document}")
    return text.encode()


def bundle_bytes(members: dict[str, bytes]) -> bytes:
    """An arXiv bundle: an uncompressed tar of `YYMM/<id>.gz` members."""
    return tar_bytes([Entry(name, data) for name, data in members.items()])


# ------------------------------------------------------------------------------- cases

@dataclasses.dataclass
class Case:
    """One hostile submission and its expected outcome."""

    name: str
    member: str                        # name inside the bundle
    data: bytes
    status: str                        # ok | failed | skipped
    reason: Optional[str] = None       # papers.status_reason
    failures: tuple[str, ...] = ()     # error classes that must appear among the paper's failure rows
    statements: Optional[int] = None   # statements found (ok papers), None: not checked
    encoding: Optional[str] = None     # papers.encoding, None: not checked

    @property
    def paper_id(self) -> str:
        """`arxiv:2201.00001` for member `2201/2201.00001.gz` (all cases use new-style ids)."""
        return "arxiv:" + self.member.rsplit("/", 1)[-1].rsplit(".", 1)[0]


def params() -> list:
    """The cases as pytest parameters named after them."""
    return [pytest.param(c, id=c.name) for c in cases()]


def case(name: str) -> Case:
    """The case called `name`."""
    return next(c for c in cases() if c.name == name)


def _member(n: int, suffix: str = ".gz") -> str:
    return f"{YYMM}/{YYMM}.{n:05d}{suffix}"


GOOD = paper_tex().encode()
PADDED = paper_tex(" ".join(f"Sentence {i} of the padding." for i in range(300))).encode()
BOMB_LIMIT = 32 * 1024 * 1024           # --max-submission-bytes of the hostile run
BOMB_BYTES = 256 * 1024 * 1024           # what the bomb would decompress to
SINGLE_LINE_BYTES = 20 * 1024 * 1024     # the "50 MB single line" case, scaled to keep the test fast
MANY_FILES = 3000


def _truncated_tar() -> bytes:
    """A gzipped tar cut inside its second member: the first member (the paper) survives."""
    tar = tar_bytes([Entry("main.tex", GOOD), Entry("appendix.tex", b"x" * 20000)])
    return gz(tar[: 512 + len(GOOD) + 511 + 512 + 5000])


def _unsafe_links() -> bytes:
    return tgz_entries([
        Entry("main.tex", GOOD),
        Entry("/etc/passwd", b"root:x:0:0"),
        Entry("../../escape.tex", b"\\documentclass{article}\\begin{document}\\end{document}"),
        Entry("sub/../../up.tex", b"x"),
        Entry("link.tex", type=tarfile.SYMTYPE, linkname="/etc/shadow"),
        Entry("hard.tex", type=tarfile.LNKTYPE, linkname="main.tex"),
        Entry("tty", type=tarfile.CHRTYPE),
        Entry("disk", type=tarfile.BLKTYPE),
        Entry("pipe", type=tarfile.FIFOTYPE),
        Entry("empty.tex", b""),
    ])


def _many_files() -> bytes:
    files = {f"parts/p{i:04d}.tex": f"Part {i}.\n".encode() for i in range(MANY_FILES)}
    inputs = "".join(f"\\input{{parts/p{i:04d}}}\n" for i in range(0, MANY_FILES, 100))
    files["main.tex"] = paper_tex(inputs).encode()
    return tgz(files)


def _cp1252() -> bytes:
    # Curly quotes and the euro sign exist in Windows-1252 (bytes 0x93 0x94 0x80), not in Latin-1.
    return paper_tex(theorem="Th\u00e9or\u00e8me: the \u201cprice\u201d is 5 \u20ac for every caf\u00e9.").encode("cp1252")


RECURSIVE_MACROS = "\\def\\a{\\a}\n\\newcommand\\b{\\b x}\n\\def\\c{\\d}\n\\def\\d{\\c x}\n"


@functools.lru_cache(maxsize=1)
def cases() -> tuple[Case, ...]:
    """Every hostile case of issue 8 as one bundle member with its expected outcome (built once)."""
    recursive = paper_tex("\\begin{theorem}Uses \\a, \\b and \\c here.\\end{theorem}",
                          preamble=RECURSIVE_MACROS)
    cycle = {"main.tex": paper_tex("\\input{a}\n\\input{main}").encode(),
             "a.tex": b"\\input{b}\nA text.\n",
             "b.tex": b"\\input{a}\nB text.\n\\begin{theorem}From b.\\end{theorem}\n"}
    binary = bytes(range(256)) * 64
    return (
        Case("control: a good paper", _member(1), gz(GOOD), "ok", statements=1, encoding="utf-8"),
        Case("broken gzip", _member(2), b"\x1f\x8b\x08\x00" + b"\xff\xfe garbage, not deflate" * 40,
             "failed", reason="corrupt-gzip", failures=("corrupt-gzip",)),
        Case("truncated gzip (single .tex)", _member(3), gz(PADDED)[:-30], "ok",
             failures=("truncated-gzip",), statements=1),
        Case("truncated tar", _member(4), _truncated_tar(), "ok", failures=("truncated-tar",), statements=1),
        Case("zero-byte member", _member(5), b"", "failed", reason="empty-member", failures=("empty-member",)),
        Case("absolute, ../, symlink, hardlink, devices, zero-byte file", _member(6), _unsafe_links(), "ok",
             failures=("unsafe-member",), statements=1),
        Case("Latin-1 with inputenc", _member(7),
             gz(paper_tex(preamble="\\usepackage[latin1]{inputenc}\n",
                          theorem="Soit $G$ un groupe fini: l'\xe9l\xe9ment neutre est unique.").encode("latin-1")),
             "ok", statements=1, encoding="latin-1"),
        Case("Windows-1252 without declaration", _member(8), gz(_cp1252()), "ok", statements=1, encoding="cp1252"),
        Case("20 MB single-line generated TeX", _member(9), gz(single_line_tex(SINGLE_LINE_BYTES)), "ok",
             statements=3),
        Case("recursive macros", _member(10), gz(recursive.encode()), "ok",
             failures=("macro-not-expanded",), statements=2),
        Case("\\input cycles", _member(11), tgz(cycle), "ok", failures=("include-cycle",), statements=2),
        Case("binary file named .tex", _member(12), tgz({"main.tex": binary}), "failed",
             reason="no-main-file", failures=("binary-file", "no-main-file")),
        Case(f"{MANY_FILES} tiny files", _member(13), _many_files(), "ok", statements=1),
        Case("gzip bomb", _member(14), gzip_bomb(BOMB_BYTES), "failed", reason="submission-too-large",
             failures=("submission-too-large",)),
        Case("PDF-only", _member(15, ".pdf"), b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj<<>>endobj\n%%EOF\n",
             "skipped", reason="pdf-only"),
        Case("pylatexenc raises (\\footnote missing its argument)", _member(16),
             gz(paper_tex("\\begin{theorem}See it for the proof.\\footnote\\end{theorem}").encode()),
             "ok", failures=("KeyError",), statements=2),
    )


def slow_paper(statements: int = 20_000) -> bytes:
    """A paper whose extraction takes about a second (twenty thousand statements to render)."""
    body = "".join(f"\\begin{{theorem}}For every $n \\geq {i}$ the \\emph{{sum}} \\textbf{{of}} "
                   f"\\cite{{x}} terms is ``finite'' --- see \\ref{{y}}.\\end{{theorem}}\n" for i in range(statements))
    return gz(paper_tex(body).encode())
