"""The description cache: Parquet shards under a directory on any Beam filesystem.

Entries are keyed by `records.description_key`. Shards are written as soon as a few answers
arrive (not at the end of the run), via a temporary name and a rename, so an interrupted run keeps
what it paid for and a rerun resumes. A shard's name is a hash of its keys: a retried bundle
rewrites the same file instead of adding a duplicate.
"""
from __future__ import annotations

import hashlib
import io
import time
from typing import Iterable, Optional

import apache_beam as beam
import pyarrow as pa
import pyarrow.parquet as pq
from apache_beam.io.filesystems import FileSystems

CACHE_SCHEMA = pa.schema([
    pa.field("key", pa.string(), nullable=False),
    pa.field("statement_hash", pa.string()),
    pa.field("context", pa.string()),
    pa.field("template", pa.string()),
    pa.field("model", pa.string()),
    pa.field("description", pa.string()),
    pa.field("input_tokens", pa.int32()),
    pa.field("output_tokens", pa.int32()),
])


def cache_glob(cache_dir: str) -> str:
    return FileSystems.join(cache_dir, "*.parquet")


def cache_files(cache_dir: str) -> list[str]:
    """Completed shards (temporary files of an interrupted write are ignored)."""
    try:
        matches = FileSystems.match([cache_glob(cache_dir)])[0].metadata_list
    except Exception:  # no such directory yet
        return []
    return sorted(m.path for m in matches)


def write_shard(cache_dir: str, entries: list[dict]) -> Optional[str]:
    """Write entries as one shard (atomically: temp file, then rename); returns its path."""
    if not entries:
        return None
    entries = sorted(entries, key=lambda e: e["key"])
    name = hashlib.sha256("\n".join(e["key"] for e in entries).encode()).hexdigest()[:20]
    final = FileSystems.join(cache_dir, f"descriptions-{name}.parquet")
    temporary = FileSystems.join(cache_dir, f".tmp-{name}-{time.monotonic_ns()}")
    buffer = io.BytesIO()
    pq.write_table(pa.Table.from_pylist([{f: e.get(f) for f in CACHE_SCHEMA.names} for e in entries],
                                        schema=CACHE_SCHEMA), buffer)
    with FileSystems.create(temporary) as handle:
        handle.write(buffer.getvalue())
    if FileSystems.exists(final):
        FileSystems.delete([final])
    FileSystems.rename([temporary], [final])
    return final


def read_entries(cache_dir: str) -> list[dict]:
    """All entries of all shards (for tests, tools and small caches; the pipeline reads via Beam)."""
    entries: list[dict] = []
    for path in cache_files(cache_dir):
        with FileSystems.open(path) as handle:
            entries.extend(pq.read_table(io.BytesIO(handle.read())).to_pylist())
    return entries


def pick_entry(entries: Iterable[dict]) -> Optional[dict]:
    """One entry among duplicates of a key (from retried bundles or parallel runs), chosen deterministically."""
    entries = [e for e in entries if e.get("description")]
    return min(entries, key=lambda e: e["description"]) if entries else None


class WriteCacheShards(beam.DoFn):
    """Buffers new entries and flushes a shard every `flush_every` entries, `flush_interval_s` and bundle end."""

    def __init__(self, cache_dir: str, flush_every: int = 64, flush_interval_s: float = 10.0):
        self.cache_dir = cache_dir
        self.flush_every = flush_every
        self.flush_interval_s = flush_interval_s
        self.shards_written = beam.metrics.Metrics.counter("thmforge.describe", "cache_shards_written")

    def start_bundle(self):
        self._buffer: list[dict] = []
        self._last_flush = time.monotonic()

    def process(self, entry: dict):
        self._buffer.append(entry)
        if len(self._buffer) >= self.flush_every or time.monotonic() - self._last_flush >= self.flush_interval_s:
            self.flush()
        return []

    def flush(self) -> None:
        if write_shard(self.cache_dir, self._buffer):
            self.shards_written.inc()
        self._buffer = []
        self._last_flush = time.monotonic()

    def finish_bundle(self):
        self.flush()
