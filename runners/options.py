"""Options of `build-corpus`: inputs, output, source and resource limits, declared without Beam
(so `--help` answers at once) and read from the parsed arguments."""
from __future__ import annotations

import argparse

from transforms.latex.model import Limits
from transforms.sources import SOURCE_MODULES

_DEFAULT_LIMITS = Limits()


def add_corpus_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("corpus")
    group.add_argument("--input", nargs="+", action="extend", metavar="PATH_OR_GLOB",
                       help="arXiv bundles (arXiv_src_YYMM_NNN.tar) as paths, globs or URLs "
                            "(gs://, s3://), folders of bundles or of unpacked submissions; for "
                            "other sources their own inputs (repeatable); a paper in several inputs, or "
                            "already in the output, is kept once: the newest version that extracted ok, "
                            "else the copy that entered first (the others are duplicate failures)")
    group.add_argument("--metadata", default=None, metavar="FILE",
                       help="arxiv-metadata-oai-snapshot.json (JSON lines) joined onto papers")
    group.add_argument("--output", default=None, metavar="DIR",
                       help="output directory: papers/, theorems/, failures/, manifest.json")
    group.add_argument("--source", choices=sorted(SOURCE_MODULES), default="arxiv",
                       help="what the inputs are (default arxiv)")
    group.add_argument("--s3-requester-pays", action="store_true", default=False,
                       help="read s3:// inputs with boto3 sending RequestPayer=requester "
                            "(arXiv's bucket; you pay the transfer)")
    group.add_argument("--files-per-partition", type=int, default=1, metavar="N",
                       help="Parquet files per partition and input (default 1; raise for huge inputs)")
    group.add_argument("--inputs-per-wave", type=int, default=32, metavar="N",
                       help="inputs per pipeline run (default 32): each wave's inputs are marked "
                            "finished when it ends, so a killed run resumes after the last finished wave "
                            "(each wave reads the --metadata snapshot again)")
    group.add_argument("--no-progress", action="store_true", default=False,
                       help="do not print progress lines on stderr")
    group.add_argument("--gpu-accelerator", default=None, metavar="HINT",
                       help="Beam accelerator resource hint for the embedding step and the vllm "
                            "describer only, e.g. 'type:nvidia-l4;count:1;install-nvidia-driver' "
                            "(Dataflow starts GPU workers for those steps)")
    project = parser.add_argument_group("latex-project (books and notes; one input)")
    project.add_argument("--project-name", default=None, metavar="NAME",
                         help="paper id latex-project:NAME (default: the folder's name)")
    project.add_argument("--project-url", default=None, metavar="URL", help="link of the project")
    project.add_argument("--statement-url", default=None, metavar="TEMPLATE",
                         help="link of each statement, with {label}, {number} and {name} placeholders")
    project.add_argument("--project-year", type=int, default=None, metavar="YEAR",
                         help="year of the project (default: the year in its \\date; else 0, unknown)")
    project.add_argument("--project-title", default=None, metavar="TITLE",
                         help="title of the project (default: its \\title; else its name)")
    project.add_argument("--project-author", action="append", default=[], metavar="NAME",
                         help="an author of the project (default: its \\author); repeatable")
    project.add_argument("--format-file", action="append", default=[], metavar="FILE",
                         help="a file the root is compiled after, as with a dumped TeX format "
                              "(SymmetryBook: macros.tex); repeatable")
    limit_group = parser.add_argument_group("limits (per submission; every limit hit is recorded)")
    limit_group.add_argument("--max-submission-bytes", type=int, default=_DEFAULT_LIMITS.max_submission_bytes,
                             help="decompressed bytes of the files kept, all together (gzip and tar bombs)")
    limit_group.add_argument("--max-files", type=int, default=_DEFAULT_LIMITS.max_files,
                             help="entries of one submission (files, folders, links); past it only TeX "
                                  "sources are kept, figures are left unread and counted")
    limit_group.add_argument("--max-file-bytes", type=int, default=_DEFAULT_LIMITS.max_file_bytes,
                             help="bytes of one file (larger files are ignored and recorded)")
    limit_group.add_argument("--include-depth", type=int, default=_DEFAULT_LIMITS.include_depth,
                             help="nesting of \\input/\\include before an include is refused and recorded")
    limit_group.add_argument("--macro-depth", type=int, default=_DEFAULT_LIMITS.macro_depth,
                             help="nesting of macro expansions before a macro is given up and recorded")
    limit_group.add_argument("--macro-output-bytes", type=int, default=_DEFAULT_LIMITS.macro_output_bytes,
                             help="size of one expanded statement before a macro is given up and recorded")
    limit_group.add_argument("--paper-timeout", type=float, default=_DEFAULT_LIMITS.timeout_s,
                             help="CPU seconds of extraction per paper before it is recorded as failed (timeout)")

def source_options(args: argparse.Namespace) -> tuple[tuple[str, object], ...]:
    """The options of the chosen source that were given, as `make_source` keywords (picklable pairs)."""
    if args.source == "arxiv":
        return (("requester_pays", bool(args.s3_requester_pays)),)
    if args.source != "latex-project":
        return ()
    given = {"project_name": args.project_name, "url": args.project_url, "statement_url": args.statement_url,
             "year": args.project_year, "title": args.project_title,
             "authors": tuple(args.project_author) or None, "format_files": tuple(args.format_file) or None}
    return tuple((k, v) for k, v in given.items() if v is not None)


def corpus_limits(args: argparse.Namespace) -> Limits:
    return Limits(max_submission_bytes=args.max_submission_bytes, max_files=args.max_files,
                  max_file_bytes=args.max_file_bytes, timeout_s=args.paper_timeout,
                  include_depth=args.include_depth, macro_depth=args.macro_depth,
                  macro_output_bytes=args.macro_output_bytes)
