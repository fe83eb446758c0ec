"""Automatic retrieval evaluation sets from a built corpus: gold known, query text hidden from the index.

  .venv/bin/python benchmarks/build_evalsets.py --corpus out/evalset-corpus [--output retrieval/evalsets/auto]

Two kinds of set, each split by project into a tuning and a held-out file (`HELD_OUT` projects):
- `named`: a statement's author-given title ("Hedberg's theorem") is the query and the statement
  is the gold; the title is hidden from the gold statement's indexed text (`hide_title`).
- `sections`: a section's title is the query and the first statement of that section (by order in
  the source) is the gold; the title is hidden from the section path of every statement
  (`hide_section`).
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

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from retrieval.catalog import open_catalog  # noqa: E402
from transforms.describe.records import normalize_space  # noqa: E402

# Projects whose queries are never used to choose anything (weights, template, model).
HELD_OUT = ("latex-project:hott-book", "latex-project:rijke-hott-intro", "latex-project:pfr-blueprint",
            "latex-project:equational-theories")
MIN_LETTERS = 4
MAX_PER_SET = 200      # evenly spaced over the set in source order: lexical search costs ~0.2 s a query here


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default=str(REPO / "out" / "evalset-corpus"), help="a built corpus directory")
    parser.add_argument("--output", default=str(REPO / "retrieval" / "evalsets" / "auto"))
    parser.add_argument("--max-per-set", type=int, default=MAX_PER_SET, help="queries kept per file")
    args = parser.parse_args()
    con = open_catalog(args.corpus).con
    cursor = con.execute("SELECT theorem_id, paper_id, ordinal, title, section_path, statement_text FROM theorems "
                         "ORDER BY paper_id, ordinal, theorem_id")
    columns = [d[0] for d in cursor.description]
    rows = [dict(zip(columns, values)) for values in cursor.fetchall()]
    output = pathlib.Path(args.output)
    output.mkdir(parents=True, exist_ok=True)
    for kind, queries in (("named", named_queries(rows)), ("sections", section_queries(rows))):
        for split in ("tuning", "heldout"):
            chosen = [q for q in queries if (q["paper_ids"][0] in HELD_OUT) == (split == "heldout")]
            if len(chosen) > args.max_per_set:
                chosen = [chosen[i * len(chosen) // args.max_per_set] for i in range(args.max_per_set)]
            path = output / f"{kind}-{split}.jsonl"
            path.write_text("".join(json.dumps(q, ensure_ascii=False) + "\n" for q in chosen), encoding="utf-8")
            print(f"{path}: {len(chosen)} queries")


if __name__ == "__main__":
    main()
