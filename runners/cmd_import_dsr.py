"""Import DSR-Bench's released instances from a local checkout of its repository as a thmforge release.

Reads the instance files under CHECKOUT/generation/ and CHECKOUT/natural/ (plain text and Python
literals, read with ast.literal_eval, never executed) and writes OUTPUT/instances/ with thmforge's
specs and prompts and DSR-Bench's answers as ground truth, OUTPUT/reference_checks/ with thmforge's
own answer beside each, and OUTPUT/import_summary.json. run-bench and eval-bench work on OUTPUT as on
any release. Exit code 1 when some block could not be read (listed in the summary), 2 on bad input.
"""
from __future__ import annotations

from schemas.errors import UsageError


def add_arguments(parser) -> None:
    parser.add_argument("checkout", metavar="PATH", help="local checkout of DSR-Bench's repository")
    parser.add_argument("--output", required=True, metavar="DIR", help="release directory to write")


def run(args, beam_args) -> int:
    from pipelines import import_dsr

    try:
        summary = import_dsr.import_release(args.checkout, args.output)
    except import_dsr.DsrCheckoutError as exc:
        raise UsageError(str(exc)) from None
    differ = summary["imported"] - summary["agree"]
    print(f"{summary['imported']} instances imported into {args.output}: thmforge agrees on {summary['agree']}, "
          f"differs on {differ}; {summary['failed']} blocks failed; {len(summary['skipped_files'])} files skipped "
          "(no reader for their format)")
    for task_id, counts in sorted(summary["by_task"].items()):
        print(f"  {task_id}: {counts['imported']} imported, {counts['agree']} agree, {counts['differ']} differ")
    for reason, count in summary["difference_reasons"].items():
        print(f"  differ ({count}): {reason}")
    for failure in summary["failures"][:10]:
        print(f"  failed: {failure['file']}:{failure['line']}: {failure['reason']}")
    if summary["imported"] == 0:
        print("nothing imported: no file under generation/ or natural/ has a known format")
        return 1
    return 1 if summary["failed"] else 0
