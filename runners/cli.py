"""`thmforge`: one subcommand per job. Each lives in `runners/cmd_<name>.py` with
`add_arguments(parser)` and `run(args, beam_args) -> int`; unknown `--options` of the pipeline
commands pass through to Beam. `add_arguments` imports nothing heavy (no Beam, torch or
transformers), so `--help` and argument errors answer at once; `run` imports what it runs."""
from __future__ import annotations

import argparse
import importlib
import os
import sys

EXIT_CODES = """exit codes:
  0    the run did its job (papers that failed are recorded, not fatal)
  1    the run ended but did not do its job: an input unreadable as a whole, a configured stage
       that failed for every statement, requests that kept failing, an accounting mismatch
  2    bad arguments or input: an unknown option, a missing file, a directory that is not a
       thmforge output, a model that is not installed, a runner that cannot start
  130  interrupted (Ctrl-C)"""

# subcommand -> (module, one-line help, passes unknown options to Beam)
COMMANDS = {
    "build-corpus": ("runners.cmd_build_corpus", "extract theorem-like statements into Parquet tables", True),
    "sql": ("runners.cmd_sql", "DuckDB over a corpus or benchmark directory's tables as views", False),
    "export": ("runners.cmd_export", "a corpus as a Hugging Face dataset, a DuckDB file or CSV", False),
    "index": ("runners.cmd_index", "build or extend a corpus's vector and full-text search index", True),
    "search": ("runners.cmd_search", "semantic / lexical / hybrid theorem search", False),
    "serve": ("runners.cmd_serve", "search page, JSON API and MCP endpoint over HTTP", False),
    "mcp": ("runners.cmd_mcp", "MCP server over stdio: theorem search and graph tools for agents", False),
    "graph": ("runners.cmd_graph", "what a statement uses and what uses it (the edges table)", False),
    "link": ("runners.cmd_link", "restatements: the same result in other papers (restates edges)", True),
    "eval-retrieval": ("runners.cmd_eval_retrieval", "Hit@k and MRR of search modes on a query set", False),
    "build-bench": ("runners.cmd_build_bench", "generate a data-structure reasoning benchmark release", True),
    "bench-answer": ("runners.cmd_bench_answer", "reference answer of a task for a spec you write", False),
    "import-dsr": ("runners.cmd_import_dsr", "import DSR-Bench's released instances from a local checkout", False),
    "run-bench": ("runners.cmd_run_bench", "query a model endpoint with a release's prompts", True),
    "eval-bench": ("runners.cmd_eval_bench", "score predictions and write diagnostics with plots", True),
}


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse's own errors: same contract, exit code 2
        self.print_usage(sys.stderr)
        self.exit(2, f"{self.prog}: error: {message}\n")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser; only `command`'s module is imported (pipeline modules pull in heavy libraries)."""
    parser = _Parser(
        prog="thmforge", allow_abbrev=False, epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Theorem corpora from mathematical LaTeX, and data-structure reasoning benchmarks, as Apache Beam pipelines.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for name, (module_name, help_text, passes_beam) in COMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text, allow_abbrev=False,
                           epilog=EXIT_CODES, formatter_class=argparse.RawDescriptionHelpFormatter)
        if name == command:
            module = importlib.import_module(module_name)
            p.description = (module.__doc__ or help_text).strip()
            module.add_arguments(p)
            p.set_defaults(_module=module, _passes_beam=passes_beam)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser(argv[0] if argv and argv[0] in COMMANDS else None)
    args, unknown = parser.parse_known_args(argv)
    if unknown and not args._passes_beam:
        parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    from schemas.errors import UsageError   # after parsing: `--help` imports no table schemas

    try:
        return int(args._module.run(args, unknown) or 0)
    except UsageError as exc:
        print(f"thmforge {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except Exception as exc:    # the run itself failed: one line (THMFORGE_TRACEBACK=1 shows where)
        if os.environ.get("THMFORGE_TRACEBACK"):
            raise
        text = str(exc).strip()
        print(f"thmforge {args.command}: error: {type(exc).__name__}: {text.splitlines()[0] if text else ''}"
              f" (THMFORGE_TRACEBACK=1 prints where)", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
