"""DuckDB's `fts` and `vss` extensions, loaded from their PyPI wheels.

`INSTALL fts` would download from DuckDB's extension server, which batch workers and CI cannot
reach; the `duckdb-extension-<name>` packages (pinned with duckdb in pyproject.toml) carry the
same binaries, so loading is a file read and works offline.
"""
from __future__ import annotations

import functools
import importlib.resources

import duckdb

from schemas.errors import UsageError


@functools.lru_cache(maxsize=None)
def extension_path(name: str) -> str:
    """The packaged binary of extension `name` built for the running DuckDB."""
    package = f"duckdb_extension_{name}"
    try:
        root = importlib.resources.files(package)
    except ModuleNotFoundError:
        raise UsageError(f"DuckDB extension {name!r} is not installed: pip install duckdb-extension-{name}=="
                         f"{duckdb.__version__}") from None
    version = f"v{duckdb.__version__}"
    for path in root.rglob(f"{name}.duckdb_extension"):
        if path.parent.name == version:
            return str(path)
    raise UsageError(f"{package} has no build for DuckDB {duckdb.__version__}: install "
                     f"duckdb-extension-{name}=={duckdb.__version__}")


def load(con: duckdb.DuckDBPyConnection, name: str) -> None:
    try:
        con.execute(f"LOAD '{extension_path(name)}'")
    except duckdb.Error as exc:
        raise UsageError(f"cannot load DuckDB extension {name!r}: {exc}") from None
