"""Automatic retrieval evaluation sets from a built corpus: gold known, query text hidden from the index.

  .venv/bin/python benchmarks/build_evalsets.py --corpus out/evalset-corpus [--output retrieval/evalsets/auto]

Two kinds of set, each split by project into a tuning and a held-out file (`HELD_OUT` projects):
- `named`: a statement's author-given title ("Hedberg's theorem") is the query and the statement
  is the gold; the title is hidden from the gold statement's indexed text (`hide_title`).
- `sections`: a section's title is the query and the first statement of that section (by order in
  the source) is the gold; the title is hidden from the section path of every statement
  (`hide_section`).
- `abstracts` (`--kind abstracts`): a claim sentence of a paper's abstract is the query and the
  statement of that paper that states it is the gold, chosen by `claim_gold` (word coverage, not a
  retrieval mode). Abstracts come from the papers table (arXiv metadata) or, with
  `--abstracts-from DIR`, from the `abstract` environment of `DIR/<bundle>/<main file>` of each
  latex-project paper. Nothing of an abstract is indexed (the search text is title, statement,
  description and paper title; descriptions carry no abstract unless `--describe-context
  body+abstract`, so build the corpus without it), hence nothing to hide. Every abstract set is held out.
Each file keeps at most `--max-per-set` queries, evenly spaced in source order.
Queries are kept only when they are unambiguous and not given away by the gold's own text: a title
used by two statements, or found verbatim in the gold statement's text, is dropped; so is one
with LaTeX left in it or shorter than 4 letters. Every record is the contract's queries format
(theorem ids and paper ids as gold) plus the hide key; `retrieval_quality.py` applies the hiding.
"""
from __future__ import annotations

import argparse
import json
import pathlib
import re
import sys
from collections import Counter

from pylatexenc.latex2text import LatexNodes2Text

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from retrieval.catalog import open_catalog  # noqa: E402
from transforms.describe.records import normalize_space  # noqa: E402

# Projects whose queries are never used to choose anything (weights, template, model).
HELD_OUT = ("latex-project:hott-book", "latex-project:rijke-hott-intro", "latex-project:pfr-blueprint",
            "latex-project:equational-theories")
MIN_LETTERS = 4
MAX_PER_SET = 200      # evenly spaced over the set in source order: lexical search costs ~0.2 s a query here
CLAIM_KINDS = ("theorem", "proposition", "corollary", "lemma")   # what an abstract's claim can be
CLAIM_VERBS = re.compile(r"\b(prove[ns]?|show[ns]?|give[ns]?|establish|obtain|classify|characteri[sz]e|compute|"
                         r"construct|extend|define|introduce|study|determine[sd]?|report)\b", re.I)
MIN_CLAIM_WORDS = 6
MIN_COVERAGE = 0.3     # share of the claim's content words the gold statement must contain
STOPWORDS = frozenset("""that this these those with from which where their there then than into also such
    each every some have here show shows prove proves paper article give gives given using used more most
    only over under both other between about first second well whose they them what when""".split())


def rows_of(con, sql: str) -> list[dict]:
    cursor = con.execute(sql)
    columns = [d[0] for d in cursor.description]
    return [dict(zip(columns, values)) for values in cursor.fetchall()]


def usable(title: str) -> bool:
    return sum(c.isalpha() for c in title) >= MIN_LETTERS and not re.search(r"[\\$^_{}]", title)


def fold(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.lower()))


def named_queries(rows: list[dict]) -> list[dict]:
    titles = Counter(fold(r["title"]) for r in rows if r["title"])
    out = []
    for r in rows:
        title = normalize_space(r["title"])
        if not title or not usable(title) or titles[fold(title)] > 1:
            continue
        if fold(title) in fold(r["statement_text"] or ""):
            continue
        out.append({"query": title, "theorem_ids": [r["theorem_id"]], "paper_ids": [r["paper_id"]],
                    "hide_title": True})
    return out


def section_queries(rows: list[dict]) -> list[dict]:
    first: dict[tuple, dict] = {}
    for r in sorted(rows, key=lambda r: (r["paper_id"], r["ordinal"] or 0)):
        path = tuple(normalize_space(s) for s in r["section_path"] or [])
        if path and path not in first:
            first[path] = r
    titles = Counter(fold(path[-1]) for path in first)
    out = []
    for path, r in first.items():
        title = path[-1]
        if not usable(title) or titles[fold(title)] > 1 or fold(title) in fold(r["statement_text"] or ""):
            continue
        out.append({"query": title, "theorem_ids": [r["theorem_id"]], "paper_ids": [r["paper_id"]],
                    "hide_section": title})
    return out


def content_words(text: str) -> set[str]:
    """Words of 4+ letters outside a small stop list, cut to 6 letters (classify ~ classification)."""
    return {w[:6] for w in re.findall(r"[a-z]{4,}", text.lower()) if w not in STOPWORDS}


def claim_sentences(abstract: str) -> list[str]:
    """The abstract's sentences that claim something (a claim verb) in at least MIN_CLAIM_WORDS words."""
    sentences = re.split(r"(?<=[.!?])\s+(?=[A-Z])", normalize_space(abstract))
    return [s for s in sentences if len(s.split()) >= MIN_CLAIM_WORDS and "??" not in s and CLAIM_VERBS.search(s)]


def claim_gold(claim: str, statements: list[dict]) -> dict | None:
    """The theorem-like statement of the paper holding the largest share of the claim's content words
    (at least MIN_COVERAGE; ties to the earlier statement), or None: the claim states nothing found.
    Unweighted word coverage, deliberately not BM25 or an embedding (the modes under evaluation)."""
    words = content_words(claim)
    if len(words) < 3:
        return None
    best, best_share = None, MIN_COVERAGE - 1e-9
    for row in statements:
        if (row["kind"] or "").lower() in CLAIM_KINDS:
            share = len(words & content_words(row["statement_text"] or "")) / len(words)
            if share > best_share:
                best, best_share = row, share
    return best


def latex_abstract(main_file: pathlib.Path) -> str:
    """The text of the first `abstract` environment of a LaTeX file ('' when it has none)."""
    try:
        source = main_file.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    found = re.search(r"\\begin\{abstract\}(.*?)\\end\{abstract\}", source, re.S)
    return LatexNodes2Text(math_mode="verbatim").latex_to_text(found.group(1)) if found else ""


def abstract_queries(rows: list[dict], papers: list[dict], abstracts_from: str | None) -> list[dict]:
    by_paper: dict[str, list[dict]] = {}
    for r in rows:
        by_paper.setdefault(r["paper_id"], []).append(r)
    out = []
    for paper in papers:
        abstract = paper["abstract"] or ""
        if not abstract and abstracts_from and paper["bundle"] and paper["main_file"]:
            abstract = latex_abstract(pathlib.Path(abstracts_from) / paper["bundle"] / paper["main_file"])
        for claim in claim_sentences(abstract):
            gold = claim_gold(claim, by_paper.get(paper["paper_id"], []))
            if gold:
                out.append({"query": claim, "theorem_ids": [gold["theorem_id"]], "paper_ids": [paper["paper_id"]]})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default=str(REPO / "out" / "evalset-corpus"), help="a built corpus directory")
    parser.add_argument("--output", default=str(REPO / "retrieval" / "evalsets" / "auto"))
    parser.add_argument("--max-per-set", type=int, default=MAX_PER_SET, help="queries kept per file")
    parser.add_argument("--kind", nargs="+", default=["named", "sections"], choices=["named", "sections", "abstracts"])
    parser.add_argument("--abstracts-from", metavar="DIR",
                        help="folder holding each latex-project paper's folder (its abstract environment)")
    args = parser.parse_args()
    con = open_catalog(args.corpus).con
    rows, papers = (rows_of(con, sql) for sql in (
        "SELECT theorem_id, paper_id, ordinal, kind, title, section_path, statement_text FROM theorems "
        "ORDER BY paper_id, ordinal, theorem_id",
        "SELECT paper_id, abstract, bundle, main_file FROM papers WHERE status = 'ok' ORDER BY paper_id"))
    output = pathlib.Path(args.output)
    output.mkdir(parents=True, exist_ok=True)
    builders = {"named": lambda: named_queries(rows), "sections": lambda: section_queries(rows),
                "abstracts": lambda: abstract_queries(rows, papers, args.abstracts_from)}
    for kind in args.kind:
        queries = builders[kind]()
        for split in ("tuning", "heldout"):
            chosen = [q for q in queries if (kind == "abstracts" or q["paper_ids"][0] in HELD_OUT) == (split == "heldout")]
            if not chosen and kind == "abstracts":
                continue
            if len(chosen) > args.max_per_set:
                chosen = [chosen[i * len(chosen) // args.max_per_set] for i in range(args.max_per_set)]
            path = output / f"{kind}-{split}.jsonl"
            path.write_text("".join(json.dumps(q, ensure_ascii=False) + "\n" for q in chosen), encoding="utf-8")
            print(f"{path}: {len(chosen)} queries")


if __name__ == "__main__":
    main()
