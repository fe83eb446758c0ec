"""Read-only SQL over the views: only queries run, checked by DuckDB's own parser.

Two layers: every statement's type (from `extract_statements`) must be a query, and the
connection itself has external access off, extension loading off and its configuration locked, so
even an allowed statement cannot read outside the output directory or change settings.
"""
from __future__ import annotations

import re

import duckdb

from schemas.errors import UsageError

_QUERY_TYPES = {duckdb.StatementType.SELECT}      # SELECT, WITH, FROM, VALUES, DESCRIBE, SHOW, SUMMARIZE
_PRAGMAS = re.compile(r"\s*pragma\s+(table_info|show_tables|show_tables_expanded|show|version|database_size)\b",
                      re.IGNORECASE)
_EXPLAIN = re.compile(r"\s*explain(\s+analyze)?\b", re.IGNORECASE)


def query_statements(con: duckdb.DuckDBPyConnection, sql: str) -> list[str]:
    """The statements of `sql` if every one of them only reads; else `UsageError` naming the first that does not."""
    try:
        statements = con.extract_statements(sql)
    except duckdb.Error as exc:
        raise UsageError(_first_line(exc)) from None
    out = []
    for statement in statements:
        text = statement.query.strip().rstrip(";").strip()
        if not _reads_only(con, statement, text):
            raise UsageError(f"read-only: only SELECT, WITH, DESCRIBE, SHOW, SUMMARIZE, EXPLAIN and "
                             f"PRAGMA table_info/show_tables are allowed, not {statement.type.name}: {_short(text)}")
        out.append(text)
    return out


def _reads_only(con, statement, text: str) -> bool:
    if statement.type in _QUERY_TYPES:
        return True
    if statement.type == duckdb.StatementType.PRAGMA:
        return bool(_PRAGMAS.match(text))
    if statement.type == duckdb.StatementType.EXPLAIN:
        inner = con.extract_statements(text[_EXPLAIN.match(text).end():])
        return len(inner) == 1 and inner[0].type in _QUERY_TYPES
    return False


def _short(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "…"


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else exc.__class__.__name__


def run_query(con: duckdb.DuckDBPyConnection, sql: str) -> list[duckdb.DuckDBPyRelation | None]:
    """Check then run every statement of `sql`; each result as a relation (None for a PRAGMA without rows)."""
    results = []
    for text in query_statements(con, sql):
        try:
            results.append(con.sql(text))
        except duckdb.Error as exc:
            raise UsageError(str(exc).strip()) from None
    return results
