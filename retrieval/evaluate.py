"""Retrieval evaluation: Hit@1/10/20 and MRR@20 at theorem and paper level, per search mode.

Gold statements are given by theorem id, by `\\label` or by Stacks tag (contract format); labels and
tags are resolved to theorem ids in the corpus (restricted to the query's `paper_ids` when given,
since labels are only unique within a paper). A query whose gold resolves to nothing counts as a
miss and is reported as unresolved, so extraction losses show up in the score.
Paper level: the rank of the first result that belongs to a gold paper.
"""
from __future__ import annotations

import dataclasses
import json
import pathlib
from typing import Iterable, Optional, Sequence

from retrieval.filters import Filters
from retrieval.search import Searcher
from schemas.errors import UsageError

CUTOFFS = (1, 10, 20)
MRR_CUTOFF = 20
MAX_QUERIES = 100_000


@dataclasses.dataclass(frozen=True)
class Query:
    query: str
    theorem_ids: tuple[str, ...] = ()
    labels: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    paper_ids: tuple[str, ...] = ()
    line: int = 0


def _strings(record: dict, key: str, where: str) -> tuple[str, ...]:
    value = record.get(key, [])
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise UsageError(f"{where}: {key!r} must be a list of non-empty strings")
    return tuple(value)


def parse_queries(lines: Iterable[str], source: str = "queries") -> list[Query]:
    queries = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{source}:{number}"
        try:
            record = json.loads(line)
        except ValueError as exc:
            raise UsageError(f"{where}: not JSON ({exc})") from None
        if not isinstance(record, dict) or not isinstance(record.get("query"), str) or not record["query"].strip():
            raise UsageError(f"{where}: expected an object with a non-empty \"query\" string")
        query = Query(record["query"].strip(), _strings(record, "theorem_ids", where), _strings(record, "labels", where),
                      _strings(record, "tags", where), _strings(record, "paper_ids", where), number)
        if not (query.theorem_ids or query.labels or query.tags):
            raise UsageError(f"{where}: no gold given (theorem_ids, labels or tags)")
        queries.append(query)
        if len(queries) > MAX_QUERIES:
            raise UsageError(f"{source}: more than {MAX_QUERIES} queries")
    if not queries:
        raise UsageError(f"{source}: no queries")
    return queries


def read_queries(path: str) -> list[Query]:
    try:
        with open(path, encoding="utf-8") as handle:
            return parse_queries(handle, path)
    except OSError as exc:
        raise UsageError(f"--queries: cannot read {path} ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise UsageError(f"--queries: {path} is not UTF-8") from None


def resolve_gold(searcher: Searcher, query: Query) -> tuple[set[str], set[str]]:
    """(gold theorem ids, gold paper ids) of a query in this corpus."""
    con = searcher.con
    ids = set(query.theorem_ids)
    restrict = "AND list_contains(?, paper_id)" if query.paper_ids else ""
    extra = [list(query.paper_ids)] if query.paper_ids else []
    for column, values in (("label", query.labels), ("tag", query.tags)):
        if values:
            rows = con.execute(f"SELECT theorem_id FROM search_corpus WHERE list_contains(?, {column}) {restrict}",
                               [list(values)] + extra).fetchall()
            ids.update(r[0] for r in rows)
    papers = set(query.paper_ids)
    if ids and not papers:
        rows = con.execute("SELECT DISTINCT paper_id FROM search_corpus WHERE list_contains(?, theorem_id)",
                           [sorted(ids)]).fetchall()
        papers = {r[0] for r in rows}
    return ids, papers


def first_rank(items: Sequence[str], gold: set[str]) -> Optional[int]:
    for position, item in enumerate(items, start=1):
        if item in gold:
            return position
    return None


def metrics(ranks: Sequence[Optional[int]]) -> dict[str, float]:
    """Hit@k and MRR@20 of first-relevant ranks (None: not found)."""
    n = len(ranks) or 1
    out = {f"hit@{k}": sum(1 for r in ranks if r is not None and r <= k) / n for k in CUTOFFS}
    out[f"mrr@{MRR_CUTOFF}"] = sum(1.0 / r for r in ranks if r is not None and r <= MRR_CUTOFF) / n
    return {key: round(value, 4) for key, value in out.items()}


@dataclasses.dataclass
class ModeResult:
    mode: str
    theorem: dict[str, float]
    paper: dict[str, float]
    per_query: list[dict]


def evaluate(searcher: Searcher, queries: Sequence[Query], modes: Sequence[str], k: int = 20,
             filters: Filters = Filters()) -> tuple[list[ModeResult], int]:
    """Metrics per mode and the number of queries whose gold is not in the corpus."""
    gold = [resolve_gold(searcher, q) for q in queries]
    unresolved = sum(1 for ids, _ in gold if not ids)
    vectors = None
    if any(m in ("vector", "hybrid") for m in modes):
        encoded = searcher.encoder.encode_queries([q.query for q in queries])
        vectors = [v.tolist() for v in encoded]
    results = []
    for mode in modes:
        per_query, theorem_ranks, paper_ranks = [], [], []
        for i, query in enumerate(queries):
            ranked = searcher.ranking(query.query, k, filters, mode, vector=vectors[i] if vectors else None)
            hits = searcher.hits(ranked)
            theorem_rank = first_rank([h.theorem_id for h in hits], gold[i][0])
            paper_rank = first_rank([h.paper_id for h in hits], gold[i][1])
            theorem_ranks.append(theorem_rank)
            paper_ranks.append(paper_rank)
            per_query.append({"line": query.line, "query": query.query, "mode": mode, "theorem_rank": theorem_rank,
                              "paper_rank": paper_rank, "gold": sorted(gold[i][0]),
                              "top": [h.theorem_id for h in hits[:5]], "top_labels": [h.label for h in hits[:5]]})
        results.append(ModeResult(mode, metrics(theorem_ranks), metrics(paper_ranks), per_query))
    return results, unresolved


def write_ranks(path: str, results: Sequence[ModeResult]) -> None:
    target = pathlib.Path(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with target.open("w", encoding="utf-8") as handle:
            for result in results:
                for row in result.per_query:
                    handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    except OSError as exc:
        raise UsageError(f"--ranks-out: cannot write {path} ({exc.strerror})") from None
