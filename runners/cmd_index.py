"""Build or extend the search index of a corpus under DIR/index/.

  thmforge index out/demo
  thmforge index out/demo --representation statement

A Beam job (any --option passes through to the runner): trains the IVF-PQ quantizer on a sample
when the representation has none, encodes the theorem files not indexed yet in parallel, then
merges the shards into one memory-mapped index and writes the search table with its persisted
BM25 index; a corpus under 250,000 statements with the default `local` preset runs the same
steps in this process without Beam. `build-corpus` runs this for the description vectors after
each run that embeds.
"""
from __future__ import annotations

import argparse
import sys

from schemas.errors import UsageError

REPRESENTATIONS = ("description", "statement")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from runners.presets import add_preset_argument

    parser.add_argument("dir", help="output directory of build-corpus")
    parser.add_argument("--representation", choices=REPRESENTATIONS, default="description",
                        help="which stored vectors to index (default description)")
    add_preset_argument(parser)


def run(args, beam_args) -> int:
    from retrieval.index_job import build_index
    from retrieval.catalog import output_root
    from runners.presets import PRESETS, apply_preset

    root = output_root(args.dir)
    flags = apply_preset(args.preset, beam_args)     # Beam is imported only when the job needs it
    try:
        # the local preset's flags alone (no other option given): a small corpus needs no Beam
        summary = build_index(root, args.representation, flags, in_process=set(flags) <= set(PRESETS["local"]()))
    except (OSError, ValueError) as exc:
        raise UsageError(f"index: {exc}") from None
    print(f"thmforge index: {summary['rows']} statements, {summary['shards_encoded']} of {summary['shards']} "
          f"files encoded ({args.representation}) in {summary['total_s']:.1f} s (vectors {summary['encode_s']:.1f} s, "
          f"{summary['encode_cpu_s']:.1f} s CPU; merge {summary['merge_s']:.1f} s; all {summary['total_cpu_s']:.1f} s "
          f"CPU) -> {root / 'index'}", file=sys.stderr)
    return 0
