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
import collections
import dataclasses
import glob
import json
import os
import sys

from runners import outcome
from runners.options import add_corpus_arguments, corpus_limits, source_options
from runners.presets import add_preset_argument, apply_preset, check_services
from schemas.errors import UsageError
from transforms.describe.options import add_describe_arguments
from transforms.embed.options import add_embed_arguments


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_corpus_arguments(parser)
    add_describe_arguments(parser)
    add_embed_arguments(parser)
    add_preset_argument(parser)


def _validate(args: argparse.Namespace) -> None:
    if not args.input:
        raise UsageError("--input is required (bundles, globs, URLs or folders)")
    if not args.output:
        raise UsageError("--output is required")
    if args.metadata and args.source != "arxiv":
        raise UsageError(f"--metadata is arXiv's metadata snapshot; --source {args.source} takes none")
    if args.metadata and "://" not in args.metadata and not os.path.isfile(args.metadata):
        raise UsageError(f"--metadata {args.metadata}: no such file")
    project_flags = [f"--{flag.replace('_', '-')}" for flag in
                     ("project_name", "project_url", "statement_url", "project_year", "format_file")
                     if getattr(args, flag)]
    if project_flags and args.source != "latex-project":
        raise UsageError(f"{', '.join(project_flags)} only apply to --source latex-project")
    if args.project_name and len(args.input) > 1:
        raise UsageError("--project-name names one project: give one --input")
    if args.files_per_partition < 1:
        raise UsageError("--files-per-partition must be at least 1")
    for flag in ("max_submission_bytes", "max_files", "max_file_bytes", "paper_timeout", "include_depth",
                 "macro_depth", "macro_output_bytes"):
        if getattr(args, flag) <= 0:
            raise UsageError(f"--{flag.replace('_', '-')} must be positive")


def _validate_output(output: str) -> None:
    if "://" not in output and os.path.exists(output) and not os.path.isdir(output):
        raise UsageError(f"--output {output}: exists and is not a directory")


def _validate_runner(options) -> None:
    """An unknown --runner is a usage error now, not a traceback after the inputs were read."""
    from apache_beam.options.pipeline_options import StandardOptions
    from apache_beam.runners.runner import create_runner

    name = options.view_as(StandardOptions).runner
    if name:
        try:
            create_runner(name)
        except (ValueError, ImportError) as exc:
            raise UsageError(f"--runner {name}: {exc}") from None


def _check_model_installed(embed) -> None:
    """Load the embedding model once here, so a model that is not installed fails before any work,
    with what to do instead of the hub's "check your internet connection"."""
    try:
        embed.manifest()
    except (ValueError, OSError) as exc:
        raise UsageError(
            f"--embed-model {embed.model}: not installed here (no such local folder, not in the offline "
            f"Hugging Face cache: {type(exc).__name__}); give the path of a sentence-transformers model "
            f"folder, fetch it where there is internet (huggingface-cli download {embed.model}) and copy "
            f"the cache, or use --embed-model none") from None


def _dry_run(options) -> bool:
    from apache_beam.options.pipeline_options import StandardOptions, TestOptions

    if str(options.view_as(TestOptions).dry_run).lower() != "true":
        return False
    if options.view_as(StandardOptions).runner != "DataflowRunner":
        raise UsageError("--dry_run=True translates a Dataflow job: use it with --preset dataflow")
    return True


def _translate_only(config, options) -> int:
    """--dry_run=True: Dataflow's runner translates and checks the job offline; nothing runs or is written."""
    import apache_beam as beam

    from pipelines.corpus import BuildCorpus

    pipeline = beam.Pipeline(options=options)
    _ = pipeline | "BuildCorpus" >> BuildCorpus(config)
    pipeline.run()
    print("thmforge build-corpus: dry run: the Dataflow job was translated; nothing ran, nothing was written",
          file=sys.stderr)
    return 0


def _expand_inputs(source: str, inputs: list[str], store) -> list[str]:
    """The inputs as paths; arXiv globs are expanded, other sources' local inputs must exist, and
    no two inputs may share a name (the name owns the output files of its papers)."""
    from transforms.sources import arxiv

    if source == arxiv.SOURCE:
        try:
            paths = arxiv.expand_inputs(inputs, store)
        except FileNotFoundError as exc:
            raise UsageError(str(exc)) from None
    else:
        missing = [p for p in inputs if "://" not in p and not glob.glob(p)]
        if missing:
            raise UsageError(f"no input matches {', '.join(missing)}")
        paths = list(inputs)
    names = collections.Counter(arxiv.group_name(p) for p in paths)
    clashes = sorted(name for name, n in names.items() if n > 1)
    if clashes:
        raise UsageError(f"inputs share the name {', '.join(clashes)}: run them into separate outputs "
                         "or give folders of distinct names")
    return paths


def _recorded_options(args: argparse.Namespace, beam_args: list[str]) -> dict:
    """The options as the manifest records them (JSON-safe, no secrets: keys come from the environment)."""
    values = {k: v for k, v in vars(args).items() if not k.startswith("_") and k != "command"}
    return json.loads(json.dumps({**values, "beam_args": beam_args}, default=str))


def run(args: argparse.Namespace, beam_args: list[str]) -> int:
    _validate(args)                 # argument errors answer before Beam is imported
    _validate_output(args.output)
    flags = check_services(apply_preset(args.preset, beam_args))

    from apache_beam.options.pipeline_options import PipelineOptions

    from pipelines.corpus import (CorpusConfig, IncompatibleOutputError, count_submissions, run_corpus,
                                  stage_configs)
    from transforms.corpus import ReadConfig
    from transforms.sources import arxiv
    from transforms.write.commit import AccountingError, staging_dir

    values = {k: v for k, v in vars(args).items() if not k.startswith("_") and k not in ("command", "preset")}
    options = PipelineOptions(flags, **values)
    _validate_runner(options)
    store = arxiv.BundleStore(requester_pays=args.s3_requester_pays)
    inputs = _expand_inputs(args.source, args.input, store)
    try:
        describe, embed = stage_configs(options, args.output, args.embed_model)
    except (ValueError, OSError) as exc:
        raise UsageError(f"{exc}") from None
    if embed is not None:
        _check_model_installed(embed)
    progress = not args.no_progress
    describe = dataclasses.replace(describe, progress=progress)
    embed = dataclasses.replace(embed, progress=progress) if embed is not None else None
    total = count_submissions(inputs, store) if progress and args.source == arxiv.SOURCE else None
    read = ReadConfig(source=args.source, limits=corpus_limits(args), requester_pays=args.s3_requester_pays,
                      staging=staging_dir(args.output), total_papers=total, progress=progress,
                      describe_context=getattr(describe, "context", "body"), launcher_pid=os.getpid(),
                      source_options=source_options(args))
    config = CorpusConfig(inputs=tuple(inputs), output=args.output, read=read, metadata=args.metadata,
                          files_per_partition=args.files_per_partition, describe=describe, embed=embed,
                          gpu_accelerator=args.gpu_accelerator)
    if _dry_run(options):
        return _translate_only(config, options)
    try:
        manifest = run_corpus(config, options, recorded_options=_recorded_options(args, beam_args))
    except AccountingError as exc:
        print(f"thmforge build-corpus: {exc}\nnothing was committed; staged files kept in "
              f"{staging_dir(args.output)}", file=sys.stderr)
        return 1
    except IncompatibleOutputError as exc:
        raise UsageError(str(exc)) from None
    print(outcome.summary(manifest, args.output), file=sys.stderr)
    failed = outcome.problems(manifest)
    for problem in failed:
        print(f"thmforge build-corpus: error: {problem}", file=sys.stderr)
    return 1 if failed else 0
