"""Find restatements: statements of other papers or sources that state the same result.

  thmforge link out/demo
  thmforge link out/demo --embedding-threshold 0.85
  thmforge link out/demo --llm-endpoint http://127.0.0.1:8000/v1 --llm-model qwen2.5-7b

Adds `restates` edges (method `text`: the same normalized text, notation renamed, by MinHash LSH;
method `embedding`: cosine of the statement vectors at or above the threshold, candidates from the
corpus's vector index when one covers a corpus of 10,000 statements or more, decided on the full
vectors) to OUTPUT/edges/ and records
the thresholds in manifest.json. Incremental: only statements not linked by an earlier run are
compared (against the whole corpus); edges of statements that no longer exist (a paper rebuilt
with changed statements) are dropped. Any other --option is a Beam pipeline option.
"""
from __future__ import annotations

import argparse
import os
import sys

from retrieval.link_candidates import INDEX_FROM_ROWS, open_neighbours
from runners.presets import add_preset_argument, apply_preset, check_services
from schemas.errors import UsageError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dir", help="output directory of build-corpus")
    parser.add_argument("--embedding-threshold", type=float, default=0.8,
                        help="cosine at or above which two statements restate each other (default 0.8)")
    parser.add_argument("--text-threshold", type=float, default=0.8,
                        help="estimated Jaccard similarity of normalized-text shingles (default 0.8)")
    parser.add_argument("--shard-size", type=int, default=20000,
                        help="corpus statements per embedding-search shard (default 20000)")
    parser.add_argument("--embedding-search", choices=("auto", "index", "exact"), default="auto",
                        help="embedding candidates from the corpus's vector index (DIR/index/, built by "
                             "`thmforge index` or build-corpus) re-scored exactly, or an exact scan; "
                             "auto (default): the index when it covers a corpus of at least "
                             f"{INDEX_FROM_ROWS:,} statements (below, the exact scan is as fast), else exact")
    llm = parser.add_argument_group("llm edges (off unless an endpoint is given)")
    llm.add_argument("--llm-endpoint", default=None,
                     help="OpenAI-compatible chat API (e.g. http://127.0.0.1:8000/v1; key in THMFORGE_LLM_API_KEY) "
                          "that proposes the earlier statements each new proof uses: `uses` edges, method llm")
    llm.add_argument("--llm-model", default=None, help="model name sent to the endpoint")
    llm.add_argument("--llm-concurrency", type=int, default=8, help="requests in flight per worker (default 8)")
    llm.add_argument("--llm-timeout", type=float, default=60.0, help="seconds to wait for one answer")
    llm.add_argument("--llm-max-attempts", type=int, default=5, help="attempts per request on retryable errors")
    add_preset_argument(parser)


def run(args: argparse.Namespace, beam_args: list[str]) -> int:
    for flag in ("embedding_threshold", "text_threshold"):
        if not 0 < getattr(args, flag) <= 1:
            raise UsageError(f"--{flag.replace('_', '-')}: between 0 (excluded) and 1")
    if args.shard_size < 1:
        raise UsageError("--shard-size must be at least 1")
    if "://" not in args.dir and not os.path.isfile(os.path.join(args.dir, "manifest.json")):
        raise UsageError(f"{args.dir}: not a build-corpus output (no manifest.json)")
    if args.llm_endpoint and not args.llm_model:
        raise UsageError("--llm-endpoint needs --llm-model")
    if args.llm_concurrency < 1 or args.llm_max_attempts < 1 or args.llm_timeout <= 0:
        raise UsageError("--llm-concurrency and --llm-max-attempts: at least 1; --llm-timeout: above 0")
    flags = check_services(apply_preset(args.preset, beam_args))

    from apache_beam.options.pipeline_options import PipelineOptions

    from pipelines.link import run_link
    from transforms.link import LinkConfig

    neighbours = None
    if args.embedding_search != "exact":
        neighbours = open_neighbours(args.dir, args.embedding_threshold)
        if neighbours is None and args.embedding_search == "index":
            raise UsageError(f"{args.dir}: no vector index covering the corpus (run `thmforge index {args.dir}`)")
        if neighbours is not None and args.embedding_search == "auto" and neighbours.rows < INDEX_FROM_ROWS:
            neighbours = None
    search = f"index:{neighbours.representation}" if neighbours is not None else "exact"
    config = LinkConfig(output=args.dir, embedding_threshold=args.embedding_threshold,
                        text_threshold=args.text_threshold, shard_size=args.shard_size)
    llm = None
    if args.llm_endpoint:
        from transforms.link_llm import LLMEdgeConfig

        llm = LLMEdgeConfig(endpoint=args.llm_endpoint, model=args.llm_model, timeout_s=args.llm_timeout,
                            max_attempts=args.llm_max_attempts, concurrency=args.llm_concurrency)
    record = run_link(config, PipelineOptions(flags), neighbours, search, llm)
    print(f"thmforge link: {record['statements_compared']} new of {record['statements']} statements compared, "
          f"{record['edges_written']} restates edges written ({record['edges_total']} in all)", file=sys.stderr)
    if llm is not None:
        counts = record["llm"]
        print(f"thmforge link: llm: {counts.get('asked', 0)} proofs asked, {counts.get('failed', 0)} failed (asked again next run), "
              f"{counts.get('unparsed', 0)} unreadable answers, {counts['edges_written']} uses edges written "
              f"({counts.get('rejected', 0)} proposals rejected: unknown statement or evidence not in the proof)",
              file=sys.stderr)
        if counts.get("failed") or counts.get("unparsed"):
            return 1
    return 0
