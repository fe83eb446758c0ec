"""`sql` runs queries only, and the connection cannot reach files outside the output directory."""
import pytest

from retrieval.catalog import lock_down, open_catalog
from retrieval.readonly import query_statements, run_query
from schemas.errors import UsageError


@pytest.fixture()
def con(corpus_dir):
    catalog = open_catalog(str(corpus_dir))
    lock_down(catalog.con, catalog.root)
    return catalog.con


@pytest.mark.parametrize("sql", [
    "SELECT count(*) FROM theorems",
    "WITH t AS (SELECT kind FROM theorems) SELECT kind FROM t",
    "FROM papers",
    "DESCRIBE theorems",
    "SHOW TABLES",
    "SUMMARIZE papers",
    "EXPLAIN SELECT * FROM theorems",
    "PRAGMA table_info('theorems')",
    "SELECT 1; SELECT 2;",
])
def test_queries_are_allowed(con, sql):
    for relation in run_query(con, sql):
        if relation is not None:
            relation.fetchall()


@pytest.mark.parametrize("sql", [
    "CREATE TABLE t AS SELECT 1",
    "DROP VIEW theorems",
    "CREATE OR REPLACE VIEW theorems AS SELECT 1",
    "INSERT INTO t VALUES (1)",
    "COPY theorems TO 'x.csv'",
    "ATTACH 'other.db'",
    "INSTALL fts",
    "LOAD fts",
    "SET enable_external_access = true",
    "EXPORT DATABASE 'dump'",
    "PRAGMA enable_profiling",
    "EXPLAIN ANALYZE CREATE TABLE t AS SELECT 1",
    "EXPLAIN COPY (SELECT 1) TO 'x.csv'",
    "SELECT 1; DROP VIEW papers",
    "CALL pragma_version()",
])
def test_everything_else_is_refused_before_running(con, sql):
    with pytest.raises(UsageError, match="read-only"):
        query_statements(con, sql)
    assert con.execute("SELECT count(*) FROM theorems").fetchall()[0][0] == 15


def test_files_outside_the_directory_cannot_be_read(con):
    with pytest.raises(UsageError, match="Permission"):
        [r.fetchall() for r in run_query(con, "SELECT * FROM read_csv('/etc/passwd')")]
    with pytest.raises(UsageError, match="Permission"):
        [r.fetchall() for r in run_query(con, "SELECT * FROM read_text('/etc/hostname')")]


def test_duckdbs_default_temp_directory_cannot_be_read(corpus_dir, tmp_path, monkeypatch):
    """A locked DuckDB may read its temp directory, by default `<cwd>/.tmp/`: it must not be that one."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".tmp").mkdir()
    (tmp_path / ".tmp" / "secret.csv").write_text("secret,1\n")
    catalog = open_catalog(str(corpus_dir))
    lock_down(catalog.con, catalog.root)
    for path in (".tmp/secret.csv", str(tmp_path / ".tmp" / "secret.csv")):
        with pytest.raises(UsageError, match="Permission"):
            [r.fetchall() for r in run_query(catalog.con, f"SELECT * FROM read_csv('{path}')")]


def test_configuration_is_locked(con):
    with pytest.raises(Exception, match="locked"):
        con.execute("SET enable_external_access = true")


def test_syntax_errors_are_usage_errors(con):
    with pytest.raises(UsageError, match="syntax"):
        query_statements(con, "SELEC 1")


def test_views_cover_corpus_tables_only_when_others_are_absent(corpus_dir):
    catalog = open_catalog(str(corpus_dir))
    assert catalog.views == ["papers", "theorems", "failures", "edges"]
    assert catalog.con.execute("SELECT count(*) FROM failures").fetchall()[0][0] == 0
    dims = catalog.con.execute("SELECT array_length(embedding) FROM theorems LIMIT 1").fetchall()[0][0]
    assert dims == 384
