"""The storage layer: every job's tables are named, staged, committed and read here, and only here.

Why one package: the corpus, the benchmark release, run-bench and eval-bench used to write with
four protocols over two file layers. Everything here goes through Beam's `FileSystems`, so an
output may be a local directory, gs:// or s3://, and a job never touches `pathlib` for its output.

- `files`: file primitives (read, write, atomic replace, list, move, delete), the writability
  check run before a pipeline, Hive partition directories and input-group names.
- `parquet`: deterministic Parquet files of a table (the Beam write transform).
- `commit`: staged writes, per-input completion markers (a finished input is never redone) and the
  generation commit (content-addressed files plus one manifest switch, atomic for readers).
- `manifest`: `manifest.json`, which names the committed files; readers read only those.

It keeps its historical name `write` so that existing imports stay valid; it imports no source,
pipeline or runner module.
"""
