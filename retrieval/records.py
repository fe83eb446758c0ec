"""One statement or one paper with its neighbourhood, as plain records (for the web app and MCP).

Reads the catalog's views through a DuckDB cursor, so lookups run concurrently with each other
and with searches. The neighbourhood comes from the `edges` table (issue 15's theorem graph):
`uses` edges give a statement's dependencies and dependents, `restates` edges its restatements
elsewhere. A corpus without an `edges` view has an empty neighbourhood, not an error.
"""
from __future__ import annotations

from typing import Optional

import duckdb

MAX_NEIGHBOURS = 200        # per list: a hub statement's thousands of dependents are cut
MAX_PAPER_STATEMENTS = 2000

_STATEMENT_SQL = """
    SELECT t.theorem_id, t.paper_id, t.source, t.year, t.kind, t.display_name, t.number, t.title, t.label,
           t.tag, t.section_path, t.file, t.line, t.statement_latex, t.statement_text, t.proof_latex,
           t.proof_text,
           coalesce(t.url, p.url) AS url
    FROM theorems t LEFT JOIN (SELECT paper_id, any_value(url) AS url FROM papers GROUP BY paper_id) p
         USING (paper_id)
    WHERE t.theorem_id = ? LIMIT 1"""
_PAPER_SQL = """
    SELECT paper_id, source, source_id, version, title, coalesce(authors, []) AS authors,
           coalesce(categories, []) AS categories, primary_category, year, abstract, license, doi, url
    FROM papers WHERE paper_id = ? ORDER BY source_id LIMIT 1"""
_BRIEF_COLUMNS = "t.theorem_id, t.paper_id, t.kind, t.display_name, t.number, t.title, t.tag, t.statement_text"


def statement_name(kind: str, display_name: Optional[str], number: Optional[str], tag: Optional[str],
                   title: Optional[str]) -> str:
    """"Theorem 2.3 (Title)", as a search hit names it."""
    head = " ".join(x for x in (display_name or kind.capitalize(), number or tag) if x)
    return f"{head} ({title})" if title else head


def _rows(cursor: duckdb.DuckDBPyConnection, sql: str, params) -> list[dict]:
    result = cursor.execute(sql, params)
    names = [d[0] for d in result.description]
    return [dict(zip(names, row)) for row in result.fetchall()]


def _brief(row: dict) -> dict:
    """A neighbour as a result list shows it."""
    text = " ".join((row.pop("statement_text") or "").split())
    row["name"] = statement_name(row["kind"], row.pop("display_name"), row.pop("number"), row.pop("tag"),
                                 row.pop("title"))
    row["snippet"] = text if len(text) <= 240 else text[:240] + " …"
    return row


def has_edges(cursor: duckdb.DuckDBPyConnection) -> bool:
    return bool(cursor.execute(
        "SELECT count(*) FROM duckdb_views() WHERE view_name = 'edges' AND NOT internal").fetchone()[0])


def neighbours(cursor: duckdb.DuckDBPyConnection, theorem_id: str) -> dict:
    """{uses, used_by, restatements}: statements of the corpus, each with how the link was found."""
    empty = {"uses": [], "used_by": [], "restatements": []}
    if not has_edges(cursor):
        return empty
    linked = f"""
        SELECT DISTINCT {_BRIEF_COLUMNS}, e.method FROM edges e JOIN theorems t ON t.theorem_id = e.{{other}}
        WHERE e.{{this}} = ? AND e.relation = ? ORDER BY t.theorem_id LIMIT {MAX_NEIGHBOURS}"""
    uses = _rows(cursor, linked.format(this="src_theorem_id", other="dst_theorem_id"), [theorem_id, "uses"])
    used_by = _rows(cursor, linked.format(this="dst_theorem_id", other="src_theorem_id"), [theorem_id, "uses"])
    restated = (_rows(cursor, linked.format(this="src_theorem_id", other="dst_theorem_id"), [theorem_id, "restates"])
                + _rows(cursor, linked.format(this="dst_theorem_id", other="src_theorem_id"), [theorem_id, "restates"]))
    unique = {row["theorem_id"]: row for row in restated if row["theorem_id"] != theorem_id}
    return {"uses": [_brief(r) for r in uses], "used_by": [_brief(r) for r in used_by],
            "restatements": [_brief(r) for r in list(unique.values())[:MAX_NEIGHBOURS]]}


def paper(cursor: duckdb.DuckDBPyConnection, paper_id: str) -> Optional[dict]:
    """The paper with its statements in document order, or None when the corpus has no such paper."""
    found = _rows(cursor, _PAPER_SQL, [paper_id])
    if not found:
        return None
    record = found[0]
    statements = _rows(cursor, f"SELECT {_BRIEF_COLUMNS} FROM theorems t WHERE t.paper_id = ? "
                               f"ORDER BY t.ordinal, t.theorem_id LIMIT {MAX_PAPER_STATEMENTS}", [paper_id])
    record["statements"] = [_brief(s) for s in statements]
    record["edges"] = _rows(cursor, f"""
        SELECT e.src_theorem_id, e.dst_theorem_id, e.relation, e.method FROM edges e
        WHERE e.paper_id = ? ORDER BY e.src_theorem_id, e.dst_theorem_id LIMIT {MAX_PAPER_STATEMENTS}""",
                            [paper_id]) if has_edges(cursor) else []
    return record


def citation(statement: dict, paper_record: Optional[dict]) -> str:
    """A citation a reader pastes into a paper: authors, title, year, statement and where to find it."""
    paper_record = paper_record or {}
    authors = paper_record.get("authors") or []
    parts = [", ".join(authors) if authors else None,
             f"\u201c{paper_record['title']}\u201d" if paper_record.get("title") else statement["paper_id"],
             str(paper_record.get("year") or statement.get("year") or "") or None,
             statement["name"],
             statement.get("url") or paper_record.get("url")]
    return ", ".join(p for p in parts if p) + "."


def statement(cursor: duckdb.DuckDBPyConnection, theorem_id: str) -> Optional[dict]:
    """The statement with its proof, paper, neighbourhood and citation, or None when there is no such id."""
    found = _rows(cursor, _STATEMENT_SQL, [theorem_id])
    if not found:
        return None
    record = found[0]
    record["section_path"] = list(record["section_path"] or [])
    record["name"] = statement_name(record["kind"], record["display_name"], record["number"], record["tag"],
                                    record["title"])
    paper_rows = _rows(cursor, _PAPER_SQL, [record["paper_id"]])
    record["paper"] = ({k: paper_rows[0][k] for k in ("paper_id", "title", "authors", "year", "url", "categories")}
                       if paper_rows else None)
    record.update(neighbours(cursor, theorem_id))
    record["citation"] = citation(record, record["paper"])
    return record
