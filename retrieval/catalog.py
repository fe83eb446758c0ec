"""A DuckDB connection over one output directory: every table of `schemas/` as a view.

Views are generated from the schema modules (`Table.view_sql`), so a column exists here exactly
when a writer declares it. A table without files gets a typed empty view, so queries still bind.
"""
from __future__ import annotations

import atexit
import dataclasses
import json
import pathlib
import shutil
import tempfile
from typing import Collection, Optional

import duckdb

from schemas import ALL_TABLES, CORPUS_TABLES, EDGES, THEOREMS, Table, theorems_table
from schemas.errors import UsageError


@dataclasses.dataclass(frozen=True)
class EmbeddingInfo:
    """The corpus's embedding model as recorded in `manifest.json` under "embedding"."""

    model: str
    dim: int
    query_prompt: str = ""
    document_prompt: str = ""
    normalize: bool = True


def read_manifest(root: pathlib.Path) -> dict:
    path = root / "manifest.json"
    if not path.is_file():
        return {}
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UsageError(f"{path}: unreadable manifest ({exc})") from None


def embedding_info(manifest: dict) -> Optional[EmbeddingInfo]:
    """The manifest's embedding record, or None when the corpus was built without embeddings."""
    record = manifest.get("embedding")
    if not record or not record.get("model"):
        return None
    try:
        return EmbeddingInfo(
            model=str(record["model"]), dim=int(record["dim"]),
            query_prompt=str(record.get("query_prompt") or ""),
            document_prompt=str(record.get("document_prompt") or ""),
            normalize=bool(record.get("normalize", True)),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise UsageError(f"manifest.json: malformed 'embedding' record ({exc})") from None


def committed_files(root: pathlib.Path, manifest: dict, table: Table) -> Optional[list[str]]:
    """The files of `table` that the manifest names (the committed generation), or None when the
    manifest does not govern the table (outputs of other jobs, older corpora): then the folder is read."""
    listed = manifest.get("files")
    if not isinstance(listed, dict) or table.name not in listed:
        return None
    return [str(root / relative) for relative in listed[table.name]]


def _has_files(root: pathlib.Path, table: Table) -> bool:
    folder = root / table.name
    return folder.is_dir() and next(folder.rglob("*.parquet"), None) is not None


def output_root(path: str) -> pathlib.Path:
    """The output directory given on the command line, checked to look like one."""
    root = pathlib.Path(path).expanduser().resolve()
    if not root.is_dir():
        raise UsageError(f"{path}: no such directory")
    if not any((root / t.name).is_dir() for t in ALL_TABLES) and not (root / "manifest.json").is_file():
        raise UsageError(f"{path}: not a thmforge output directory (no papers/, theorems/, instances/ ... and no manifest.json)")
    return root


_DOI = r"10\.\d{4,9}/[^\s,;]+"      # as `transforms.edges.doi_keys` finds them: lowercased, no trailing dot


def edges_view_sql(stored: str) -> str:
    """The `edges` view over the query of the stored rows: a cite edge whose DOI names no corpus
    paper when it was written gets `dst_paper_id` from a paper carrying that DOI now (one that
    arrived in a later run), the first id when several do, as the corpus job joins them."""
    return f"""CREATE OR REPLACE VIEW {EDGES.name} AS
        WITH stored AS ({stored}),
        paper_dois AS (
            SELECT doi_key, min(paper_id) AS paper_id FROM (
                SELECT paper_id, rtrim(lower(unnest(regexp_extract_all(doi, '{_DOI}'))), '.') AS doi_key FROM papers)
            GROUP BY doi_key)
        SELECT stored.* REPLACE (coalesce(stored.dst_paper_id, paper_dois.paper_id) AS dst_paper_id)
        FROM stored LEFT JOIN paper_dois
          ON stored.relation = 'cites' AND stored.dst_paper_id IS NULL
         AND rtrim(lower(regexp_extract(stored.dst_doi, '{_DOI}')), '.') = paper_dois.doi_key"""


def _view_sql(table: Table, root: pathlib.Path, listed: Optional[list[str]], missing: Collection[str] = ()) -> str:
    if table.name == EDGES.name:
        return edges_view_sql(table.select_sql(str(root), listed, missing))
    return table.view_sql(str(root), listed, missing)


def _create_view(con: duckdb.DuckDBPyConnection, table: Table, root: pathlib.Path, listed: Optional[list[str]]) -> None:
    """The table's view; a column the schema gained after these files were written reads as NULL, so a
    corpus built by an older thmforge stays readable."""
    try:
        con.execute(_view_sql(table, root, listed))
    except duckdb.BinderException:
        stored = {row[0] for row in con.execute(f"DESCRIBE SELECT * FROM {table.source_sql(str(root), listed)}").fetchall()}
        missing = [column for column in table.columns if column not in stored]
        if not missing:
            raise
        con.execute(_view_sql(table, root, listed, missing))


def create_views(con: duckdb.DuckDBPyConnection, root: pathlib.Path, dim: int, manifest: dict) -> list[str]:
    """Create one view per table; corpus tables always exist (empty when absent), others only with files.

    A table the manifest governs is read from exactly the files it names, so a reader never sees
    files of a generation that is being committed or was dropped. `edges` resolves cited DOIs
    against the papers of now (see `edges_view_sql`)."""
    created = []
    for table in ALL_TABLES:
        if table.name == THEOREMS.name:
            table = theorems_table(dim)
        listed = committed_files(root, manifest, table)
        if listed:
            _create_view(con, table, root, listed)
        elif listed is None and _has_files(root, table):
            _create_view(con, table, root, None)
        elif table in CORPUS_TABLES or table.name == THEOREMS.name:
            con.execute(table.empty_view_sql())
        else:
            continue
        created.append(table.name)
    return created


@dataclasses.dataclass
class Catalog:
    """An open output directory: its connection, manifest and embedding record."""

    root: pathlib.Path
    con: duckdb.DuckDBPyConnection
    manifest: dict
    embedding: Optional[EmbeddingInfo]
    views: Optional[list[str]]      # None until `ensure_views`

    def ensure_views(self) -> list[str]:
        """The views over the tables, created now if they were left out when opening."""
        if self.views is None:
            dim = self.embedding.dim if self.embedding else theorems_table().schema.field("embedding").type.list_size
            try:
                self.views = create_views(self.con, self.root, dim, self.manifest)
            except duckdb.Error as exc:
                raise UsageError(f"{self.root}: cannot read tables ({exc})") from None
        return self.views


def open_catalog(path: str, *, views: bool = True) -> Catalog:
    """An in-memory DuckDB with views over `path`'s tables (the theorems view typed by the corpus's
    dim). `views=False` leaves them to `Catalog.ensure_views`: binding a view reads the footer of
    every file of its table (`union_by_name`), 0.13 s of CPU for a 1M-row corpus in 680 files, and
    a search answered from the index reads none of them."""
    root = output_root(path)
    manifest = read_manifest(root)
    info = embedding_info(manifest)
    catalog = Catalog(root=root, con=duckdb.connect(":memory:"), manifest=manifest, embedding=info, views=None)
    if views:
        try:
            catalog.ensure_views()
        except UsageError:
            catalog.con.close()
            raise
    return catalog


def spill_directory() -> str:
    """A new empty directory of this process's own for DuckDB to spill to, removed at exit."""
    spill = tempfile.mkdtemp(prefix="thmforge-sql-")
    atexit.register(shutil.rmtree, spill, ignore_errors=True)
    return spill


def lock_down(con: duckdb.DuckDBPyConnection, root: pathlib.Path) -> None:
    """No file access beyond the output directory, no extensions, no way to turn this back on.

    DuckDB also lets a locked connection read its temp directory, by default `<cwd>/.tmp/`; it gets
    a private empty one instead (`spill_directory`), so large sorts can still spill to disk."""
    con.execute("SET temp_directory = ?", [spill_directory()])
    allowed = str(root).rstrip("/") + "/"
    con.execute("SET allowed_directories = ?", [[allowed]])
    con.execute("SET enable_external_access = false")
    con.execute("SET autoinstall_known_extensions = false")
    con.execute("SET autoload_known_extensions = false")
    con.execute("SET lock_configuration = true")
