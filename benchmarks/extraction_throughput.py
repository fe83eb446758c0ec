"""Extraction throughput on ../shared/corpora, in MB of LaTeX per second per core (CPU time).

    .venv/bin/python benchmarks/extraction_throughput.py [--corpora ../shared/corpora] [--big-mb 30]

(a) segmentation (files -> raw statements: decode, comments, main file, flatten, discover, segment;
    no macro expansion, numbering or rendering), on the arXiv bundles (unpacked in memory), on each
    book flattened into one ~1-2.5 MB file, and on one ~30 MB file (a book body repeated): the 30 MB
    speed must be at least half the per-MB speed of the small files (linear, no quadratic slicing).
    Baseline measured in the same run: a naive extractor that copies the rest of the file at every
    `\\begin` (what the published extractor does), on 1 MB and on 4 MB.
(b) the whole extraction stage (macros, numbers, plain-text rendering) on the same documents in
    their original multi-file form; baseline: pylatexenc's latex2text alone on the statement text.
Targets: (a) >= 10 MB/s/core, ratio >= 0.5; (b) >= 1.5 MB/s/core.
"""
from __future__ import annotations

import argparse
import gzip
import io
import pathlib
import re
import sys
import tarfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from pylatexenc.latex2text import LatexNodes2Text  # noqa: E402

from transforms.latex import extract as extraction  # noqa: E402
from transforms.latex.extract import extract_submission, segment_only  # noqa: E402
from transforms.latex.model import Limits  # noqa: E402

PROJECTS = {
    "books/cring": "CRing.tex", "books/hott-book": "hott-online.tex", "books/napkin": "Napkin.tex",
    "books/openlogic": "open-logic-complete.tex", "books/symmetry-book": "book.tex",
    "papers/equational-theories": "paper/main.tex", "papers/pfr-blueprint": "blueprint/src/print.tex",
    "papers/poly-book": "Book-Poly.tex", "papers/rijke-hott-intro": "Book/hott-intro.tex",
    "papers/shulman-catlog": "catlog.tex",
}
LIMITS = Limits(timeout_s=600)
MB = 1e6


def arxiv_submissions(corpora: pathlib.Path) -> list[tuple[dict[str, bytes], float]]:
    """(files, CPU seconds to read them out of the bundle) per submission, unpacked in memory."""
    subs = []
    for bundle in sorted((corpora / "arxiv").glob("*.tar")):
        with tarfile.open(bundle) as outer:
            for member in outer:
                if not member.isfile() or not member.name.endswith(".gz"):
                    continue
                start = time.process_time()
                raw = gzip.decompress(outer.extractfile(member).read())
                try:
                    with tarfile.open(fileobj=io.BytesIO(raw)) as inner:
                        files = {m.name: inner.extractfile(m).read() for m in inner if m.isfile()}
                except tarfile.ReadError:
                    files = {"main.tex": raw}
                subs.append((files, time.process_time() - start))
    return subs


def projects(corpora: pathlib.Path) -> dict[str, tuple[dict[str, bytes], str]]:
    out = {}
    for name, main in PROJECTS.items():
        root = corpora / name
        if root.is_dir():
            out[name] = ({str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}, main)
    return out


def flattened(files: dict[str, bytes], main: str) -> str:
    """The document as one file: what LaTeX reads, includes inlined and comments stripped."""
    run = extraction._Run(files, LIMITS)
    return extraction._Document(run, main, use_macros=False).flat.text


def cpu_timed(fn, *args, **kwargs):
    start = time.process_time()
    result = fn(*args, **kwargs)
    return result, time.process_time() - start


def naive_segment(text: str, envs: list[str]) -> int:
    """The baseline: at every \\begin, copy the rest of the file and search it for the \\end."""
    count, pos = 0, 0
    begin = re.compile(r"\\begin\{(" + "|".join(map(re.escape, envs)) + r")\}")
    while True:
        m = begin.search(text, pos)
        if not m:
            return count
        rest = text[m.end():]                      # the copy that makes it quadratic
        end = rest.find("\\end{" + m.group(1) + "}")
        count += end >= 0
        pos = m.end()


def repeat_to(text: str, size: int) -> str:
    start = text.find("\\begin{document}") + len("\\begin{document}")
    end = text.rfind("\\end{document}")
    preamble, body = text[:start], text[start:end if end > 0 else len(text)]
    return preamble + body * (size // max(len(body), 1) + 1) + "\\end{document}"


def line(label: str, mb: float, seconds: float, extra: str = "") -> float:
    speed = mb / seconds if seconds else float("inf")
    print(f"  {label:<44} {mb:8.2f} MB {seconds:8.2f} s CPU {speed:8.2f} MB/s/core  {extra}")
    return speed


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpora", type=pathlib.Path,
                        default=pathlib.Path(__file__).resolve().parents[2] / "shared" / "corpora")
    parser.add_argument("--big-mb", type=float, default=30.0)
    args = parser.parse_args(argv)
    if not args.corpora.is_dir():
        print(f"no corpora at {args.corpora}", file=sys.stderr)
        return 2
    docs = projects(args.corpora)
    arxiv = arxiv_submissions(args.corpora)

    print("(a) segmentation: files -> raw statements (no macros, numbers or rendering)")
    total_mb = total_s = 0.0
    statements = 0
    for files, unpack_seconds in arxiv:
        result, seconds = cpu_timed(segment_only, files, limits=LIMITS)
        total_mb += result.n_bytes / MB
        total_s += seconds + unpack_seconds
        statements += len(result.statements)
    line(f"arXiv bundles, unpacking included ({len(arxiv)} subs)", total_mb, total_s, f"{statements} statements")
    flat = {name: flattened(files, main) for name, (files, main) in docs.items()}
    small_mb = small_s = 0.0
    statements = 0
    for name, text in flat.items():
        data = text.encode()
        result, seconds = cpu_timed(segment_only, {"main.tex": data}, limits=LIMITS)
        small_mb += len(data) / MB
        small_s += seconds
        statements += len(result.statements)
    small = line(f"{len(flat)} documents, each flattened to one file", small_mb, small_s, f"{statements} statements")
    base = flat.get("books/hott-book") or max(flat.values(), key=len)
    big = repeat_to(base, int(args.big_mb * MB)).encode()
    result, seconds = cpu_timed(segment_only, {"main.tex": big}, limits=LIMITS)
    large = line(f"one {len(big) / MB:.0f} MB file (a book body repeated)", len(big) / MB, seconds,
                 f"{len(result.statements)} statements")
    _, seconds = cpu_timed(segment_only, {"main.tex": base.encode()}, limits=LIMITS)
    same = line("the same book as one file, not repeated", len(base.encode()) / MB, seconds)
    print(f"  ratio 30 MB / the same book: {large / same:.2f}")
    print(f"  ratio 30 MB / small files: {large / small:.2f}  (target >= 0.5)   "
          f"segmentation {'meets' if min(small, large) >= 10 else 'MISSES'} 10 MB/s/core")
    envs = ["thm", "lem", "defn", "cor", "eg", "rmk", "ex", "theorem", "lemma", "definition"]
    one, four = repeat_to(base, 1_000_000), repeat_to(base, 4_000_000)
    _, s1 = cpu_timed(naive_segment, one, envs)
    _, s4 = cpu_timed(naive_segment, four, envs)
    b1 = line("baseline: naive copy-the-rest, 1 MB", len(one) / MB, s1)
    b4 = line("baseline: naive copy-the-rest, 4 MB", len(four) / MB, s4)
    print(f"  baseline ratio 4 MB / 1 MB: {b4 / b1:.2f}")

    print("(b) whole extraction stage: macros, numbering, plain-text rendering")
    total_mb = total_s = 0.0
    statements = 0
    texts = []
    for name, (files, main) in docs.items():
        result, seconds = cpu_timed(extract_submission, files, main_file=main, limits=LIMITS)
        line(name, result.n_bytes / MB, seconds, f"{len(result.statements)} statements")
        total_mb += result.n_bytes / MB
        total_s += seconds
        statements += len(result.statements)
        texts.extend(s.statement_latex for s in result.statements)
    for files, _ in arxiv:
        result, seconds = cpu_timed(extract_submission, files, limits=LIMITS)
        total_mb += result.n_bytes / MB
        total_s += seconds
        statements += len(result.statements)
    whole = line("all documents and arXiv submissions", total_mb, total_s, f"{statements} statements")
    print(f"  extraction {'meets' if whole >= 1.5 else 'MISSES'} 1.5 MB/s/core")
    converter = LatexNodes2Text(math_mode="verbatim")
    sample = texts[:1500]
    _, seconds = cpu_timed(lambda: [converter.latex_to_text(t) for t in sample])
    line(f"baseline: latex2text alone on {len(sample)} statements", sum(map(len, sample)) / MB, seconds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
