"""Which statements and proofs reach pylatexenc's latex2text, and what sends them there (issue 18).

Extracts every document of the shared corpora (books, papers, the arXiv bundles) with the project's
own extraction and watches its rendering: a statement (or its proof) "reaches latex2text" when some
of its prose is handed to latex2text because the fast path (`render.fast_prose`) cannot render it.
For each such piece it records the construct that stopped the fast path, and it counts the
statements whose prose took the fast path with some constructs (`\\'e`, `\\vdash`, `\\begin{tabular}`)
handed to latex2text one at a time; it prints the top 20 of both for statements and for proofs. It also lists every
statement whose rendering fell back to the regex renderer (each is an event, so a row of `failures`).

    .venv/bin/python benchmarks/render_census.py [--corpora ../shared/corpora] [--top 20]
"""
from __future__ import annotations

import argparse
import collections
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.extraction_report import _documents  # noqa: E402
from transforms.latex import extract as extraction, render  # noqa: E402
from transforms.latex.model import Limits  # noqa: E402
from transforms.sources import arxiv, latex_project  # noqa: E402


class RenderWatch:
    """Wraps extraction's rendering: which role (statement, proof, other) each latex2text call served."""

    def __init__(self):
        self.role = "other"
        self.reached = False
        self.obstacles = {"statement": collections.Counter(), "proof": collections.Counter()}
        self.chars = {"statement": collections.Counter(), "proof": collections.Counter()}   # prose handed over
        self.delegated = {"statement": collections.Counter(), "proof": collections.Counter()}
        self.used_construct = False
        self.counts = collections.Counter()          # role -> rendered, role + "-latex2text" -> reached
        self.converter, self._fast_prose = render._converter, render.fast_prose
        self._build, self._render_text = extraction._build, extraction.render_text

    def install(self) -> None:
        watch = self

        class Converter:
            def latex_to_text(self, prose, **options):
                watch.reached = True
                if watch.role in watch.obstacles:
                    obstacle = render.fast_path_report(prose)[0] or "(none)"
                    watch.obstacles[watch.role][obstacle] += 1
                    watch.chars[watch.role][obstacle] += len(prose)
                return watch.converter.latex_to_text(prose, **options)

            def nodelist_to_text(self, nodes):       # one construct the fast path hands over
                return watch.converter.nodelist_to_text(nodes)

        def fast_prose(prose):
            if watch.role in watch.delegated:
                constructs = render.fast_path_report(prose)[1]
                watch.delegated[watch.role].update(constructs)
                watch.used_construct = watch.used_construct or bool(constructs)
            return watch._fast_prose(prose)

        def build(*args, **kwargs):
            watch.calls = 0
            return watch._build(*args, **kwargs)

        def render_text(latex, location="", *args, **kwargs):
            if location:             # in _build: the statement, then its proof; titles pass no location
                watch.role = ("statement", "proof")[min(watch.calls, 1)]
                watch.calls += 1
            watch.reached = watch.used_construct = False
            try:
                return watch._render_text(latex, location, *args, **kwargs)
            finally:
                watch.counts[watch.role] += 1
                watch.counts[watch.role + "-latex2text"] += watch.reached
                watch.counts[watch.role + "-construct"] += watch.used_construct and not watch.reached
                watch.role = "other"

        render._converter, render.fast_prose = Converter(), fast_prose
        extraction._build, extraction.render_text = build, render_text


def results(corpora: str, limits: Limits, only: str = ""):
    """(name, extraction result) of every shared document and arXiv submission (names containing `only`)."""
    for name, sub in _documents(corpora):
        if only in name:
            yield name, latex_project.extract(sub, limits)
    for bundle in sorted(os.listdir(os.path.join(corpora, "arxiv"))):
        if bundle.endswith(".tar") and only in bundle:
            for sub in arxiv.read([os.path.join(corpora, "arxiv", bundle)], limits):
                if not sub.skip_reason:
                    yield sub.paper_id, arxiv.extract(sub, limits)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpora", default=os.path.join(os.path.dirname(__file__), "..", "..", "shared", "corpora"))
    parser.add_argument("--top", type=int, default=20)
    parser.add_argument("--only", default="", help="only documents and bundles whose name contains this")
    args = parser.parse_args(argv)
    if not os.path.isdir(args.corpora):
        print(f"no corpora at {args.corpora}", file=sys.stderr)
        return 2
    watch = RenderWatch()
    watch.install()
    fallbacks = []
    documents = 0
    for name, result in results(args.corpora, Limits(timeout_s=600), args.only):
        documents += 1
        fallbacks += [f"{name} {e.location}: {e.error_class}" for e in result.events if e.stage == "render"]
    print(f"{documents} documents and submissions")
    for role in ("statement", "proof"):
        total, reached = watch.counts[role], watch.counts[role + "-latex2text"]
        print(f"{role}s rendered: {total}; reaching latex2text: {reached} ({reached / max(total, 1):.1%}), "
              f"{sum(watch.chars[role].values()) / 1e3:.0f} kB of prose; first obstacle (pieces, kB):")
        for obstacle, n in watch.obstacles[role].most_common(args.top):
            print(f"  {n:6d} {watch.chars[role][obstacle] / 1e3:8.1f}  {obstacle!r}")
        constructs = watch.counts[role + "-construct"]
        print(f"  fast path with some constructs handed to latex2text one by one: {constructs} "
              f"({constructs / max(total, 1):.1%}); the constructs (occurrences):")
        for construct, n in watch.delegated[role].most_common(args.top):
            print(f"  {n:6d}  {construct!r}")
    print(f"renderings that fell back to the regex renderer (each an event, so a row of failures): {len(fallbacks)}")
    for line in fallbacks:
        print(f"  {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
