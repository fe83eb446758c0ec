"""Exact search over split unit vectors (`retrieval.vectors`) against NumPy, and the extension loader."""
import duckdb
import numpy as np
import pytest

from retrieval import extensions, vectors
from schemas.errors import UsageError


def test_parts_cover_the_dimensions():
    assert vectors.part_widths(384) == (32,) * 12
    assert vectors.part_widths(70) == (32, 32, 6)


def test_normalized_rows_are_unit_and_zero_rows_stay_zero():
    out = vectors.normalized(np.array([[3.0, 4.0], [0.0, 0.0]]))
    assert out.dtype == np.float32
    assert out.tolist() == [[pytest.approx(0.6), pytest.approx(0.8)], [0.0, 0.0]]


@pytest.mark.parametrize("dim,batch_rows", [(384, 256), (70, 1000)])
def test_top_k_matches_numpy_cosine(dim, batch_rows):
    rng = np.random.default_rng(7)
    matrix = rng.standard_normal((1500, dim)).astype(np.float32) * rng.uniform(0.1, 5, (1500, 1)).astype(np.float32)
    docs = np.arange(1500) * 3 + 1                    # doc ids need not be positions
    con = duckdb.connect()
    widths = vectors.part_widths(dim)
    table = vectors.VectorTable("v", widths, len(docs), vectors.arrow_parts(docs, vectors.normalized(matrix), widths,
                                                                            batch_rows=batch_rows))
    con.register("v", table.table)
    assert table.table.to_batches()[0].num_rows == min(batch_rows, 1500)
    for _ in range(5):
        q = rng.standard_normal(dim).astype(np.float32) * 7      # the query need not be normalized
        cosine = (matrix @ q) / (np.linalg.norm(matrix, axis=1) * np.linalg.norm(q))
        order = np.argsort(-cosine, kind="stable")[:10]
        rows = con.execute(table.topk_sql(10), table.query_params(q)).fetchall()
        assert [d for d, _ in rows] == docs[order].tolist()
        assert [s for _, s in rows] == pytest.approx(cosine[order].tolist(), abs=1e-5)
    restricted = con.execute(table.topk_sql(3, "v.doc % 2 = 0"), table.query_params(q)).fetchall()
    assert len(restricted) == 3 and all(d % 2 == 0 for d, _ in restricted)


def test_query_of_the_wrong_dimension_is_refused():
    table = vectors.register(duckdb.connect(), "v", np.arange(2), np.ones((2, 8), dtype=np.float32))
    with pytest.raises(ValueError, match="9 dimensions"):
        table.query_params([1.0] * 9)


def test_missing_extension_is_a_usage_error():
    with pytest.raises(UsageError, match="pip install duckdb-extension-nosuch"):
        extensions.load(duckdb.connect(), "nosuch")
    con = duckdb.connect()
    extensions.load(con, "fts")
    extensions.load(con, "vss")
    loaded = {r[0] for r in con.execute("SELECT extension_name FROM duckdb_extensions() WHERE loaded").fetchall()}
    assert {"fts", "vss"} <= loaded
