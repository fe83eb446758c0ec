"""Cite edges meet papers by DOI: `dst_paper_id` filled from the corpus's `papers.doi` (FnApiRunner)."""
import gzip
import io
import json
import tarfile

import duckdb

from retrieval.catalog import open_catalog
from runners.cli import main
from transforms.edges import doi_keys

PAPER = r"""\documentclass{article}
\newtheorem{theorem}{Theorem}
\begin{document}
\begin{theorem}\label{thm:%(id)s} Every %(id)s statement holds, as in \cite{a, b}. \end{theorem}
\begin{thebibliography}{9}
\bibitem{a} A. Author, Some work, J. Sample 1 (2020), doi:%(a)s.
\bibitem{b} B. Author, Other work, doi:10.5555/nowhere.9.
\end{thebibliography}
\end{document}
"""


def _bundle(path, papers):
    """An arXiv bulk bundle: one gzipped .tex member per paper."""
    with tarfile.open(path, "w") as archive:
        for arxiv_id, cited_doi in papers:
            month = arxiv_id[:4]
            data = gzip.compress((PAPER % {"id": arxiv_id, "a": cited_doi}).encode())
            info = tarfile.TarInfo(f"{month}/{arxiv_id}.gz")
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return str(path)


def _metadata(path, dois):
    path.write_text("".join(json.dumps({
        "id": arxiv_id, "title": f"Paper {arxiv_id}", "authors": "A. Author", "doi": doi, "categories": "math.CO",
        "versions": [{"version": "v1", "created": "Mon, 3 Jan 2022 09:00:00 GMT"}]}) + "\n"
        for arxiv_id, doi in dois.items()))
    return str(path)


def _cites(out):
    return duckdb.sql(f"""
        SELECT paper_id, cite_key, dst_doi, dst_paper_id
        FROM read_parquet('{out}/edges/**/*.parquet', hive_partitioning = true)
        WHERE relation = 'cites' ORDER BY ALL""").fetchall()


def test_dois_of_this_run_and_of_committed_papers_give_the_cited_paper(tmp_path):
    out = tmp_path / "out"
    args = ["build-corpus", "--embed-model", "none", "--no-progress", "--output", str(out)]
    dois = {"2201.00001": "10.5555/First.1", "2201.00002": "10.5555/second.2 10.6666/other",
            "2202.00003": None}
    metadata = _metadata(tmp_path / "metadata.json", dois)
    first = _bundle(tmp_path / "arXiv_src_2201_001.tar",
                    [("2201.00001", "10.5555/SECOND.2"), ("2201.00002", "10.5555/first.1")])
    assert main([*args, "--input", first, "--metadata", metadata]) == 0
    assert _cites(out) == [
        ("arxiv:2201.00001", "a", "10.5555/second.2", "arxiv:2201.00002"),
        ("arxiv:2201.00001", "b", "10.5555/nowhere.9", None),
        ("arxiv:2201.00002", "a", "10.5555/first.1", "arxiv:2201.00001"),
        ("arxiv:2201.00002", "b", "10.5555/nowhere.9", None),
    ]
    later = _bundle(tmp_path / "arXiv_src_2202_001.tar", [("2202.00003", "10.5555/first.1")])
    assert main([*args, "--input", later, "--metadata", metadata]) == 0
    assert ("arxiv:2202.00003", "a", "10.5555/first.1", "arxiv:2201.00001") in _cites(out)


def test_doi_keys_are_lowercased_and_split():
    assert doi_keys("10.1000/ABC.1 10.2000/x-y.") == ["10.1000/abc.1", "10.2000/x-y"]
    assert doi_keys(None) == [] and doi_keys("not a doi") == []


def test_a_cited_paper_arriving_in_a_later_run_is_resolved_by_the_edges_view(tmp_path):
    """The citing paper is built first (its cite edge's DOI names no paper yet and stays null in the
    Parquet); the cited paper arrives in a later run: `thmforge sql` and the DuckDB export resolve it."""
    out = tmp_path / "out"
    args = ["build-corpus", "--embed-model", "none", "--no-progress", "--output", str(out)]
    metadata = _metadata(tmp_path / "metadata.json", {"2202.00003": None, "2203.00004": "10.5555/Later.4"})
    assert main([*args, "--input", _bundle(tmp_path / "arXiv_src_2202_001.tar", [("2202.00003", "10.5555/LATER.4.")]),
                 "--metadata", metadata]) == 0
    assert main([*args, "--input", _bundle(tmp_path / "arXiv_src_2203_001.tar", [("2203.00004", "10.5555/none.0")]),
                 "--metadata", metadata]) == 0
    assert ("arxiv:2202.00003", "a", "10.5555/later.4", None) in _cites(out)       # as written: unresolved

    query = "SELECT paper_id, cite_key, dst_paper_id FROM edges WHERE relation = 'cites' ORDER BY ALL"
    wanted = [("arxiv:2202.00003", "a", "arxiv:2203.00004"), ("arxiv:2202.00003", "b", None),
              ("arxiv:2203.00004", "a", None), ("arxiv:2203.00004", "b", None)]
    catalog = open_catalog(str(out))
    assert catalog.con.execute(query).fetchall() == wanted
    assert catalog.con.execute("SELECT count(*) FROM edges").fetchone()[0] == len(_all_edges(out))
    assert main(["export", str(out), "--format", "duckdb", "--output", str(tmp_path / "corpus.duckdb")]) == 0
    with duckdb.connect(str(tmp_path / "corpus.duckdb"), read_only=True) as exported:
        assert exported.execute(query).fetchall() == wanted


def _all_edges(out):
    return duckdb.sql(f"SELECT * FROM read_parquet('{out}/edges/**/*.parquet', hive_partitioning = true)").fetchall()
