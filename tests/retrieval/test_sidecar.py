"""The search table's sidecar files: the hits' display rows and the filter values' doc sets, read by doc id."""
import dataclasses
import shutil

import duckdb
import numpy as np
import pytest

from query_corpus import STATEMENTS, write_corpus
from retrieval import sidecar, vector_index
from retrieval.catalog import open_catalog
from retrieval.filters import make_filters
from retrieval.search import SNIPPET_CHARS, Searcher, snippet
from runners.cli import main

# statements whose snippets are cut, or whose spaces are not ASCII, or that are mostly spaces
ODD_TEXTS = [
    "word " * 200,
    ("Let\u00a0$X$ be\u2003a\tspace,\n\n  and " * 40).strip(),
    " " * 600 + "A short statement after many spaces.",
    "x" * 300 + " " + "y" * 300,
    "Ünïcödé\u3000sép\u2028arated\x1c" + "é " * 300,
    "\u0001 control \"quoted\" \\backslash\\ " * 30,
]


def test_a_prefix_of_the_text_gives_the_same_snippet():
    con = duckdb.connect()
    texts = ODD_TEXTS + ["short", "", "a" * (2 * SNIPPET_CHARS + 40), " \u2000" * 400 + "tail " * 100]
    for text in texts:
        kept = con.execute(f"SELECT {sidecar.snippet_source('t', SNIPPET_CHARS)} FROM (SELECT ?::VARCHAR AS t)",
                           [text]).fetchone()[0]
        assert text.startswith(kept) and snippet(kept) == snippet(text)
        assert len(kept) <= 2 * SNIPPET_CHARS + 32 or kept == text


def test_the_space_class_holds_pythons_whitespace():
    """The RE2 class the snippet's prefix counts spaces with: every character `str.split()` splits on."""
    inside = sidecar.space_class()[1:-1].split("\\x")[1:]
    assert [chr(int(code.strip("{}"), 16)) for code in inside] == [chr(c) for c in range(0x110000) if chr(c).isspace()]


@pytest.fixture(scope="module")
def odd_corpus(tmp_path_factory, encoder):
    statements = STATEMENTS + [(i % 3, "remark", f"9.{i}", f"rem:{i}", text) for i, text in enumerate(ODD_TEXTS)]
    root = write_corpus(tmp_path_factory.mktemp("odd"), encoder, statements=statements)
    assert main(["index", str(root)]) == 0
    return root


def test_hits_from_the_store_equal_those_from_the_table(odd_corpus):
    searcher = Searcher(open_catalog(str(odd_corpus)))
    assert searcher.indexed and searcher.hit_store is not None
    ranked = [(doc, 1.0 / (doc + 1)) for doc in range(searcher.size)]
    stored = searcher.hits(ranked)
    searcher.hit_store = None           # what the search table gives
    from_table = searcher.hits(ranked)
    assert [dataclasses.asdict(h) for h in stored] == [dataclasses.asdict(h) for h in from_table]
    assert len(stored) == len(STATEMENTS) + len(ODD_TEXTS)
    assert any(h.snippet.endswith(" …") for h in stored) and any(h.authors for h in stored)


def test_a_store_from_another_build_is_not_read(odd_corpus, tmp_path):
    """The store and the table are replaced one after the other: a store whose token is not the
    table's (an interrupted rebuild) is ignored, and hits come from the table."""
    root = tmp_path / "copy"
    shutil.copytree(odd_corpus, root)
    index = root / "index"
    con = duckdb.connect(str(index / "search.duckdb"))
    con.execute(f"UPDATE {sidecar.TOKEN_TABLE} SET token = '00' || token[3:]")
    con.close()
    searcher = Searcher(open_catalog(str(root)))
    assert searcher.indexed and searcher.hit_store is None and searcher.filter_index is None
    assert [h.theorem_id for h in searcher.search("compact", 3)] == \
        [h.theorem_id for h in Searcher(open_catalog(str(odd_corpus))).search("compact", 3)]
    (index / sidecar.HITS_FILE).unlink()
    assert Searcher(open_catalog(str(odd_corpus))).hit_store is not None
    assert Searcher(open_catalog(str(root))).hit_store is None


FILTERS = [dict(kinds=["lemma"]), dict(kinds=["theorem", "remark"], year_from=2019), dict(year_to=2019),
           dict(year_from=2016, year_to=2020), dict(year_from=2030), dict(sources=["latex-project"]),
           dict(categories=["math"]), dict(categories=["math.GN", "math.CA"], kinds=["theorem"]),
           dict(categories=["cs"]), dict(kinds=["lemma"], sources=["arxiv"], categories=["math.CA"], year_to=2021)]


def test_filters_from_the_doc_sets_equal_the_table_scan(odd_corpus):
    """Kind, source, category and year filters are answered from `filters.bin` (no scan of the
    table), with the same docs as the scan; filters on authors or papers still scan."""
    searcher = Searcher(open_catalog(str(odd_corpus)))
    scanning = Searcher(open_catalog(str(odd_corpus)))
    scanning.filter_index = None
    assert searcher.filter_index is not None and searcher.filter_index.doc_count == searcher.size
    index = searcher._vector_index()
    for options in FILTERS:
        filters = make_filters(**options)
        allowed, want = searcher._allowed_docs(filters), scanning._allowed_docs(filters)
        assert allowed.dtype == want.dtype and np.array_equal(allowed, want), options
        bitmap = searcher.filter_cache.get(filters, "bitmap", lambda: pytest.fail("no bitmap kept"))
        assert np.array_equal(bitmap, index.selector_bitmap(want))
        assert vector_index.bitmap_count(bitmap) == len(want)
    assert sum(len(searcher._allowed_docs(make_filters(**o))) for o in FILTERS[:2]) > 0
    authors = make_filters(authors=["noether"], kinds=["theorem"])
    assert not searcher.filter_index.answers(authors) and searcher._filter_bitmap(authors) is None
    assert np.array_equal(searcher._allowed_docs(authors), scanning._allowed_docs(authors))


def test_a_filter_probes_with_the_bitmap_alone(odd_corpus):
    """Above the exact-scan threshold a filter goes to faiss as its bitmap and count, its ids never
    listed; the answer is the one the listed ids give."""
    searcher = Searcher(open_catalog(str(odd_corpus)))
    index = searcher._vector_index()
    index.exact_filter_rows = 0
    query = searcher.embed_query("compact subsets")
    for options in FILTERS:
        filters = make_filters(**options)
        ranked = searcher.vector_ranking("", 5, filters, query)
        kept = searcher.filter_cache._entries[filters]
        assert int(kept["count"]) == vector_index.bitmap_count(kept["bitmap"])
        assert ("docs" in kept) == (int(kept["count"]) == 0)     # no rows: nothing to probe
        allowed = vector_index.bitmap_docs(kept["bitmap"])
        assert ranked == index.search(np.asarray(query, dtype=np.float32), 5, allowed)


def test_bitmap_docs_inverts_the_selector_bitmap():
    rng = np.random.default_rng(3)
    for rows in (1, 7, 8, 9, 1000, 4097):
        for share in (0.0, 0.01, 0.5, 1.0):
            docs = np.flatnonzero(rng.random(rows) < share)
            mask = np.zeros(rows, dtype=bool)
            mask[docs] = True
            bitmap = np.packbits(mask, bitorder="little")
            assert np.array_equal(vector_index.bitmap_docs(bitmap), docs)
            assert vector_index.bitmap_count(bitmap) == len(docs)
