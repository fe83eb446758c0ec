"""One declaration per table: its pyarrow schema, partition columns and the DuckDB view over it.

Writers, readers and views all derive from a `Table`, so a column is declared in exactly one place.
Partition columns (Hive-style `key=value` directories) are part of the logical schema but are not
stored inside the Parquet files; `file_schema` is what a writer puts in each file.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Collection, Iterable, Mapping, Optional, Sequence

import pyarrow as pa

_DUCKDB_TYPES = {
    pa.string(): "VARCHAR",
    pa.large_string(): "VARCHAR",
    pa.int16(): "SMALLINT",
    pa.int32(): "INTEGER",
    pa.int64(): "BIGINT",
    pa.float32(): "FLOAT",
    pa.float64(): "DOUBLE",
    pa.bool_(): "BOOLEAN",
}


def duckdb_type(arrow_type: pa.DataType) -> str:
    """The DuckDB type name of an Arrow type (used for partition columns and casts)."""
    if arrow_type in _DUCKDB_TYPES:
        return _DUCKDB_TYPES[arrow_type]
    if pa.types.is_fixed_size_list(arrow_type):
        return f"{duckdb_type(arrow_type.value_type)}[{arrow_type.list_size}]"
    if pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type):
        return f"{duckdb_type(arrow_type.value_type)}[]"
    raise TypeError(f"no DuckDB type for {arrow_type}")


@dataclasses.dataclass(frozen=True)
class Table:
    """A table of the output: `name/` under the output directory, partitioned by `partition_by`."""

    name: str
    schema: pa.Schema
    partition_by: tuple[str, ...] = ()
    description: str = ""

    @property
    def columns(self) -> list[str]:
        return list(self.schema.names)

    @property
    def file_schema(self) -> pa.Schema:
        """The schema stored inside each Parquet file: everything but the partition columns."""
        return pa.schema([f for f in self.schema if f.name not in self.partition_by])

    def with_field(self, name: str, arrow_type: pa.DataType) -> "Table":
        """A copy with one column's type replaced (e.g. the embedding's fixed size)."""
        fields = [pa.field(name, arrow_type) if f.name == name else f for f in self.schema]
        return dataclasses.replace(self, schema=pa.schema(fields))

    def to_arrow(self, rows: Iterable[Mapping[str, Any]], *, include_partitions: bool = False) -> pa.Table:
        """Rows (dicts) to an Arrow table of `file_schema` (or the full schema); unknown keys are an error."""
        schema = self.schema if include_partitions else self.file_schema
        rows = list(rows)
        known, names = frozenset(self.schema.names), schema.names      # pyarrow builds these lists per call
        for row in rows:
            if not known.issuperset(row):
                raise KeyError(f"{self.name}: unknown columns {sorted(set(row) - known)}")
        return pa.Table.from_pylist([{k: r.get(k) for k in names} for r in rows], schema=schema)

    def view_sql(self, root: str, files: Optional[Sequence[str]] = None, missing: Collection[str] = ()) -> str:
        """DuckDB DDL of a view over `root/<name>/**/*.parquet`, or over exactly `files` (the
        committed generation), with Hive partitions typed from the schema."""
        return f"CREATE OR REPLACE VIEW {self.name} AS {self.select_sql(root, files, missing)}"

    def select_sql(self, root: str, files: Optional[Sequence[str]] = None, missing: Collection[str] = ()) -> str:
        """The query of `view_sql`: the table's columns as written; the `missing` ones (added to the
        schema after the files were written) read as typed NULLs."""
        select = ", ".join(f"CAST(NULL AS {duckdb_type(f.type)}) AS {f.name}" if f.name in missing
                           else _select_expr(f) for f in self.schema)
        return f"SELECT {select} FROM {self.source_sql(root, files)}"

    def source_sql(self, root: str, files: Optional[Sequence[str]] = None) -> str:
        """The `read_parquet(...)` of the table's files, Hive partitions typed from the schema."""
        if files is None:
            path = "'" + f"{root.rstrip('/')}/{self.name}/**/*.parquet".replace("'", "''") + "'"
        else:
            path = "[" + ", ".join("'" + f.replace("'", "''") + "'" for f in files) + "]"
        if self.partition_by:
            types = ", ".join(
                f"'{c}': '{duckdb_type(self.schema.field(c).type)}'" for c in self.partition_by
            )
            return f"read_parquet({path}, hive_partitioning = true, hive_types = {{{types}}}, union_by_name = true)"
        return f"read_parquet({path}, hive_partitioning = false, union_by_name = true)"

    def empty_view_sql(self) -> str:
        """A typed, empty view for a table that has no files yet (so queries still bind)."""
        select = ", ".join(f"CAST(NULL AS {duckdb_type(f.type)}) AS {f.name}" for f in self.schema)
        return f"CREATE OR REPLACE VIEW {self.name} AS SELECT {select} WHERE false"


def _select_expr(field: pa.Field) -> str:
    # Parquet written through Beam loses fixed-size lists (read back as FLOAT[]): cast back so that
    # array_cosine_similarity works on the view.
    if pa.types.is_fixed_size_list(field.type):
        return f"CAST({field.name} AS {duckdb_type(field.type)}) AS {field.name}"
    return field.name
