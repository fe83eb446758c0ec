"""DuckDB SQL over an output directory's tables, read-only.

  thmforge sql out/demo -c "SELECT kind, count(*) FROM theorems GROUP BY kind"
  thmforge sql out/demo            # interactive: statements end with ';', Ctrl-D quits

Views: papers, theorems, failures (empty when a run wrote none), and instances, predictions,
scores where those folders exist. Only queries run (SELECT, WITH, DESCRIBE, SHOW, SUMMARIZE,
EXPLAIN, PRAGMA table_info); files outside the directory cannot be read.
"""
from __future__ import annotations

import argparse
import csv
import json
import sys

import duckdb

from retrieval.catalog import lock_down, open_catalog
from retrieval.readonly import run_query
from schemas.errors import UsageError

MAX_ROWS = 10_000


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dir", help="output directory (of build-corpus, build-bench or eval-bench)")
    parser.add_argument("-c", "--command", dest="sql", metavar="SQL", help="run these statements and exit")
    parser.add_argument("--format", choices=("table", "csv", "json"), default="table",
                        help="output of -c (default table)")
    parser.add_argument("--max-rows", type=int, default=MAX_ROWS, help=f"rows printed per result (default {MAX_ROWS})")


def print_result(relation, fmt: str, max_rows: int, out=None) -> None:
    if relation is None:
        return
    out = out or sys.stdout      # looked up per call: stdout may have been replaced since import
    try:
        if fmt == "table":
            relation.show(max_rows=max_rows, max_width=10_000)
            return
        columns = relation.columns
        rows = relation.limit(max_rows).fetchall()
    except duckdb.Error as exc:
        raise UsageError(str(exc).strip()) from None
    if fmt == "csv":
        writer = csv.writer(out)
        writer.writerow(columns)
        writer.writerows(rows)
    else:
        for row in rows:
            out.write(json.dumps(dict(zip(columns, row)), default=str, ensure_ascii=False) + "\n")


def repl(con, fmt: str, max_rows: int) -> int:
    interactive = sys.stdin.isatty()
    buffer: list[str] = []
    prompt = "thmforge> "
    while True:
        if interactive:
            print(prompt if not buffer else "     ...> ", end="", flush=True)
        line = sys.stdin.readline()
        if not line:
            return 0
        buffer.append(line)
        if not line.rstrip().endswith(";"):
            continue
        sql, buffer = "".join(buffer), []
        try:
            for relation in run_query(con, sql):
                print_result(relation, fmt, max_rows)
        except UsageError as exc:
            print(f"error: {exc}", file=sys.stderr)


def run(args, beam_args) -> int:
    if args.max_rows < 1:
        raise UsageError("--max-rows: at least 1")
    catalog = open_catalog(args.dir)
    lock_down(catalog.con, catalog.root)
    if args.sql is None:
        return repl(catalog.con, args.format, args.max_rows)
    for relation in run_query(catalog.con, args.sql):
        print_result(relation, args.format, args.max_rows)
    return 0
