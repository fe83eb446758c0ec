"""Score a model's predictions against a release and write diagnostics.

Reads predictions from a run-bench output directory (its predictions/ table) or a JSONL file
of {"instance_id", "model", "trial", "response"} records; writes OUTPUT/scores/ (Hive Parquet
by model), OUTPUT/report.md with PNG plots beside it, and OUTPUT/rejected_predictions.jsonl for
records that could not be used. Answers are parsed from the responses (fenced JSON, trailing
prose, single quotes, a bare final-answer line) and compared canonically; an unparseable answer
scores 0 with its parse error stored.

Several releases and runs go into one report: repeat --instances (e.g. the default release and an
imported DSR-Bench release) and --predictions (models, or one model's prompt modes, side by side).
--price MODEL=IN,OUT (USD per million input and output tokens) adds the run's cost per model.
"""
from __future__ import annotations

import sys

from runners.outputs import require_writable
from runners.presets import add_preset_argument, apply_preset, check_services
from schemas.errors import UsageError


def add_arguments(parser) -> None:
    parser.add_argument("--instances", required=True, action="append", metavar="DIR",
                        help="release directory (with instances/); repeat for several releases")
    parser.add_argument("--predictions", required=True, action="append", metavar="FILE_OR_DIR",
                        help="run-bench output directory, its predictions/ directory, or a .jsonl/.parquet file; "
                             "repeat for several runs")
    parser.add_argument("--price", action="append", default=[], metavar="MODEL=IN,OUT",
                        help="USD per million input and output tokens of MODEL, for the report's cost column")
    parser.add_argument("--output", required=True, metavar="DIR", help="where scores/ and report.md go")
    parser.add_argument("--title", default="Benchmark evaluation", help="the report's title")
    add_preset_argument(parser)


def parse_prices(items: list[str]) -> dict[str, tuple[float, float]]:
    prices = {}
    for item in items:
        model, sep, numbers = item.rpartition("=")
        try:
            prices[model] = tuple(float(n) for n in numbers.split(","))
        except ValueError:
            prices[model] = ()
        if not sep or not model or len(prices[model]) != 2 or min(prices[model]) < 0:
            raise UsageError(f"--price must look like MODEL=IN,OUT (USD per million tokens), got {item!r}")
    return prices


def run(args, beam_args) -> int:
    from pipelines import eval_bench
    from transforms.scoring.tables import InputError

    require_writable(args.output)
    try:
        result = eval_bench.run(args.instances, args.predictions, args.output,
                                check_services(apply_preset(args.preset, beam_args)), title=args.title,
                                prices=parse_prices(args.price))
    except InputError as exc:
        raise UsageError(str(exc)) from None
    print(f"scored {result['scored']} predictions of {len(result['models'])} model(s); "
          f"rejected {result['rejected']}; report: {result['report']}")
    for stats in result["overall"]:
        print(f"  {stats.model}: exact {stats.mean['exact']:.3f} ± {stats.std['exact']:.3f}, "
              f"partial {stats.mean['partial']:.3f}, structural {stats.mean['structural']:.3f} "
              f"({stats.predictions} predictions, {stats.trials} trial(s))")
    if result["rejected"]:
        print(f"warning: {result['rejected']} prediction records were rejected; see "
              f"{args.output}/{eval_bench.REJECTED_FILE}", file=sys.stderr)
    return 0
