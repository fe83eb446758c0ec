import duckdb
import pyarrow.parquet as pq

from schemas import ALL_TABLES, THEOREMS, theorems_table


def test_every_table_has_a_typed_empty_view():
    con = duckdb.connect()
    for table in ALL_TABLES:
        con.execute(table.empty_view_sql())
        cols = [r[0] for r in con.execute(f"DESCRIBE {table.name}").fetchall()]
        assert cols == table.columns


def test_view_reads_hive_partitions_and_restores_fixed_size_embeddings(tmp_path):
    table = theorems_table(3)
    row = {c: None for c in table.columns}
    row.update(theorem_id="t1", paper_id="p1", source="arxiv", year=2021, kind="lemma",
               embedding=[1.0, 0.0, 0.0], section_path=["Intro"])
    part = tmp_path / "theorems" / "source=arxiv" / "year=2021"
    part.mkdir(parents=True)
    arrow = table.to_arrow([row])
    assert "source" not in arrow.column_names and "year" not in arrow.column_names
    pq.write_table(arrow, part / "part-0.parquet")
    con = duckdb.connect()
    con.execute(table.view_sql(str(tmp_path)))
    got = con.execute(
        "SELECT source, year, kind, array_cosine_similarity(embedding, [1.0, 0.0, 0.0]::FLOAT[3]) FROM theorems"
    ).fetchall()
    assert got == [("arxiv", 2021, "lemma", 1.0)]


def test_unknown_columns_are_rejected():
    import pytest
    with pytest.raises(KeyError):
        THEOREMS.to_arrow([{"theorem_id": "x", "bogus": 1}])
