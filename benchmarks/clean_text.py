"""Clean statement text: how many statements still carry LaTeX noise, and how many needed latex2text.

Over the shared arXiv bundles and the HoTT book it counts statements whose `statement_text` holds a
`<ref>`/`<cit.>` placeholder, a `??` although every label the statement refers to exists, an index-entry
fragment (`a!b`, `|defstyle`), a soft hyphen, or a control sequence outside math; the target is at most
1%. It also prints the share of statements whose prose went through pylatexenc's latex2text (the rest
took the fast path), the statements whose rendering fell back (each is an event in `failures`), and
for the arXiv bundles the share of `\\cite` keys resolved to an arXiv id or DOI through the
submission's `.bbl`/`.bib`, and of those the share whose arXiv paper is in the bundles.

    .venv/bin/python benchmarks/clean_text.py [--corpora ../shared/corpora] [--show 5]
"""
from __future__ import annotations

import argparse
import collections
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from transforms.latex import render  # noqa: E402
from transforms.latex.model import ExtractionResult, Limits  # noqa: E402
from transforms.latex.references import References  # noqa: E402
from transforms.edges import statement_edges  # noqa: E402
from transforms.sources import arxiv, latex_project  # noqa: E402

_MATH_RE = re.compile(r"\$\$.*?\$\$|\$[^$]*\$", re.S)
_REF_ARG_RE = re.compile(r"\\[A-Za-z]*ref\*?\s*\{([^{}]*)\}")
NOISE = {
    "placeholder": re.compile(r"<ref>|<Ref>|<cit\.>"),
    "index-entry": re.compile(r"\w!\w|\|(?:defstyle|see|textbf|emph|hyperpage)"),
    "soft-hyphen": re.compile("\u00ad"),
    "control-sequence": re.compile(r"\\[A-Za-z@]+"),
}


def noise(statement_text: str, statement_latex: str, labels: dict) -> list[str]:
    """The kinds of noise in one statement's text."""
    prose = _MATH_RE.sub(" ", statement_text)
    found = [name for name, pattern in NOISE.items() if pattern.search(prose)]
    referenced = [n.strip() for m in _REF_ARG_RE.finditer(statement_latex) for n in m.group(1).split(",")]
    if "??" in prose and referenced and all(n in labels for n in referenced):
        found.append("??-for-existing-label")
    return found


class _CountingConverter:
    """latex2text, counting the calls (each is one piece of prose the fast path could not render)."""

    def __init__(self, converter):
        self.converter, self.calls = converter, 0

    def latex_to_text(self, text: str, **options) -> str:
        self.calls += 1
        return self.converter.latex_to_text(text, **options)

    def nodelist_to_text(self, nodes) -> str:       # one construct the fast path hands over: not counted
        return self.converter.nodelist_to_text(nodes)


def _results(corpora: str):
    for bundle in sorted(os.listdir(os.path.join(corpora, "arxiv"))):
        if bundle.endswith(".tar"):
            for submission in arxiv.read([os.path.join(corpora, "arxiv", bundle)]):
                if not submission.skip_reason:
                    yield submission.paper_id, arxiv.extract(submission, Limits())
    hott = os.path.join(corpora, "books", "hott-book", "hott-online.tex")
    if os.path.exists(hott):
        yield "hott-book", latex_project.extract(latex_project.project_submission(hott), Limits())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpora", default=os.path.join(os.path.dirname(__file__), "..", "..", "shared", "corpora"))
    parser.add_argument("--show", type=int, default=3, help="examples printed per kind of noise")
    args = parser.parse_args()
    counting = render._converter = _CountingConverter(render._converter)
    total = noisy = through_latex2text = 0
    kinds: collections.Counter = collections.Counter()
    examples: dict[str, list[str]] = collections.defaultdict(list)
    fallbacks: list[str] = []
    papers: set[str] = set()
    cites: list[dict] = []
    for paper, result in _results(args.corpora):
        result: ExtractionResult
        papers.add(paper)
        if paper.startswith("arxiv:"):
            ids = {s.ordinal: str(s.ordinal) for s in result.statements}
            cites += [e for e in statement_edges(result, ids) if e["method"] == "cite"]
        fallbacks += [f"{paper} {e.location}: {e.error_class}" for e in result.events if e.stage == "render"]
        references = References(result.labels, result.bibliography)
        for s in result.statements:
            total += 1
            before = counting.calls                  # rendered again to see which path it takes
            render.render_text(s.statement_latex, references=references)
            through_latex2text += counting.calls > before
            found = noise(s.statement_text, s.statement_latex, result.labels)
            if found:
                noisy += 1
                kinds.update(found)
                for kind in found:
                    if len(examples[kind]) < args.show:
                        examples[kind].append(f"{paper} {s.file}:{s.line}: {s.statement_text[:160]}")
    print(f"statements: {total}; with noise: {noisy} ({noisy / max(total, 1):.1%}); target <= 1%")
    for kind, n in kinds.most_common():
        print(f"  {kind}: {n}")
        for example in examples[kind]:
            print(f"    {example}")
    print(f"statements whose prose reached latex2text: {through_latex2text} of {total} "
          f"({through_latex2text / max(total, 1):.1%}); the rest took the fast path")
    resolved = [e for e in cites if e["dst_paper_id"] or e["dst_doi"]]
    in_corpus = [e for e in resolved if e["dst_paper_id"] in papers]
    print(f"citation keys cited by statements (arXiv bundles): {len(cites)}; resolved to an arXiv id or DOI: "
          f"{len(resolved)} ({len(resolved) / max(len(cites), 1):.1%}); of those in the bundles: {len(in_corpus)} "
          f"({len(in_corpus) / max(len(resolved), 1):.1%})")
    print(f"fallback renderings (each recorded in failures): {len(fallbacks)}")
    for line in fallbacks[:20]:
        print(f"  {line}")


if __name__ == "__main__":
    main()
