"""Extract theorem-like statements from LaTeX sources into Hive-partitioned Parquet tables.

  thmforge build-corpus --input samples/arxiv/*.tar \\
      --metadata samples/arxiv/arxiv-metadata-oai-snapshot.json --output out/demo

  thmforge build-corpus --input 's3://arxiv/src/arXiv_src_2101_*.tar' --s3-requester-pays \\
      --metadata arxiv-metadata-oai-snapshot.json --output gs://bucket/corpus --preset dataflow \\
      --project P --region R --temp_location gs://bucket/tmp

Writes OUTPUT/papers/ (one row per submission: ok, failed or skipped), OUTPUT/theorems/source=S/year=Y/,
OUTPUT/failures/ and OUTPUT/manifest.json, which names the committed files. Files appear only when
the run succeeded and every submission is accounted for; rerunning an input replaces its files, new
inputs add files; a killed run, rerun, redoes only the inputs it had not finished.
Any other --option is a Beam pipeline option and passes through to the runner.
"""
from __future__ import annotations

import argparse
import collections
import dataclasses
import json
import os
import sys

from runners import outcome
from runners.options import add_corpus_arguments, corpus_limits, source_options
from runners.outputs import require_writable
from runners.presets import AUTO, add_preset_argument, apply_preset, auto_preset, check_services, input_bytes
from schemas.errors import UsageError
from transforms.describe.options import add_describe_arguments
from transforms.embed.options import add_embed_arguments


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_corpus_arguments(parser)
    add_describe_arguments(parser)
    add_embed_arguments(parser)
    add_preset_argument(parser, auto=True)


def _validate(args: argparse.Namespace, source) -> None:
    if not args.input:
        raise UsageError("--input is required (bundles, globs, URLs or folders)")
    if not args.output:
        raise UsageError("--output is required")
    if args.metadata and not source.takes_metadata:
        raise UsageError(f"--metadata is a source's metadata file; --source {args.source} takes none")
    if args.metadata and "://" not in args.metadata and not os.path.isfile(args.metadata):
        raise UsageError(f"--metadata {args.metadata}: no such file")
    project_flags = [f"--{flag.replace('_', '-')}" for flag in
                     ("project_name", "project_url", "statement_url", "project_year", "project_title",
                      "project_author", "format_file")
                     if getattr(args, flag)]
    if project_flags and args.source != "latex-project":
        raise UsageError(f"{', '.join(project_flags)} only apply to --source latex-project")
    if args.project_name and len(args.input) > 1:
        raise UsageError("--project-name names one project: give one --input")
    if args.inputs_per_wave < 1:
        raise UsageError("--inputs-per-wave must be at least 1")
    if args.files_per_partition < 1:
        raise UsageError("--files-per-partition must be at least 1")
    for flag in ("max_submission_bytes", "max_files", "max_file_bytes", "paper_timeout", "include_depth",
                 "macro_depth", "macro_output_bytes"):
        if getattr(args, flag) <= 0:
            raise UsageError(f"--{flag.replace('_', '-')} must be positive")


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
    from transforms.model_parts import MissingParts

    try:
        embed.manifest()
    except MissingParts as exc:
        raise UsageError(f"--embed-model {embed.model}: {exc}") from None
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


def _expand_inputs(source, inputs: list[str]) -> list[str]:
    """The inputs as the source expands them (local paths absolute), and no two inputs may share
    a name (the name owns the output files of its papers)."""
    from transforms.write.files import input_group

    try:
        paths = source.expand_inputs(inputs)
    except FileNotFoundError as exc:
        raise UsageError(str(exc)) from None
    names = collections.Counter(input_group(p) for p in paths)
    clashes = sorted(name for name, n in names.items() if n > 1)
    if clashes:
        raise UsageError(f"inputs share the name {', '.join(clashes)}: run them into separate outputs "
                         "or give folders of distinct names")
    return paths


def _check_metadata(source, path: str) -> None:
    """A metadata file that holds no records (a JSON array, gzip, binary) is refused before the run."""
    from transforms.sources.base import check_metadata_file

    try:
        check_metadata_file(source, path)
    except (ValueError, OSError) as exc:
        raise UsageError(f"--metadata {path}: {exc}") from None


def _recorded_options(args: argparse.Namespace, beam_args: list[str], inputs: list[str]) -> dict:
    """The options as the manifest records them (JSON-safe, no secrets: keys come from the environment);
    the inputs as expanded, so relative and absolute spellings record the same."""
    values = {k: v for k, v in vars(args).items() if not k.startswith("_") and k != "command"}
    values["input"] = inputs
    return json.loads(json.dumps({**values, "beam_args": beam_args}, default=str))


def _index_stage(output: str, options: PipelineOptions, representations: list[str]) -> None:
    """After a run that embedded: build or extend the search index of every representation it
    embedded (only new files are encoded). A remote output is indexed where it is mounted, with
    `thmforge index DIR`."""
    import pathlib

    if "://" in output:
        print(f"thmforge build-corpus: index not built for remote {output}; run `thmforge index` where it is mounted",
              file=sys.stderr)
        return
    from retrieval.index_job import build_index

    for representation in representations:
        summary = build_index(pathlib.Path(output).resolve(), representation, options)
        print(f"thmforge build-corpus: {representation} index: {summary['shards_encoded']} of {summary['shards']} "
              "files encoded", file=sys.stderr)


def run(args: argparse.Namespace, beam_args: list[str]) -> int:
    from transforms.sources import make_source

    source = make_source(args.source, **dict(source_options(args)))
    _validate(args, source)         # argument errors answer before Beam is imported
    preset = auto_preset(input_bytes(args.input)) if args.preset == AUTO else args.preset
    flags = check_services(apply_preset(preset, beam_args))

    from apache_beam.options.pipeline_options import PipelineOptions

    from pipelines.corpus import CorpusConfig, IncompatibleOutputError, run_corpus, stage_configs
    from transforms.corpus import ReadConfig
    from transforms.write.commit import AccountingError, staging_dir

    values = {k: v for k, v in vars(args).items() if not k.startswith("_") and k not in ("command", "preset")}
    options = PipelineOptions(flags, **values)
    _validate_runner(options)
    if not _dry_run(options):      # a dry run reads and writes nothing: it needs neither check
        if args.metadata:
            _check_metadata(source, args.metadata)
        require_writable(args.output)
    inputs = _expand_inputs(source, args.input)
    try:
        describe, embed = stage_configs(options, args.output, args.embed_model)
    except (ValueError, OSError) as exc:
        raise UsageError(f"{exc}") from None
    if embed is not None:
        _check_model_installed(embed)
    progress = not args.no_progress
    describe = dataclasses.replace(describe, progress=progress)
    embed = dataclasses.replace(embed, progress=progress) if embed is not None else None
    total = source.count_papers(inputs) if progress else None
    read = ReadConfig(source=args.source, limits=corpus_limits(args), staging=staging_dir(args.output),
                      total_papers=total, progress=progress, describe_context=getattr(describe, "context", "body"),
                      launcher_pid=os.getpid(), source_options=source_options(args))
    config = CorpusConfig(inputs=tuple(inputs), output=args.output, read=read, metadata=args.metadata,
                          files_per_partition=args.files_per_partition, inputs_per_wave=args.inputs_per_wave,
                          describe=describe, embed=embed,
                          gpu_accelerator=args.gpu_accelerator)
    if _dry_run(options):
        return _translate_only(config, options)
    try:
        manifest = run_corpus(config, options, recorded_options=_recorded_options(args, beam_args, inputs))
    except AccountingError as exc:
        print(f"thmforge build-corpus: {exc}\nnothing was committed; staged files kept in "
              f"{staging_dir(args.output)}", file=sys.stderr)
        return 1
    except IncompatibleOutputError as exc:
        raise UsageError(str(exc)) from None
    if embed is not None:
        _index_stage(args.output, options, ["description"] + (["statement"] if embed.embed_statements else []))
    print(outcome.summary(manifest, args.output), file=sys.stderr)
    resume = manifest.get("resume") or {}
    if resume.get("inputs_finished_earlier"):
        print(f"thmforge build-corpus: resumed: {resume['inputs_finished_earlier']} of {resume['inputs']} inputs "
              f"finished by an interrupted run were kept, {resume['inputs_processed']} processed", file=sys.stderr)
    failed = outcome.problems(manifest)
    for problem in failed:
        print(f"thmforge build-corpus: error: {problem}", file=sys.stderr)
    return 1 if failed else 0
