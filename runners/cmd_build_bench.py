"""Generate a data-structure reasoning benchmark release (DSR-Bench's 20 structures and 35 tasks,
plus the spatial, natural-language and code probes) as a Beam pipeline.

Writes DIR/instances/suite=S/category=C/*.parquet, DIR/instances.jsonl, DIR/hf/ (a Hugging Face
DatasetDict with a dataset card) and DIR/manifest.json with the release's content hash. The same
seed regenerates the release byte for byte on any runner; another seed gives fresh instances.
Default: 4,140 instances (main 3,150, spatial 450, natural 270, code 270); --per-cell N scales.
"""
from __future__ import annotations

from runners.outputs import require_writable
from runners.presets import add_preset_argument, apply_preset, check_services
from schemas.errors import UsageError


def add_arguments(parser) -> None:
    from transforms.bench.release import ALL_SUITES, DEFAULT_PER_CELL, SUITES

    parser.add_argument("--output", required=True, metavar="DIR", help="release directory")
    parser.add_argument("--seed", type=int, default=0, help="generator seed (default 0)")
    parser.add_argument("--per-cell", type=int, default=DEFAULT_PER_CELL, metavar="N",
                        help=f"instances per (task, difficulty) cell of the main suite (default {DEFAULT_PER_CELL}); "
                             "the probes scale in proportion")
    parser.add_argument("--suites", default=",".join(SUITES), help=f"comma-separated subset of {','.join(ALL_SUITES)} (default: the default release's "
                             f"{','.join(SUITES)})")
    add_preset_argument(parser)


def run(args, beam_args) -> int:
    from pipelines import bench
    from transforms.bench.release import parse_suites

    if args.per_cell < 1:
        raise UsageError(f"--per-cell must be at least 1, got {args.per_cell}")
    if args.seed < 0:
        raise UsageError(f"--seed must be a non-negative integer, got {args.seed}")
    try:
        suites = parse_suites(args.suites)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    require_writable(args.output)
    manifest = bench.run(args.output, seed=args.seed, per_cell=args.per_cell, suites=suites,
                         beam_args=check_services(apply_preset(args.preset, beam_args)))
    counts = manifest["counts"]
    by_suite = ", ".join(f"{s} {n}" for s, n in counts["by_suite"].items())
    print(f"{counts['total']} instances ({by_suite}); {counts['structures']} structures, "
          f"{counts['main_tasks']} main tasks; content hash {manifest['content_hash']}; written to {args.output}")
    return 0
