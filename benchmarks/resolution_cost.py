"""What reference resolution and the proof's plain text cost extraction (issue 15: at most +15%).

Extraction CPU time (best of 3, one process, settings alternating) on the HoTT book, the PFR blueprint and the shared 2101
arXiv bundle, in three settings measured in the same run:

  (a) baseline: no resolution (references, citations and the rest left to the renderers, no `.bbl`
      or `.bib` read) and no `proof_text`;
  (b) with resolution, as extraction runs, but no `proof_text`;
  (c) with resolution and `proof_text`: extraction as it is.

The introduction is not extracted (the default describer does not read it).

    .venv/bin/python benchmarks/resolution_cost.py [--corpora ../shared/corpora] [--repeat 3]
"""
from __future__ import annotations

import argparse
import contextlib
import dataclasses
import math
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from transforms.latex import extract as extraction, render  # noqa: E402
from transforms.latex.model import Limits  # noqa: E402
from transforms.latex.references import NO_REFERENCES  # noqa: E402
from transforms.sources import arxiv, latex_project  # noqa: E402

LIMITS = Limits(timeout_s=600, introduction_chars=0)
DOCUMENTS = {"HoTT book": "books/hott-book/hott-online.tex", "PFR blueprint": "papers/pfr-blueprint/blueprint/src/print.tex"}
BUNDLE = "arxiv/arXiv_src_2101_001.tar"
TARGET = 0.15
SETTINGS = ((False, False), (True, False), (True, True))    # (resolve, proofs): (a), (b), (c)


@contextlib.contextmanager
def setting(resolve: bool, proofs: bool):
    """Extraction with resolution and proof rendering switched off as asked, restored afterwards."""
    saved = extraction._references, render.resolve_references, extraction._build
    if not resolve:
        extraction._references = lambda *args: (NO_REFERENCES, {})
        render.resolve_references = lambda prose, *args, **kwargs: prose
    if not proofs:
        build = extraction._build
        extraction._build = lambda run, doc, raw, *args: build(run, doc, dataclasses.replace(raw, proof=None), *args)
    try:
        yield
    finally:
        extraction._references, render.resolve_references, extraction._build = saved


def inputs(corpora: str) -> dict[str, list]:
    """Name -> the submissions to extract, read beforehand (reading is not timed)."""
    out = {name: [latex_project.project_submission(os.path.join(corpora, path))]
           for name, path in DOCUMENTS.items() if os.path.exists(os.path.join(corpora, path))}
    bundle = os.path.join(corpora, BUNDLE)
    if os.path.exists(bundle):
        out["2101 bundle"] = [s for s in arxiv.read([bundle], LIMITS) if not s.skip_reason]
    return out


def extract_all(subs: list) -> int:
    return sum(len((arxiv if s.source == "arxiv" else latex_project).extract(s, LIMITS).statements) for s in subs)


def best_cpu_seconds(subs: list, repeat: int) -> tuple[list[float], int]:
    """Per setting, the best of `repeat` CPU times of extracting all `subs` (a sample runs them several
    times so that it lasts at least half a second; the settings alternate so that load is shared)."""
    started = time.process_time()
    statements = extract_all(subs)
    rounds = max(1, math.ceil(0.5 / max(time.process_time() - started, 1e-3)))
    best = [float("inf")] * len(SETTINGS)
    for _ in range(repeat):
        for i, (resolve, proofs) in enumerate(SETTINGS):
            with setting(resolve, proofs):
                started = time.process_time()
                for _ in range(rounds):
                    extract_all(subs)
                best[i] = min(best[i], (time.process_time() - started) / rounds)
    return best, statements


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpora", default=os.path.join(os.path.dirname(__file__), "..", "..", "shared", "corpora"))
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    documents = inputs(args.corpora)
    if not documents:
        print(f"no corpora at {args.corpora}", file=sys.stderr)
        return 2
    worst = 0.0
    print(f"{'':16} {'(a) neither':>12} {'(b) +resolution':>16} {'(c) +proof_text':>16}  (c)/(a)")
    for name, subs in documents.items():
        (a, b, c), n = best_cpu_seconds(subs, args.repeat)
        worst = max(worst, c / a - 1)
        print(f"{name:16} {a:10.2f} s {b:14.2f} s {c:14.2f} s  {c / a - 1:+.0%}  ({n} statements)")
    print(f"worst added cost {worst:+.0%} (target <= +{TARGET:.0%}: {'met' if worst <= TARGET else 'NOT met'})")
    return 0 if worst <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
