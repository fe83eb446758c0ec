"""Search a corpus's theorems in plain words.

  thmforge search out/demo "every bounded monotone sequence converges" -k 5
  thmforge search out/demo "compact Hausdorff" --kind theorem,lemma --year 2015:2024 --format json

Modes: vector (cosine with the stored embeddings, using the corpus's own model and query prompt
from manifest.json: from the index under DIR/index/ when it is current, candidates re-scored
exactly; --exact scans every stored vector), lexical (BM25 of DuckDB's full-text search over
statement text, description and titles) and hybrid (reciprocal-rank fusion of both). --rerank MODEL reorders the top candidates with a
sentence-transformers cross-encoder given by local path (or a name in the offline cache).
Filters take comma-separated values or repeat; values are bound parameters, never SQL.
"""
from __future__ import annotations

import argparse
import contextlib
import sys

from retrieval.catalog import open_catalog
from retrieval.filters import make_filters, parse_year_range
from retrieval.render import hits_json, hits_table
from retrieval.search import LEXICAL_WEIGHT, MODES, QUERY_TOKENS, REPRESENTATIONS, Searcher
from schemas.errors import UsageError

MAX_K = 1000
MAX_QUERY_CHARS = 2000


def _list(values):
    """Repeated or comma-separated option values as one list."""
    return [v for value in values or [] for v in value.split(",")] or None


def add_filter_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--kind", action="append", metavar="K", help="statement kind(s): theorem, lemma, definition, ...")
    parser.add_argument("--category", action="append", metavar="C", help="arXiv category (math.AG) or archive (math)")
    parser.add_argument("--year", metavar="FROM:TO", help="year range, e.g. 2015:2020, 2015: or :2020")
    parser.add_argument("--source", action="append", metavar="S", help="arxiv, latex-project, stacks or proofwiki")
    parser.add_argument("--author", action="append", metavar="A", help="author name (case-insensitive substring)")
    parser.add_argument("--paper", action="append", metavar="ID", help="paper id, e.g. arxiv:2101.00001")


def filters_from_args(args):
    year_from, year_to = parse_year_range(args.year) if args.year else (None, None)
    return make_filters(kinds=_list(args.kind), sources=_list(args.source), categories=_list(args.category),
                        year_from=year_from, year_to=year_to, authors=args.author, paper_ids=_list(args.paper))


def add_searcher_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--representation", choices=sorted(REPRESENTATIONS), default="description",
                        help="which stored vectors to search: of the description (default) or of the statement text")
    parser.add_argument("--query-model", metavar="NAME",
                        help="expected embedding model; an error unless it is the corpus's model")
    parser.add_argument("--rerank", metavar="MODEL", help="cross-encoder (local path or cached name) to rerank with")
    parser.add_argument("--rerank-depth", type=int, default=50, metavar="N", help="candidates to rerank (default 50)")
    parser.add_argument("--lexical-weight", type=float, default=LEXICAL_WEIGHT, metavar="W",
                        help="weight of the BM25 ranking against the vector ranking in hybrid mode "
                             f"(default {LEXICAL_WEIGHT:g})")
    parser.add_argument("--exact", action="store_true",
                        help="scan every stored vector instead of the index (the reference for its recall)")
    parser.add_argument("--query-tokens", type=int, default=QUERY_TOKENS, metavar="N",
                        help=f"embed a query from at most its first N tokens (default {QUERY_TOKENS}, the length "
                             "the packaged models were trained on; at most the model's own maximum)")


def searcher_from_args(args, *, lean_encoder: bool = False, views: bool = True) -> Searcher:
    """`views=False`: the catalog's views only if the search needs them (no current index)."""
    if not 1 <= args.rerank_depth <= MAX_K:
        raise UsageError(f"--rerank-depth: between 1 and {MAX_K}")
    if not 0 <= args.lexical_weight <= 100:
        raise UsageError("--lexical-weight: between 0 and 100")
    if args.query_tokens < 2:
        raise UsageError("--query-tokens: at least 2 (the model's start and end tokens)")
    reranker = None
    if args.rerank:
        from retrieval.rerank import CrossEncoderReranker

        reranker = CrossEncoderReranker(args.rerank)
    catalog = open_catalog(args.dir, views=views)
    if not any((catalog.root / table).is_dir() for table in ("papers", "theorems")):
        raise UsageError(f"{args.dir}: not a corpus (no papers/ or theorems/): build one with build-corpus")
    return Searcher(catalog, query_model=args.query_model, representation=args.representation,
                    reranker=reranker, rerank_depth=args.rerank_depth, exact=args.exact,
                    lexical_weight=args.lexical_weight, lean_encoder=lean_encoder, query_tokens=args.query_tokens)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dir", help="output directory of build-corpus")
    parser.add_argument("query", help="what you are looking for, in words")
    parser.add_argument("-k", type=int, default=10, help=f"number of results (1-{MAX_K}, default 10)")
    parser.add_argument("--mode", choices=MODES, default="vector", help="ranking (default vector)")
    add_filter_arguments(parser)
    add_searcher_arguments(parser)
    parser.add_argument("--format", choices=("table", "json"), default="table")


@contextlib.contextmanager
def pandas_hidden():
    """pandas made unimportable meanwhile, unless it is imported already. DuckDB's Python client
    imports pandas to check every bound parameter for pandas' NA (0.5 s of CPU: half of a cold
    lexical search) and skips the check when it cannot; a one-shot search binds only str, int
    and lists of str. Process-wide, so for one-shot commands only, never for a server."""
    if "pandas" in sys.modules:
        yield
        return
    sys.modules["pandas"] = None
    try:
        yield
    finally:
        if sys.modules.get("pandas", False) is None:
            del sys.modules["pandas"]


def run(args, beam_args) -> int:
    if not 1 <= args.k <= MAX_K:
        raise UsageError(f"-k: between 1 and {MAX_K}")
    query = args.query.strip()
    if not query or len(query) > MAX_QUERY_CHARS:
        raise UsageError(f"query: between 1 and {MAX_QUERY_CHARS} characters")
    filters = filters_from_args(args)
    searcher = searcher_from_args(args, lean_encoder=True, views=False)    # one query: no torch import
    if args.mode != "lexical":
        searcher.encoder            # the model loads before pandas is hidden (a fallback may need it)
    with contextlib.nullcontext() if args.rerank else pandas_hidden():
        hits = searcher.search(query, k=args.k, filters=filters, mode=args.mode)
    print(hits_json(hits) if args.format == "json" else hits_table(hits))
    return 0
