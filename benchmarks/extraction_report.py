"""Extraction report over the shared books and papers: what was found, what was not, and why.

For every document under ../shared/corpora/books and ../shared/corpora/papers it prints statements
per kind, how many carry a number and a label, the macros that could not be expanded, and the
environments seen but not extracted with their reasons. It also checks the acceptance rule of
issue 3 independently of the segmenter: every `\\begin{X}` of a declared theorem-like X in the
document body, outside verbatim and comment-like environments, must be either extracted or listed
as skipped; any remainder is printed as "unaccounted".

    .venv/bin/python benchmarks/extraction_report.py [--corpora ../shared/corpora] [--only NAME]
"""
from __future__ import annotations

import argparse
import collections
import os
import re
import sys
import time
from typing import Iterator, Optional

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from transforms.latex import extract as extraction  # noqa: E402
from transforms.latex.macros import expand_macros  # noqa: E402
from transforms.latex.mainfile import rank_main_candidates  # noqa: E402
from transforms.latex.model import ExtractionResult, Limits, Submission  # noqa: E402
from transforms.sources import latex_project  # noqa: E402

# Root file (and TeX-format files read before it) of each shared document; the root is what the
# project's own build compiles.
DOCUMENTS = {
    "books/hott-book": ("hott-online.tex", ()),
    "books/openlogic": ("open-logic-complete.tex", ()),
    "books/napkin": ("Napkin.tex", ()),
    "books/cring": ("CRing.tex", ()),
    "books/symmetry-book": ("book.tex", ("macros.tex",)),
    "papers/equational-theories": ("paper/main.tex", ()),
    "papers/pfr-blueprint": ("blueprint/src/print.tex", ()),
    "papers/poly-book": ("Book-Poly.tex", ()),
    "papers/rijke-hott-intro": ("Book/hott-intro.tex", ()),
    "papers/shulman-catlog": ("catlog.tex", ()),
}
# A repository of many papers: each top-level folder with a document is reported on its own.
COLLECTIONS = ("papers/synthetic-zariski",)
SKIPPED_FOLDERS = ("archive",)


def _documents(corpora: str) -> Iterator[tuple[str, Submission]]:
    for name, (root, format_files) in DOCUMENTS.items():
        folder = os.path.join(corpora, name)
        if os.path.isdir(folder):
            yield name, latex_project.project_submission(os.path.join(folder, root), name=name.split("/")[1],
                                                         format_files=format_files)
    for name in COLLECTIONS:
        folder = os.path.join(corpora, name)
        if not os.path.isdir(folder):
            continue
        whole = latex_project.project_submission(folder)
        texts = {p: d.decode("utf-8", "replace") for p, d in whole.files.items() if p.endswith(".tex")}
        best: dict[str, str] = {}
        for path, _ in rank_main_candidates(texts):
            top = path.split("/", 1)[0]
            if "/" in path and top not in SKIPPED_FOLDERS:
                best.setdefault(top, path)
        for top, main in sorted(best.items()):
            sub = latex_project.project_submission(os.path.join(folder, main), name=f"{name.split('/')[1]}/{top}")
            yield f"{name}/{top}", sub


_BEGIN_RE = re.compile(r"\\begin\s*\{([^{}\s]{1,80})\}")


def macro_rate(doc, limits: Limits) -> tuple[int, float]:
    """(bytes, seconds) of expanding every raw statement body with the document's macros."""
    bodies = [s.body for s in doc.seg.statements]
    start = time.perf_counter()
    for body in bodies:
        expand_macros(body, doc.macros.table, limits)
    return sum(len(b) for b in bodies), time.perf_counter() - start


def declared_begins(sub: Submission, limits: Limits) -> Optional[tuple[collections.Counter, int, float]]:
    """`\\begin{X}` counts of theorem-like X in the body, outside verbatim and comment-like blocks,
    and the macro expansion figures of `macro_rate`."""
    main = (sub.metadata or {}).get("main_file")
    if main is None:
        return None
    run = extraction._Run(sub.files, limits)
    doc = extraction._Document(run, main, use_macros=True)
    text, found = doc.flat.text, doc.found
    expanded_bytes, expand_seconds = macro_rate(doc, limits)
    opaque = found.verbatim_envs | found.comment_envs
    counts: collections.Counter = collections.Counter()
    pos = doc.body_start
    while True:
        m = _BEGIN_RE.search(text, pos, doc.body_end)
        if not m:
            return counts, expanded_bytes, expand_seconds
        env = m.group(1)
        pos = m.end()
        if env in opaque:
            stop = text.find("\\end{" + env + "}", pos, doc.body_end)
            pos = doc.body_end if stop < 0 else stop
        elif env in found.envs:
            counts[env] += 1


def _short(items, limit: int = 12) -> str:
    items = list(items)
    shown = ", ".join(str(i) for i in items[:limit])
    return shown + (f", ... (+{len(items) - limit})" if len(items) > limit else "")


def report(name: str, sub: Submission, result: ExtractionResult,
           checked: Optional[tuple[collections.Counter, int, float]], seconds: float) -> dict:
    statements = result.statements
    kinds = collections.Counter(s.kind for s in statements)
    numbered = sum(1 for s in statements if s.number)
    labelled = sum(1 for s in statements if s.label)
    skipped = collections.Counter(result.skipped_environments)
    fatal = [e for e in result.events if e.fatal]
    print(f"== {name}  (main {sub.metadata.get('main_file') if sub.metadata else None}; "
          f"{result.n_bytes / 1e6:.2f} MB in {seconds:.1f} s = {result.n_bytes / 1e6 / max(seconds, 1e-9):.2f} MB/s)")
    if fatal:
        print(f"   FAILED: {_short(f'{e.stage}/{e.error_class}: {e.message}' for e in fatal)}")
    print(f"   statements {len(statements)}: {_short(f'{k} {n}' for k, n in kinds.most_common())}")
    print(f"   numbered {numbered}, unnumbered {len(statements) - numbered}, labelled {labelled}")
    print(f"   macros not expanded ({len(result.unexpanded_macros)}): {_short(result.unexpanded_macros) or '-'}")
    print(f"   environments seen, not extracted: "
          f"{_short(f'{env} ({reason}) x{n}' for (env, reason), n in skipped.most_common()) or '-'}")
    unaccounted = 0
    expanded_bytes, expand_seconds = 0, 0.0
    if checked is not None:
        begins, expanded_bytes, expand_seconds = checked
        extracted = collections.Counter(s.env_name for s in statements)
        listed = collections.Counter(env for env, _ in result.skipped_environments)
        missing = {env: n - extracted[env] - listed[env] for env, n in begins.items()
                   if n > extracted[env] + listed[env]}
        unaccounted = sum(missing.values())
        print(f"   declared \\begin's in the body {sum(begins.values())}; unaccounted {unaccounted}"
              + (f": {_short(f'{e} x{n}' for e, n in missing.items())}" if missing else ""))
    events = collections.Counter(e.error_class for e in result.events if not e.fatal)
    if events:
        print(f"   events: {_short(f'{k} {n}' for k, n in events.most_common())}")
    return {"statements": len(statements), "numbered": numbered, "bytes": result.n_bytes, "seconds": seconds,
            "unaccounted": unaccounted, "failed": bool(fatal), "expanded_bytes": expanded_bytes,
            "expand_seconds": expand_seconds}


def main(argv: Optional[list[str]] = None) -> int:
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpora", default=os.path.join(here, "..", "shared", "corpora"))
    parser.add_argument("--only", help="report only documents whose name contains this")
    args = parser.parse_args(argv)
    if not os.path.isdir(args.corpora):
        print(f"no corpora at {args.corpora}", file=sys.stderr)
        return 2
    limits = Limits()
    totals = collections.Counter()
    for name, sub in _documents(args.corpora):
        if args.only and args.only not in name:
            continue
        start = time.perf_counter()
        result = latex_project.extract(sub, limits)
        seconds = time.perf_counter() - start
        checked = declared_begins(sub, limits) if not any(e.fatal for e in result.events) else None
        figures = report(name, sub, result, checked, seconds)
        totals.update({k: v for k, v in figures.items() if not isinstance(v, bool)})
        totals["documents"] += 1
        totals["failed"] += figures["failed"]
    if totals["documents"]:
        print(f"== total: {totals['documents']} documents ({totals['failed']} failed), "
              f"{totals['statements']} statements, {totals['numbered']} numbered, "
              f"{totals['unaccounted']} unaccounted \\begin's; "
              f"{totals['bytes'] / 1e6:.1f} MB at {totals['bytes'] / 1e6 / max(totals['seconds'], 1e-9):.2f} MB/s "
              f"(extraction with rendering, one core); macro expansion of statement bodies "
              f"{totals['expanded_bytes'] / 1e6:.1f} MB at "
              f"{totals['expanded_bytes'] / 1e6 / max(totals['expand_seconds'], 1e-9):.1f} MB/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
