"""Ask a model, through an OpenAI-compatible chat-completions endpoint, every prompt of a release.

Writes OUTPUT/predictions/model=NAME/ (Parquet): every raw response with its token usage,
latency and number of attempts, or the final error of a request that kept failing. Retries back
off exponentially on 429 (honouring Retry-After), 5xx, timeouts and malformed responses. Rerun the
same command to resume: (instance, trial) pairs already answered are not asked again.
The API key, when the endpoint needs one, comes from THMFORGE_LLM_API_KEY.
Subsets: --tasks, --suites, --difficulties (comma-separated) and --limit N per (task, difficulty,
variant) cell, e.g. a quick look with `--suites main --limit 2`; progress (rate, ETA) goes to stderr.
"""
from __future__ import annotations

from runners.outputs import require_writable
from runners.presets import add_preset_argument, apply_preset, check_services
from schemas.errors import UsageError


def add_arguments(parser) -> None:
    from transforms.bench import prompts

    parser.add_argument("--instances", required=True, metavar="DIR", help="release directory (with instances/)")
    parser.add_argument("--model", required=True, help="model name sent to the endpoint (and the partition name)")
    parser.add_argument("--endpoint", required=True, metavar="URL", help="base URL, e.g. http://localhost:8000/v1")
    parser.add_argument("--output", required=True, metavar="DIR", help="where predictions/ goes")
    parser.add_argument("--trials", type=int, default=3, help="answers per instance (default 3)")
    parser.add_argument("--prompt-mode", default=prompts.DEFAULT_MODE,
                        choices=list(prompts.MODES) + sorted(prompts.MODE_ALIASES),
                        help=f"prompt mode (default {prompts.DEFAULT_MODE}); cot, kshot and code are short for "
                             "zero-shot-cot, k-shot and code-allowed")
    parser.add_argument("--description", default=prompts.DEFAULT_DESCRIPTION, choices=list(prompts.DESCRIPTIONS),
                        help="describe the structure in full or by name only")
    parser.add_argument("--temperature", type=float, default=None)
    parser.add_argument("--max-tokens", type=int, default=None)
    parser.add_argument("--reasoning-effort", default=None, help="sent as reasoning_effort (e.g. low, medium, high)")
    parser.add_argument("--seed", type=int, default=None,
                        help="send seed = SEED + trial with each request (endpoints that support it replay samples)")
    parser.add_argument("--concurrency", type=int, default=4, help="requests in flight per worker (default 4)")
    parser.add_argument("--rate-limit", type=float, default=None, metavar="RPS",
                        help="at most this many request starts per second per worker")
    parser.add_argument("--timeout", type=float, default=120.0, metavar="S",
                        help="total seconds per request, answer included (default 120)")
    parser.add_argument("--max-response-bytes", type=int, default=8 * 1024 * 1024, metavar="N",
                        help="a larger answer is cut off and recorded as too large (default 8 MiB)")
    parser.add_argument("--max-attempts", type=int, default=5, help="attempts per request before recording a failure")
    parser.add_argument("--backoff", type=float, default=0.5, metavar="S", help="first retry's backoff (doubles)")
    parser.add_argument("--tasks", default=None, metavar="IDS",
                        help="comma-separated task ids (structure/task) or structures, e.g. bst/insert,heap")
    parser.add_argument("--suites", default=None, metavar="NAMES", help="comma-separated suites, e.g. main,spatial")
    parser.add_argument("--difficulties", default=None, metavar="NAMES", help="comma-separated, e.g. easy,medium")
    parser.add_argument("--limit", type=int, default=None, metavar="N",
                        help="at most N instances per (task, difficulty, variant) cell, lowest index first")
    add_preset_argument(parser)


def run(args, beam_args) -> int:
    from pipelines import run_bench
    from transforms.bench import prompts
    from transforms.bench.selection import Selection, SelectionError, parse_list
    from transforms.scoring.tables import InputError

    require_writable(args.output)
    try:
        selection = Selection(tasks=parse_list(args.tasks), suites=parse_list(args.suites),
                              difficulties=parse_list(args.difficulties), limit=args.limit)
    except SelectionError as exc:
        raise UsageError(f"--limit: {exc}") from None
    try:
        config = run_bench.RunConfig(
            endpoint=args.endpoint, model=args.model, trials=args.trials,
            prompt_mode=prompts.normalize_mode(args.prompt_mode), description=args.description,
            temperature=args.temperature, max_tokens=args.max_tokens, reasoning_effort=args.reasoning_effort,
            concurrency=args.concurrency, rate_limit=args.rate_limit, timeout_s=args.timeout,
            max_response_bytes=args.max_response_bytes, max_attempts=args.max_attempts,
            initial_backoff_s=args.backoff, seed=args.seed)
        flags = check_services(apply_preset(args.preset, beam_args))
        result = run_bench.run(args.instances, args.output, config, flags, selection)
    except (InputError, run_bench.RunBenchError) as exc:
        raise UsageError(str(exc)) from None
    print(f"{result['predictions']} predictions for {args.model}: {result['answered']} answered, "
          f"{result['failed']} failed; asked {result['asked']} this run ({result['resumed']} already answered) "
          f"in {result['seconds']} s")
    if result["failed"]:
        print("some requests kept failing (their errors are stored); rerun the same command to retry them")
        return 1
    return 0
