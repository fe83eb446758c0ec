"""Extract theorem-like statements from LaTeX sources into Hive-partitioned Parquet tables.

  thmforge build-corpus --input samples/arxiv/*.tar \\
      --metadata samples/arxiv/arxiv-metadata-oai-snapshot.json --output out/demo

  thmforge build-corpus --input 's3://arxiv/src/arXiv_src_2101_*.tar' --s3-requester-pays \\
      --metadata arxiv-metadata-oai-snapshot.json --output gs://bucket/corpus --preset dataflow \\
      --project P --region R --temp_location gs://bucket/tmp

Writes OUTPUT/papers/ (one row per submission: ok, failed or skipped), OUTPUT/theorems/source=S/year=Y/,
OUTPUT/failures/ and OUTPUT/manifest.json. Files appear only when the run succeeded and every
submission is accounted for; rerunning an input replaces its files, new inputs add files.
Any other --option is a Beam pipeline option and passes through to the runner.
"""
from __future__ import annotations

import argparse
import json
import os
import sys

from apache_beam.options.pipeline_options import PipelineOptions

from runners.errors import UsageError
from runners.options import CorpusOptions
from runners.presets import add_preset_argument, apply_preset

EMBED_NONE = "none"


def _stage_option_classes() -> list:
    """Option classes of the describe and embed stages, where those stages exist."""
    classes = []
    for module_name, class_name in (("transforms.describe", "DescribeOptions"), ("transforms.embed", "EmbedOptions")):
        try:
            module = __import__(module_name, fromlist=[class_name])
        except ModuleNotFoundError:
            continue
        if hasattr(module, class_name):
            classes.append(getattr(module, class_name))
    return classes


def _defines(parser: argparse.ArgumentParser, flag: str) -> bool:
    return any(flag in action.option_strings for action in parser._actions)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    CorpusOptions._add_argparse_args(parser)
    for options_class in _stage_option_classes():
        options_class._add_argparse_args(parser)
    if not _defines(parser, "--embed-model"):
        parser.add_argument("--embed-model", default=EMBED_NONE, metavar="NAME_OR_PATH|none",
                            help="sentence-transformers model for embeddings, or none (the embedding "
                                 "stage is not installed in this build: only none)")
    add_preset_argument(parser)


def _validate(args: argparse.Namespace) -> None:
    if not args.input:
        raise UsageError("--input is required (bundles, globs, URLs or folders)")
    if not args.output:
        raise UsageError("--output is required")
    if args.metadata and "://" not in args.metadata and not os.path.isfile(args.metadata):
        raise UsageError(f"--metadata {args.metadata}: no such file")
    if args.files_per_partition < 1:
        raise UsageError("--files-per-partition must be at least 1")
    for flag in ("max_submission_bytes", "max_files", "max_file_bytes", "paper_timeout"):
        if getattr(args, flag) <= 0:
            raise UsageError(f"--{flag.replace('_', '-')} must be positive")


def _recorded_options(args: argparse.Namespace, beam_args: list[str]) -> dict:
    """The options as the manifest records them (JSON-safe, no secrets: keys come from the environment)."""
    values = {k: v for k, v in vars(args).items() if not k.startswith("_") and k != "command"}
    return json.loads(json.dumps({**values, "beam_args": beam_args}, default=str))


def run(args: argparse.Namespace, beam_args: list[str]) -> int:
    from pipelines.corpus import (CorpusConfig, IncompatibleOutputError, count_submissions, run_corpus,
                                  stage_configs)
    from transforms.corpus import ReadConfig
    from transforms.sources import arxiv
    from transforms.write.commit import AccountingError, staging_dir

    _validate(args)
    flags = apply_preset(args.preset, beam_args)
    values = {k: v for k, v in vars(args).items() if not k.startswith("_") and k not in ("command", "preset")}
    options = PipelineOptions(flags, **values)
    corpus_options = options.view_as(CorpusOptions)
    store = arxiv.BundleStore(requester_pays=args.s3_requester_pays)
    try:
        inputs = arxiv.expand_inputs(args.input, store) if args.source == arxiv.SOURCE else list(args.input)
    except FileNotFoundError as exc:
        raise UsageError(str(exc)) from None
    try:
        describe, embed = stage_configs(options, args.output, args.embed_model)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    progress = not args.no_progress
    total = count_submissions(inputs, store) if progress and args.source == arxiv.SOURCE else None
    read = ReadConfig(source=args.source, limits=corpus_options.limits(), requester_pays=args.s3_requester_pays,
                      staging=staging_dir(args.output), total_papers=total, progress=progress,
                      describe_context=getattr(describe, "context", "body"), launcher_pid=os.getpid())
    config = CorpusConfig(inputs=tuple(inputs), output=args.output, read=read, metadata=args.metadata,
                          files_per_partition=args.files_per_partition, describe=describe, embed=embed)
    try:
        manifest = run_corpus(config, options, recorded_options=_recorded_options(args, beam_args))
    except AccountingError as exc:
        print(f"thmforge build-corpus: {exc}\nnothing was committed; staged files kept in "
              f"{staging_dir(args.output)}", file=sys.stderr)
        return 1
    except IncompatibleOutputError as exc:
        raise UsageError(str(exc)) from None
    counts = manifest["counts"]
    status = counts["by_status"]
    print(f"thmforge build-corpus: {counts['papers']} papers (ok {status['ok']}, failed {status['failed']}, "
          f"skipped {status['skipped']}), {counts['statements']} statements -> {args.output}", file=sys.stderr)
    return 0
