"""`thmforge export`: a Hugging Face dataset, a DuckDB file a fresh process opens, CSV with JSON lists."""
import csv
import json
import pathlib
import re
import shutil
import subprocess
import sys

import datasets
import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from runners.cli import main

README = pathlib.Path(__file__).resolve().parents[2] / "README.md"


def corpus_counts(corpus_dir):
    con = duckdb.connect()
    theorems = con.execute(f"SELECT source, count(*) FROM read_parquet('{corpus_dir}/theorems/**/*.parquet', "
                           "hive_partitioning = true) GROUP BY 1").fetchall()
    papers = con.execute(f"SELECT count(*) FROM read_parquet('{corpus_dir}/papers/**/*.parquet')").fetchone()[0]
    return dict(theorems), papers


def readme_export_queries():
    """The SQL block of the README's export paragraph: an ATTACH of the exported file, then queries."""
    text = README.read_text(encoding="utf-8")
    block = re.search(r"```sql\n(ATTACH 'out/corpus\.duckdb'.*?)```", text, re.S).group(1)
    return [s.strip() for s in block.split(";") if s.strip()]


def without_embeddings(corpus_dir, tmp_path, source):
    """A copy of the corpus whose `source` statements have null embeddings (built with --embed-model none)."""
    copy = tmp_path / "corpus"
    shutil.copytree(corpus_dir, copy)
    for path in (copy / "theorems" / f"source={source}").rglob("*.parquet"):
        table = pq.read_table(path)
        for name in ("embedding", "statement_embedding"):
            column = table.schema.get_field_index(name)
            table = table.set_column(column, table.schema.field(name), pa.nulls(len(table), table.schema.field(name).type))
        pq.write_table(table, path)
    return copy


def test_hf_export_loads_with_every_statement_split_by_source(corpus_dir, tmp_path, capsys):
    out = tmp_path / "hf"
    corpus_dir = without_embeddings(corpus_dir, tmp_path, "latex-project")
    assert main(["export", str(corpus_dir), "--format", "hf", "--output", str(out)]) == 0
    assert "exported 15 theorems" in capsys.readouterr().out
    loaded = datasets.load_from_disk(str(out))
    per_source, _ = corpus_counts(corpus_dir)
    assert {name: len(split) for name, split in loaded.items()} == {"arxiv": per_source["arxiv"],
                                                                    "latex_project": per_source["latex-project"]}
    row = loaded["arxiv"][0]
    assert row["paper_title"] and row["authors"] and len(row["embedding"]) == 384
    assert loaded["latex_project"][0]["embedding"] is None
    card = (out / "README.md").read_text()
    assert "| latex_project | latex-project | 5 |" in card and "| theorem | 7 |" in card
    assert "| arxiv:2101.00001 | http://creativecommons.org/licenses/by/4.0/ |" in card
    assert "| license | Value('string') | from papers |" in card and "## How it was built" in card


def test_duckdb_export_answers_the_readme_queries_in_a_fresh_process(corpus_dir, tmp_path):
    out = tmp_path / "out" / "corpus.duckdb"
    out.parent.mkdir()
    assert main(["export", str(corpus_dir), "--format", "duckdb", "--output", str(out)]) == 0
    queries = readme_export_queries()
    script = ("import duckdb, json, sys\n"
              "con = duckdb.connect()\n"
              "results = [con.execute(q).fetchall() for q in json.loads(sys.argv[1])]\n"
              "print(json.dumps(results, default=str))\n")
    answer = subprocess.run([sys.executable, "-c", script, json.dumps(queries)], cwd=tmp_path,
                            capture_output=True, text=True, check=True)
    results = json.loads(answer.stdout)
    assert dict(results[2]) == {"theorem": 7, "definition": 3, "lemma": 3, "corollary": 1, "proposition": 1}
    assert results[3] == [["1.4", None, "Sequences and series of reals"]]     # the lemma of the 2021 paper


def test_csv_export_writes_lists_as_json(corpus_dir, tmp_path):
    out = tmp_path / "csv"
    assert main(["export", str(corpus_dir), "--format", "csv", "--output", str(out)]) == 0
    with open(out / "papers.csv", newline="") as handle:
        papers = list(csv.DictReader(handle))
    _, paper_count = corpus_counts(corpus_dir)
    assert len(papers) == paper_count
    first = next(p for p in papers if p["paper_id"] == "arxiv:2101.00001")
    assert json.loads(first["authors"]) == ["Ada Lovelace", "Bernhard O'Riemann"]
    with open(out / "theorems.csv", newline="") as handle:
        theorems = list(csv.DictReader(handle))
    assert len(theorems) == 15 and len(json.loads(theorems[0]["embedding"])) == 384
    assert (out / "failures.csv").is_file()


def test_bad_export_arguments_are_one_line_errors(corpus_dir, tmp_path, capsys):
    assert main(["export", str(corpus_dir), "--format", "xlsx", "--output", str(tmp_path / "x")]) == 2
    assert "unknown format 'xlsx'" in capsys.readouterr().err
    assert main(["export", str(corpus_dir), "--format", "csv", "--output", str(tmp_path)]) == 2
    assert "already exists" in capsys.readouterr().err
    assert main(["export", str(tmp_path), "--format", "csv", "--output", str(tmp_path / "y")]) == 2
    assert "not a thmforge output directory" in capsys.readouterr().err
    assert not (tmp_path / "x").exists() and not (tmp_path / "y").exists()
