"""DuckDB SQL over an output directory's tables, read-only.

  thmforge sql out/demo -c "SELECT kind, count(*) FROM theorems GROUP BY kind"
  thmforge sql out/demo            # interactive: statements end with ';', Ctrl-D quits

Interactively, lines are edited and recalled as in a shell (readline; history in
~/.thmforge_sql_history), and tables fit the terminal: long lists such as a 384-float embedding
show their first values and their length.

Views: papers, theorems, failures, edges (empty when a run wrote none), and instances, predictions,
scores where those folders exist. Only queries run (SELECT, WITH, DESCRIBE, SHOW, SUMMARIZE,
EXPLAIN, PRAGMA table_info); files outside the directory cannot be read.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import sys

import duckdb

from retrieval.catalog import lock_down, open_catalog
from retrieval.readonly import run_query
from schemas.errors import UsageError

MAX_ROWS = 10_000
HISTORY_FILE = "~/.thmforge_sql_history"
HISTORY_LINES = 1000
LIST_PREVIEW_CHARS = 40       # a long list in a terminal table: this much of it, then its length
WIDE = 10_000                 # table width when the output is not a terminal


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dir", help="output directory (of build-corpus, build-bench or eval-bench)")
    parser.add_argument("-c", "--command", dest="sql", metavar="SQL", help="run these statements and exit")
    parser.add_argument("--format", choices=("table", "csv", "json"), default="table",
                        help="output of -c (default table)")
    parser.add_argument("--max-rows", type=int, default=MAX_ROWS, help=f"rows printed per result (default {MAX_ROWS})")


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def shorten_lists(relation):
    """Long list and array columns as their first values and length (for a table on a terminal)."""
    exprs, changed = [], False
    for name, kind in zip(relation.columns, relation.types):
        column = _quoted(name)
        if str(kind).endswith("]"):
            changed = True
            text = f"CAST({column} AS VARCHAR)"
            exprs.append(f"CASE WHEN length({text}) > {LIST_PREVIEW_CHARS} THEN left({text}, {LIST_PREVIEW_CHARS}) "
                         f"|| '… (' || len({column}) || ' values)' ELSE {text} END AS {column}")
        else:
            exprs.append(column)
    return relation.project(", ".join(exprs)) if changed else relation


def print_result(relation, fmt: str, max_rows: int, out=None) -> None:
    if relation is None:
        return
    out = out or sys.stdout      # looked up per call: stdout may have been replaced since import
    try:
        if fmt == "table":
            if getattr(out, "isatty", lambda: False)():
                shorten_lists(relation).show(max_rows=max_rows, max_width=shutil.get_terminal_size().columns)
            else:
                relation.show(max_rows=max_rows, max_width=WIDE)
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


def _line_reader():
    """`read(prompt) -> line or None at end`: readline editing and history on a terminal, plain reads otherwise."""
    if not sys.stdin.isatty():
        return lambda prompt: sys.stdin.readline() or None
    import atexit
    import readline

    history = os.path.expanduser(HISTORY_FILE)
    try:
        readline.read_history_file(history)
    except OSError:
        pass                       # no history yet
    readline.set_history_length(HISTORY_LINES)

    def save():
        try:
            readline.write_history_file(history)
        except OSError:
            pass                   # a read-only home: editing still works, history is not kept
    atexit.register(save)

    def read(prompt):
        try:
            return input(prompt) + "\n"
        except EOFError:
            print()
            return None
    return read


def repl(con, fmt: str, max_rows: int) -> int:
    read = _line_reader()
    buffer: list[str] = []
    while True:
        line = read("thmforge> " if not buffer else "     ...> ")
        if line is None:
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
