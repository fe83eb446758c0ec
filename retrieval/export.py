"""A corpus for analysts: a Hugging Face dataset, a DuckDB file or CSV files.

Everything is read through the catalog's views (`retrieval.catalog`), so an export sees exactly
what `sql` and `search` see. Each format is written next to its destination and moved into place
at the end, so a failed export leaves no half-written output behind.

- `hf`: the statements (each with its paper's title, authors and license) as a `DatasetDict`
  saved with `save_to_disk`, one split per source, and a dataset card (`README.md`).
- `duckdb`: one file holding every table of the corpus as a DuckDB table (copied in, not views
  over the Parquet paths: the file stays valid when the corpus is rebuilt, moved or deleted).
- `csv`: one file per table, list and embedding columns as JSON arrays.
"""
from __future__ import annotations

import datetime
import json
import os
import pathlib
import re
import tempfile
from typing import Callable

import duckdb

from retrieval.catalog import Catalog, open_catalog
from schemas.errors import UsageError
from schemas import PAPERS, THEOREMS

FORMATS = ("hf", "duckdb", "csv")
BATCH_ROWS = 10_000
PAPER_COLUMNS = {"title": "paper_title", "authors": "authors", "license": "license"}   # joined onto statements
FIXED_SIZE = re.compile(r"\[\d+\]$")   # a DuckDB array type such as FLOAT[384]
CARD_PAPER_LICENSES = 200      # the card lists each paper's license up to this many papers


def export(corpus: str, fmt: str, output: str) -> dict:
    """Write `corpus` as `fmt` to `output` (which must not exist yet); returns rows per table."""
    if fmt not in FORMATS:
        raise UsageError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    destination = pathlib.Path(output).expanduser().absolute()
    if destination.exists():
        raise UsageError(f"{output}: already exists; remove it or choose another --output")
    if not destination.parent.is_dir():
        raise UsageError(f"{destination.parent}: no such directory")
    catalog = open_catalog(corpus)
    try:
        with tempfile.TemporaryDirectory(prefix=".export-", dir=destination.parent) as work:
            staged = pathlib.Path(work) / "out"
            counts = WRITERS[fmt](catalog, staged, pathlib.Path(work))
            os.replace(staged, destination)
    except UsageError:
        raise
    except Exception as exc:    # duckdb, datasets, the file system: one line, nothing left behind
        raise UsageError(f"export to {output} failed: {type(exc).__name__}: {str(exc).splitlines()[0]}") from None
    finally:
        catalog.con.close()
    return counts


def sql_string(text: str) -> str:
    """A SQL string literal (ATTACH and COPY take no bound parameters)."""
    return "'" + text.replace("'", "''") + "'"


def table_counts(con: duckdb.DuckDBPyConnection, views: list[str]) -> dict[str, int]:
    return {view: con.execute(f"SELECT count(*) FROM {view}").fetchone()[0] for view in views}


# ------------------------------------------------------------------------------------------ duckdb

def write_duckdb(catalog: Catalog, staged: pathlib.Path, work: pathlib.Path) -> dict:
    """Copy every view of the catalog into a DuckDB file as a table of the same name."""
    con = catalog.con
    con.execute(f"ATTACH {sql_string(str(staged))} AS export_db")
    try:
        for view in catalog.views:
            con.execute(f"CREATE TABLE export_db.{view} AS SELECT * FROM {view}")
        con.execute("CHECKPOINT export_db")
    finally:
        con.execute("DETACH export_db")
    return table_counts(con, catalog.views)


# ------------------------------------------------------------------------------------------ csv

def json_columns(con: duckdb.DuckDBPyConnection, view: str) -> set[str]:
    """Columns whose values are lists, structs or maps: written as JSON, not DuckDB's own notation."""
    relation = con.table(view)
    return {name for name, kind in zip(relation.columns, relation.types)
            if str(kind).endswith("]") or str(kind).startswith(("STRUCT", "MAP"))}


def write_csv(catalog: Catalog, staged: pathlib.Path, work: pathlib.Path) -> dict:
    staged.mkdir()
    con = catalog.con
    for view in catalog.views:
        as_json = json_columns(con, view)
        select = ", ".join(f"to_json({c})::VARCHAR AS {c}" if c in as_json else c for c in con.table(view).columns)
        target = sql_string(str(staged / f"{view}.csv"))
        con.execute(f"COPY (SELECT {select} FROM {view}) TO {target} (HEADER, DELIMITER ',')")
    return table_counts(con, catalog.views)


# ------------------------------------------------------------------------------------------ hf

def split_name(source: str) -> str:
    """A source name as a split name (letters, digits and underscores only)."""
    return re.sub(r"\W+", "_", source).strip("_") or "unknown"


def statements_sql(con: duckdb.DuckDBPyConnection) -> str:
    """The statements with their paper's title, authors and license (those of the papers view that exist).

    Fixed-size arrays (the embeddings) become plain lists: a corpus built without embeddings holds
    nulls there, which `datasets` cannot read back as fixed-size lists."""
    theorems = con.table(THEOREMS.name)
    columns = []
    for name, kind in zip(theorems.columns, theorems.types):
        as_list = FIXED_SIZE.sub("[]", str(kind))
        columns.append(f"CAST(t.{name} AS {as_list}) AS {name}" if as_list != str(kind) else f"t.{name}")
    paper_columns = set(con.table(PAPERS.name).columns)
    columns += [f"p.{column} AS {alias}" for column, alias in PAPER_COLUMNS.items() if column in paper_columns]
    return (f"SELECT {', '.join(columns)} FROM {THEOREMS.name} t "
            f"LEFT JOIN {PAPERS.name} p ON p.paper_id = t.paper_id WHERE t.source = ? ORDER BY t.theorem_id")


def write_hf(catalog: Catalog, staged: pathlib.Path, work: pathlib.Path) -> dict:
    """One split per source, streamed through Parquet files so memory stays bounded by a batch."""
    import datasets
    import pyarrow.parquet as pq

    con = catalog.con
    sources = [row[0] for row in con.execute(f"SELECT DISTINCT source FROM {THEOREMS.name} ORDER BY 1").fetchall()]
    splits, names = {}, {}
    was_enabled = datasets.is_progress_bar_enabled()
    datasets.disable_progress_bars()
    try:
        for source in sources:
            name = split_name(source)
            if name in names.values():
                raise UsageError(f"sources {source!r} and {names[name]!r} give the same split name {name!r}")
            names[source] = name
            reader = con.execute(statements_sql(con), [source]).to_arrow_reader(BATCH_ROWS)
            path = work / f"{name}.parquet"
            with pq.ParquetWriter(path, reader.schema) as writer:
                for batch in reader:
                    writer.write_batch(batch)
            splits[name] = datasets.Dataset.from_parquet(str(path), split=name, cache_dir=str(work / "cache"))
        datasets.DatasetDict(splits).save_to_disk(str(staged))
    finally:
        if was_enabled:
            datasets.enable_progress_bars()
    counts = {name: len(split) for name, split in splits.items()}
    (staged / "README.md").write_text(dataset_card(catalog, names, counts, splits), encoding="utf-8")
    return {**{f"theorems/{name}": n for name, n in counts.items()}, "theorems": sum(counts.values())}


def _counts(con: duckdb.DuckDBPyConnection, sql: str) -> list[tuple]:
    return con.execute(sql).fetchall()


def _table(header: tuple[str, ...], rows: list[tuple]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join("" if v is None else str(v).replace("|", "\\|") for v in row) + " |" for row in rows]
    return "\n".join(lines)


def dataset_card(catalog: Catalog, names: dict[str, str], counts: dict[str, int], splits: dict) -> str:
    """The dataset card: what the dataset holds, how it was built, its schema and each paper's license."""
    con = catalog.con
    manifest = catalog.manifest
    licenses = _counts(con, f"SELECT coalesce(license, '(none recorded)'), count(*) FROM {PAPERS.name} "
                            f"GROUP BY 1 ORDER BY 2 DESC, 1")
    per_paper = _counts(con, f"SELECT paper_id, license FROM {PAPERS.name} WHERE license IS NOT NULL ORDER BY 1")
    features = next(iter(splits.values())).features if splits else {}
    described = {f.name: f for f in THEOREMS.schema}
    schema_rows = [(name, str(feature), "from papers" if name in PAPER_COLUMNS.values() and name not in described
                    else "") for name, feature in features.items()]
    built = {key: manifest[key] for key in ("versions", "options", "describer", "embedding", "inputs")
             if key in manifest}
    sections = [
        "---",
        "pretty_name: thmforge theorem corpus",
        "configs:",
        "- config_name: default",
        "  data_files:",
        *[f"  - split: {name}\n    path: {name}/*.arrow" for name in counts],
        "---",
        "",
        "# thmforge theorem corpus",
        "",
        "Theorem-like statements (theorems, lemmas, definitions, ...) extracted from LaTeX sources by "
        "thmforge, one row per statement, one split per source. Load with "
        "`datasets.load_from_disk(PATH)`.",
        "",
        "## Counts",
        "",
        _table(("split", "source", "statements"), [(names[s], s, counts[names[s]]) for s in names]),
        "",
        _table(("kind", "statements"), _counts(con, f"SELECT kind, count(*) FROM {THEOREMS.name} "
                                                   "GROUP BY 1 ORDER BY 2 DESC, 1")),
        "",
        _table(("year", "statements"), _counts(con, f"SELECT year, count(*) FROM {THEOREMS.name} "
                                                   "GROUP BY 1 ORDER BY 1 NULLS LAST")),
        "",
        "## Licenses",
        "",
        "Each statement carries its paper's license (`license`, from the source's metadata; empty where "
        "the metadata has none). Papers by license:",
        "",
        _table(("license", "papers"), licenses),
        "",
    ]
    if per_paper and len(per_paper) <= CARD_PAPER_LICENSES:
        sections += ["License of each paper whose metadata has one:", "", _table(("paper_id", "license"), per_paper), ""]
    sections += [
        "## Schema",
        "",
        _table(("column", "type", "note"), schema_rows),
        "",
        "## How it was built",
        "",
        f"Exported by `thmforge export --format hf` on {datetime.date.today().isoformat()} from "
        f"`{catalog.root.name}`; inputs, options, versions, describer and embedding from the corpus's "
        "`manifest.json`:",
        "",
        "```json",
        json.dumps(built, indent=2, sort_keys=True, default=str),
        "```",
        "",
    ]
    return "\n".join(sections)


WRITERS: dict[str, Callable[[Catalog, pathlib.Path, pathlib.Path], dict]] = {
    "hf": write_hf, "duckdb": write_duckdb, "csv": write_csv,
}
