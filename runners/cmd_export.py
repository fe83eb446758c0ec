"""Export a corpus for analysts: a Hugging Face dataset, a DuckDB file or CSV files.

  thmforge export out/corpus --format hf --output out/corpus-hf          # datasets.load_from_disk(...)
  thmforge export out/corpus --format duckdb --output out/corpus.duckdb  # tables papers, theorems, failures
  thmforge export out/corpus --format csv --output out/corpus-csv        # one CSV per table

hf: one split per source, a dataset card (README.md) with counts by kind, source and year, the
schema, each paper's license where its metadata has one, and how the corpus was built.
duckdb: the tables are copied into the file, so it opens anywhere with any DuckDB 1.5 client.
csv: list and embedding columns are JSON arrays. OUTPUT must not exist yet.
"""
from __future__ import annotations



def add_arguments(parser) -> None:
    parser.add_argument("dir", help="corpus directory (of build-corpus)")
    parser.add_argument("--format", required=True, metavar="FORMAT", help="hf, duckdb or csv")
    parser.add_argument("--output", required=True, metavar="OUT", help="file (duckdb) or directory to create")


def run(args, beam_args) -> int:
    from retrieval.export import export

    counts = export(args.dir, args.format, args.output)
    tables = ", ".join(f"{n} {name}" for name, n in counts.items() if "/" not in name)
    print(f"exported {tables} to {args.output} ({args.format})")
    return 0
