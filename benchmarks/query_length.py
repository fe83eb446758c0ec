"""What embedding a query from at most its first QUERY_TOKENS (128) tokens costs in retrieval quality.

  .venv/bin/python benchmarks/query_length.py --corpus DIR [--format json]

DIR: the evaluation corpus of `benchmarks/retrieval_eval.py` (build-corpus --embed-statements over the
shared books and papers; nobody tuned anything on it for this). Three measurements, each with queries
embedded at the model's max_seq_length (the old default: 256 for all-MiniLM-L6-v2) and at QUERY_TOKENS:

1. the evaluation sets (retrieval/evalsets): how many queries are longer than QUERY_TOKENS tokens; none
   means their Hit/MRR are unchanged by construction.
2. long statements as queries, the form a user pastes: every statement whose LaTeX text
   (statement_latex) or plain-text rendering (statement_text) is longer than QUERY_TOKENS tokens, its
   own statement the gold, found by exact search among the other representations: the LaTeX text among
   the description vectors and the statement-text vectors, the plain text among the description vectors
   (a query that is the very text a stored vector embeds is left out of that search: at the model's
   maximum it is trivially first).
3. the restatement pairs of benchmarks/restates_sample.jsonl judged the same: each side as the query,
   the other its gold, in both representations, the query's own statement left out of its ranking
   (pairs with a side not in the corpus are left out).

Hit@1, Hit@10, MRR@20 at both lengths, and how many queries' gold rank improves or worsens.
"""
from __future__ import annotations

import argparse
import json
import pathlib
import sys

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from retrieval.catalog import open_catalog  # noqa: E402
from retrieval.evaluate import first_rank, metrics, read_queries  # noqa: E402
from retrieval.filters import make_filters  # noqa: E402
from retrieval.search import QUERY_TOKENS, Searcher  # noqa: E402

EVALSETS = REPO / "retrieval" / "evalsets"
RESTATES = REPO / "benchmarks" / "restates_sample.jsonl"
DEPTH = 20              # MRR@20
BATCH = 32


def evalset_files() -> list[pathlib.Path]:
    return [EVALSETS / "queries.jsonl", *sorted(EVALSETS.glob("auto/*.jsonl")), *sorted(EVALSETS.glob("abstracts/*/*.jsonl"))]


class Lengths:
    """Token counts with the corpus model's tokenizer, untruncated."""

    def __init__(self, searcher: Searcher):
        self.tokenizer = searcher.encoder.tokenizer
        self.model_max = int(self.tokenizer.truncation["max_length"])
        self.tokenizer.no_truncation()

    def __call__(self, texts: list[str]) -> list[int]:
        return [len(e.ids) for e in self.tokenizer.encode_batch(texts)]


def ranks(searcher: Searcher, queries: list[tuple[str, str, str]]) -> list:
    """The gold's rank (None: not in the top DEPTH) of each (query, gold theorem id, theorem id left out
    of the ranking or ""), by exact search."""
    found = []
    for start in range(0, len(queries), BATCH):
        batch = queries[start:start + BATCH]
        vectors = searcher.encoder.encode_queries([q for q, _, _ in batch])
        for (query, gold, left_out), vector in zip(batch, vectors):
            hits = searcher.hits(searcher.vector_ranking(query, DEPTH + 1, make_filters(), vector.tolist()))
            found.append(first_rank([h.theorem_id for h in hits if h.theorem_id != left_out][:DEPTH], {gold}))
    return found


def compare(corpus: str, representation: str, queries: list[tuple[str, str, str]], model_max: int) -> dict:
    """Metrics at the model's maximum and at QUERY_TOKENS, and the paired changes of the gold's rank."""
    by_length = {}
    for tokens in (model_max, QUERY_TOKENS):
        searcher = Searcher(open_catalog(corpus), representation=representation, exact=True, lean_encoder=True,
                            query_tokens=tokens)
        by_length[tokens] = ranks(searcher, queries)
    worst = DEPTH + 1
    old, new = ([worst if r is None else r for r in by_length[t]] for t in (model_max, QUERY_TOKENS))
    return {"queries": len(queries), f"at_{model_max}": metrics(by_length[model_max]),
            f"at_{QUERY_TOKENS}": metrics(by_length[QUERY_TOKENS]),
            "improved": sum(n < o for o, n in zip(old, new)), "worsened": sum(n > o for o, n in zip(old, new)),
            "top1_gained": sum(n == 1 < o for o, n in zip(old, new)), "top1_lost": sum(o == 1 < n for o, n in zip(old, new))}


def statements(searcher: Searcher) -> list[dict]:
    searcher.catalog.ensure_views()
    cursor = searcher.catalog.con.execute(
        "SELECT theorem_id, statement_latex, statement_text FROM theorems ORDER BY theorem_id")
    return [dict(zip(("id", "latex", "text"), row)) for row in cursor.fetchall()]


def restatement_queries(ids: set[str]) -> list[tuple[str, str, str]]:
    pairs = [json.loads(line) for line in RESTATES.read_text().splitlines() if line.strip()]
    same = [p for p in pairs if p.get("same") and p["a"]["theorem_id"] in ids and p["b"]["theorem_id"] in ids]
    return [(p[x]["text"], p[y]["theorem_id"], p[x]["theorem_id"]) for p in same for x, y in (("a", "b"), ("b", "a"))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", required=True, help="the evaluation corpus (benchmarks/retrieval_eval.py)")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    args = parser.parse_args()
    base = Searcher(open_catalog(args.corpus), lean_encoder=True, query_tokens=sys.maxsize)
    lengths = Lengths(base)
    result = {"query_tokens": QUERY_TOKENS, "model_max": lengths.model_max, "evalsets": {}}
    for path in evalset_files():
        counts = lengths([q.query for q in read_queries(str(path))])
        result["evalsets"][str(path.relative_to(EVALSETS))] = {
            "queries": len(counts), "max_tokens": max(counts), "over": sum(n > QUERY_TOKENS for n in counts)}
    rows = statements(base)
    long_queries = {}
    for field in ("latex", "text"):
        texts = [r[field] or "" for r in rows]
        long_queries[field] = [(t, r["id"], "") for t, r, n in zip(texts, rows, lengths(texts)) if n > QUERY_TOKENS]
    stored_text = {r["id"]: r["text"] for r in rows}
    result["statements"] = len(rows)
    result["long_statements"] = {
        "latex -> description": compare(args.corpus, "description", long_queries["latex"], lengths.model_max),
        "latex -> statement": compare(args.corpus, "statement", [
            query for query in long_queries["latex"] if query[0] != stored_text[query[1]]], lengths.model_max),
        "text -> description": compare(args.corpus, "description", long_queries["text"], lengths.model_max)}
    restated = restatement_queries({r["id"] for r in rows})
    result["restatements"] = {"queries_over": sum(n > QUERY_TOKENS for n in lengths([q for q, _, _ in restated]))}
    for representation in ("description", "statement"):
        result["restatements"][representation] = compare(args.corpus, representation, restated, lengths.model_max)
    if args.format == "json":
        print(json.dumps(result))
        return
    print(f"queries embedded at {lengths.model_max} (old) and {QUERY_TOKENS} tokens (new); corpus {args.corpus}, "
          f"{len(rows)} statements")
    for name, figures in result["evalsets"].items():
        print(f"  evalset {name}: {figures['queries']} queries, longest {figures['max_tokens']} tokens, "
              f"{figures['over']} over {QUERY_TOKENS}")
    tasks = {**{f"long {k}": v for k, v in result["long_statements"].items()},
             **{f"restated -> {k}": v for k, v in result["restatements"].items() if isinstance(v, dict)}}
    print(f"  restatement queries over {QUERY_TOKENS} tokens: {result['restatements']['queries_over']}")
    for name, figures in tasks.items():
        old, new = figures[f"at_{lengths.model_max}"], figures[f"at_{QUERY_TOKENS}"]
        print(f"  {name:<26} {figures['queries']:>4} queries  " + "  ".join(
            f"{m} {old[m]:.3f} -> {new[m]:.3f}" for m in ("hit@1", "hit@10", "mrr@20"))
            + f"  rank improved {figures['improved']}, worsened {figures['worsened']}"
            + f" (top 1 gained {figures['top1_gained']}, lost {figures['top1_lost']})")


if __name__ == "__main__":
    main()
