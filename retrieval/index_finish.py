"""The index job's last stages, after the Beam job: the shards' inverted lists merged into one
memory-mapped index, and the search table `DIR/index/search.duckdb` (metadata and lexical text of
every planned statement with its doc id, an index on doc, the persisted BM25 index) with its
sidecar files (`retrieval.sidecar`: the hits' display rows, the filter values' doc sets). No Beam here:
`index_job` runs each in a fresh process, `python -m retrieval.index_finish` with the request as
JSON on stdin: {"merge": {"directory", "bases", "name"}} prints {"merge_s"}, {"root", "dim",
"shards", optional "threads"} prints {"rows"}; for a small corpus it calls `answer` in its own process.
"""
from __future__ import annotations

import json
import pathlib
import sys
import time
from typing import Optional

import duckdb

from retrieval import lexical, sidecar, vector_index
from retrieval.catalog import create_views, read_manifest
from retrieval.search import materialize, write_sidecars
from retrieval.vector_index import Shard
from schemas import THEOREMS, theorems_table
from schemas.table import duckdb_type

# DuckDB's buffer pool while writing the search table (its default, 80% of RAM, let the sorted
# join grow with the corpus: 850 MB at 1M rows); past it the sort spills to the database's temp dir.
# The stage's peak is this pool plus what lies outside it (at 10M rows about 600 MB after binding
# the 6,800 files): at 10M its peak was 1,739 MiB with 1 GB, 1,265 with 512 MB (the sorted join)
SEARCH_DB_MEMORY = "512MB"


def _theorems_with_doc_ids(con: duckdb.DuckDBPyConnection, root: pathlib.Path, shards: list[Shard], dim: int) -> None:
    """View `located_theorems`: the theorems of the planned files, `doc` = shard base + row in file."""
    table = theorems_table(dim)
    types = ", ".join(f"'{c}': '{duckdb_type(table.schema.field(c).type)}'" for c in THEOREMS.partition_by)
    files = ", ".join("'" + str(root / s.file).replace("'", "''") + "'" for s in shards)
    # in SQL: an Arrow table made from Python lists, or lists bound as parameters, import pandas (0.3-0.4 s of CPU)
    con.execute(f"""CREATE OR REPLACE TEMP TABLE shard_bases AS
        SELECT unnest([{files}]) AS filename, unnest([{", ".join(str(int(s.base)) for s in shards)}]::BIGINT[]) AS base""")
    con.execute(f"""CREATE OR REPLACE TEMP VIEW located_theorems AS
        SELECT t.*, (b.base + t.file_row_number)::BIGINT AS doc
        FROM read_parquet([{files}], hive_partitioning = true, hive_types = {{{types}}}, union_by_name = true,
                          filename = true, file_row_number = true) t JOIN shard_bases b USING (filename)""")


def build_search_db(root: pathlib.Path, shards: list[Shard], dim: int, threads: Optional[int] = None) -> int:
    """Write `DIR/index/search.duckdb`: the search table with the planned doc ids, an index on doc
    and its BM25 index, and its sidecar files, built into new files that then replace the old ones
    (the sidecars first: a sidecar without its table is never read; with DuckDB's `threads`, default
    one a core). Its row count."""
    target = root / vector_index.INDEX_DIR / vector_index.SEARCH_DB
    temporary = target.with_name(target.name + ".tmp")
    temporary.unlink(missing_ok=True)
    con = duckdb.connect(str(temporary), config={"memory_limit": SEARCH_DB_MEMORY,
                                                 **({"threads": threads} if threads else {})})
    try:
        create_views(con, root, dim, read_manifest(root))
        if shards:
            _theorems_with_doc_ids(con, root, shards, dim)
            rows = materialize(con, theorems="located_theorems", doc="t.doc", persistent=True)
        else:
            rows = materialize(con, persistent=True)
        # an ART on doc: a query's hits are read by doc id, ten lookups instead of a table scan
        con.execute("CREATE UNIQUE INDEX search_corpus_doc ON search_corpus (doc)")
        lexical.build_index(con)
        doc_count = max(s.base + s.rows for s in shards) if shards else rows
        write_sidecars(con, target.parent, doc_count, suffix=".tmp")
        con.execute("CHECKPOINT")
    finally:
        con.close()
    for name in (sidecar.HITS_FILE, sidecar.FILTERS_FILE):
        (target.parent / (name + ".tmp")).replace(target.parent / name)
    temporary.replace(target)
    return rows


def answer(request: dict) -> dict:
    """Run the stage `request` asks for: the merge's {"merge_s"} or the search table's {"rows"}."""
    if "merge" in request:
        started, merge = time.monotonic(), request["merge"]
        vector_index.merge_shards(pathlib.Path(merge["directory"]), merge["bases"], merge["name"])
        return {"merge_s": round(time.monotonic() - started, 3)}
    return {"rows": build_search_db(pathlib.Path(request["root"]), [Shard(**s) for s in request["shards"]],
                                    request["dim"], request.get("threads"))}


def main() -> None:
    print(json.dumps(answer(json.load(sys.stdin))))


if __name__ == "__main__":
    main()
