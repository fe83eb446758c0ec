"""Files beside an index's search table, read by doc id with `pread` (nothing of them stays in the
process): the hits' display rows (`hits.bin`) and the doc sets of the filter values (`filters.bin`).

Hits: read from `search_corpus`, each hit pinned a 256 KB block of each of its 15 columns (at 10M
rows 12.8 ms of CPU a query when those blocks were not in DuckDB's buffer pool, 2.9 when they
were); here a hit is its own few hundred bytes. Filters: a filter on kind, source, category or
year was a scan of the whole table (16 ms at 10M rows); here it is the union of its values' doc
sets, for each field, intersected, as the bitmap faiss's `IDSelectorBitmap` reads.

Both files begin with a magic, the build's token (the one `search.duckdb` holds in table
`sidecar`: files and a table from different builds are never read together) and the doc count n.
`hits.bin`: then n + 1 little-endian uint64 offsets into the records after them (doc d: bytes
offsets[d] to offsets[d + 1], empty for a doc id no row has), then the records, one JSON array of
the hit columns of `retrieval.search` a doc, its text cut to a prefix with the same snippet
(`snippet_source`). `filters.bin`: then the offset and length of a JSON directory at its end
({field: {value: [offset, count, bitmap?]}}); each value's docs are a bitmap (bit d % 8 of byte
d // 8, n bits) or, for a rare value (under 1 doc in BITMAP_SHARE), their sorted uint32 ids.
"""
from __future__ import annotations

import functools
import json
import os
import pathlib
import struct
import sys
import uuid
from typing import Optional, Sequence

import duckdb
import numpy as np

from retrieval.filters import Filters
from retrieval.vector_index import docs_bitmap

HITS_FILE = "hits.bin"
FILTERS_FILE = "filters.bin"
TOKEN_TABLE = "sidecar"
HEADER = struct.Struct("<8s16sQ")       # magic, token, doc count
HITS_MAGIC, FILTERS_MAGIC = b"thmhits1", b"thmfilt1"
DIRECTORY = struct.Struct("<QQ")        # filters.bin: offset and length of the JSON directory
# the filter fields the doc sets answer (SQL over search_corpus: a value, or a list of them)
FILTER_FIELDS = {"kind": "kind", "source": "source", "year": "year", "category": "category_keys"}
BATCH_ROWS = 1 << 20         # rows a batch when reading the filter columns
HIT_BATCH_ROWS = 1 << 16     # and the hits' records (a few hundred bytes each: 1M of them held 430 MB)
# a value's docs are kept as a bitmap from this share of the docs up (1/256: its ids would take an
# eighth of the bitmap's bytes), else as ids: OR-ing a bitmap in costs 0.2 ms at 10M docs, setting
# a year's 294,000 listed ids about 3 ms
BITMAP_SHARE = 256


@functools.cache
def space_class() -> str:
    """Python's whitespace (what `str.split()` splits on), as an RE2 character class: NumPy's
    `isspace` (`str.isspace`'s set) over every code point at once, 8 ms of CPU where a loop took 60;
    computed when a build first writes snippets, not when search and serve import this module."""
    return "[" + "".join(f"\\x{{{code:x}}}" for code in np.flatnonzero(
        np.char.isspace(np.arange(sys.maxunicode + 1, dtype=np.uint32).view("<U1")))) + "]"


def new_token() -> bytes:
    return uuid.uuid4().bytes


def keep_token(con: duckdb.DuckDBPyConnection, token: bytes) -> None:
    # hex digits inline, not a bound parameter: DuckDB's client imports pandas to check one
    con.execute(f"CREATE OR REPLACE TABLE {TOKEN_TABLE} AS SELECT '{token.hex()}'::VARCHAR AS token")


def snippet_source(text: str, limit: int) -> str:
    """SQL over the text column `text`: the text, or a prefix of it with the same `snippet(_,
    limit)`. A prefix whose non-space characters number more than `limit` normalizes to more than
    `limit` characters that begin the whole text's normalized form, so the snippet, cut within its
    first `limit`, is the same; the prefix is 2 `limit` + 32 characters, enough unless the text is
    mostly spaces (then all of it is kept)."""
    prefix = 2 * limit + 32
    return (f"CASE WHEN length({text}) <= {prefix} "
            f"OR length(regexp_replace(left({text}, {prefix}), '{space_class()}', '', 'g')) <= {limit} "
            f"THEN {text} ELSE left({text}, {prefix}) END")


def _doc_batches(con: duckdb.DuckDBPyConnection, columns: str, doc_count: int, rows: int = BATCH_ROWS):
    """Record batches of `SELECT doc, columns FROM search_corpus` in table order, which must be doc
    order (the table is written sorted by doc), with each batch's docs as int64."""
    last = -1
    for batch in con.execute(f"SELECT doc, {columns} FROM search_corpus").to_arrow_reader(rows):
        docs = _int64s(batch.column(0))
        if not len(docs):
            continue
        if docs[0] <= last or np.any(docs[1:] <= docs[:-1]) or docs[-1] >= doc_count:
            raise ValueError("sidecar: search_corpus is not in doc order, or a doc is past the plan")
        last = int(docs[-1])
        yield docs, batch


def write_hits(con: duckdb.DuckDBPyConnection, path: pathlib.Path, columns: Sequence[str], doc_count: int,
               token: bytes) -> None:
    """Write `hits.bin` of `search_corpus` (docs below `doc_count`): `columns` are SQL expressions
    over its columns, a record's values in order."""
    offsets = np.zeros(doc_count + 1, dtype="<u8")
    written = 0
    with open(path, "wb") as out:
        out.seek(HEADER.size + offsets.nbytes)
        for docs, batch in _doc_batches(con, f"json_array({', '.join(columns)})", doc_count, HIT_BATCH_ROWS):
            records = batch.column(1).cast("large_string")
            # the records' bytes as Arrow holds them, one after the other: no copy per record
            bounds = np.frombuffer(records.buffers()[1], dtype="<i8")[records.offset:records.offset + len(records) + 1]
            out.write(memoryview(records.buffers()[2])[bounds[0]:bounds[-1]])
            offsets[docs + 1] = written + bounds[1:] - bounds[0]
            written += int(bounds[-1] - bounds[0])
        np.maximum.accumulate(offsets, out=offsets)     # a doc without a row: an empty record
        out.seek(0)
        out.write(HEADER.pack(HITS_MAGIC, token, doc_count))
        out.write(offsets.tobytes())


def write_filters(con: duckdb.DuckDBPyConnection, path: pathlib.Path, doc_count: int, token: bytes) -> None:
    """Write `filters.bin` of `search_corpus` (docs below `doc_count`, fewer than 2^32): the docs of
    every value of FILTER_FIELDS, one field at a time (a pass over its column each: only one
    field's ids are held, at 10M rows the categories' 120 MB rather than every field's 240)."""
    if doc_count >= 1 << 32:
        raise ValueError(f"sidecar: {doc_count} docs, more than uint32 ids hold")
    directory: dict[str, dict] = {}
    with open(path, "wb") as out:
        offset = HEADER.size + DIRECTORY.size
        out.seek(offset)
        for field, column in FILTER_FIELDS.items():
            directory[field] = {}
            for value, docs in _value_docs(con, column, doc_count):
                as_bitmap = len(docs) >= doc_count // BITMAP_SHARE
                data = docs_bitmap(docs, doc_count) if as_bitmap else docs.astype("<u4")
                out.write(data.tobytes())
                directory[field][value] = [offset, len(docs), as_bitmap]
                offset += data.nbytes
        listing = json.dumps(directory, sort_keys=True).encode()
        out.write(listing)
        out.seek(0)
        out.write(HEADER.pack(FILTERS_MAGIC, token, doc_count))
        out.write(DIRECTORY.pack(offset, len(listing)))


def _value_docs(con: duckdb.DuckDBPyConnection, column: str, doc_count: int):
    """(value, its sorted docs as uint32) of every value of `column` (a value, or a list of them, a row)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    found: dict[str, list] = {}
    for docs, batch in _doc_batches(con, column, doc_count):
        values, owners = batch.column(1), docs
        if pa.types.is_list(values.type):       # a doc under each of its list's values
            owners = docs[_int64s(pc.list_parent_indices(values))]
            values = pc.list_flatten(values)
        if values.null_count:
            valid = values.is_valid()
            owners, values = owners[_int64s(pc.indices_nonzero(valid))], values.filter(valid)
        encoded = pc.dictionary_encode(values)
        owners = owners.astype(np.uint32)
        codes = _int64s(encoded.indices)
        order = np.argsort(codes, kind="stable")    # stable: each value's docs stay sorted
        bounds = np.concatenate(([0], np.cumsum(np.bincount(codes, minlength=len(encoded.dictionary)))))
        for code, value in enumerate(encoded.dictionary.to_pylist()):
            if bounds[code + 1] > bounds[code]:
                found.setdefault(str(value), []).append(owners[order[bounds[code]:bounds[code + 1]]])
    for value in list(found):
        yield value, np.concatenate(found.pop(value))      # its parts dropped as it is joined


def _int64s(array) -> np.ndarray:
    """An Arrow integer array without nulls as int64s, read from its buffer: `to_numpy` imports pandas
    (0.3 s of CPU, which a small in-process build would pay)."""
    import pyarrow.compute as pc

    array = pc.cast(array, "int64")
    return np.frombuffer(array.buffers()[1], dtype="<i8", count=len(array), offset=array.offset * 8)


class _Sidecar:
    """An open sidecar file, checked against the table's token; safe from many threads (`pread` only)."""

    def __init__(self, path: pathlib.Path, magic: bytes, token: str):
        self._fd = os.open(path, os.O_RDONLY)
        try:
            found, stored, self.doc_count = HEADER.unpack(os.pread(self._fd, HEADER.size, 0))
            if found != magic or stored.hex() != token:
                raise ValueError(f"{path}: not of this search table")
        except BaseException:
            os.close(self._fd)
            self._fd = None
            raise

    def __del__(self):
        if getattr(self, "_fd", None) is not None:
            os.close(self._fd)

    def read(self, size: int, offset: int) -> bytes:
        data = os.pread(self._fd, size, offset)
        if len(data) != size:
            raise ValueError(f"sidecar: {size} bytes at {offset} asked, {len(data)} read (a truncated file)")
        return data


class HitStore(_Sidecar):
    def __init__(self, path: pathlib.Path, token: str):
        super().__init__(path, HITS_MAGIC, token)
        self._data_start = HEADER.size + 8 * (self.doc_count + 1)

    def records(self, docs: Sequence[int]) -> dict[int, list]:
        """doc -> its record (a list of values), for each of `docs` that has one."""
        found = {}
        for doc in docs:
            if not 0 <= doc < self.doc_count:
                continue
            start, stop = struct.unpack("<QQ", self.read(16, HEADER.size + 8 * doc))
            if stop > start:
                found[doc] = json.loads(self.read(stop - start, self._data_start + start))
        return found


class FilterIndex(_Sidecar):
    def __init__(self, path: pathlib.Path, token: str):
        super().__init__(path, FILTERS_MAGIC, token)
        offset, length = DIRECTORY.unpack(self.read(DIRECTORY.size, HEADER.size))
        self.directory: dict[str, dict[str, list]] = json.loads(self.read(length, offset))
        self.years = {int(value): value for value in self.directory.get("year", {})}

    @staticmethod
    def answers(filters: Filters) -> bool:
        """Whether the doc sets answer `filters` (authors and papers are scanned in the table)."""
        return not filters.authors and not filters.paper_ids

    def bitmap(self, filters: Filters) -> np.ndarray:
        """The selector bitmap of the docs passing `filters` (`answers` them): for each field
        filtered, the union of its values' docs, intersected."""
        fields = [(field, values) for field, values in
                  (("kind", filters.kinds), ("source", filters.sources), ("category", filters.categories)) if values]
        if filters.year_from is not None or filters.year_to is not None:
            low, high = filters.year_from or 0, filters.year_to or 1 << 31
            fields.append(("year", [text for year, text in self.years.items() if low <= year <= high]))
        result = None
        for field, values in fields:
            union = self._union(field, values)
            result = union if result is None else np.bitwise_and(result, union, out=result)
        return result if result is not None else self._read_bitmap(None)

    def _read_bitmap(self, offset: Optional[int]) -> np.ndarray:
        """A bitmap read from `offset` into a new writable array (None: no docs)."""
        bitmap = np.zeros((self.doc_count + 7) // 8, dtype=np.uint8)
        if offset is not None and len(bitmap) and os.preadv(self._fd, [bitmap], offset) != len(bitmap):
            raise ValueError(f"sidecar: a bitmap at {offset} cut short (a truncated file)")
        return bitmap

    def _union(self, field: str, values: Sequence[str]) -> np.ndarray:
        entries = [entry for entry in map(self.directory.get(field, {}).get, values) if entry is not None]
        bitmaps = [offset for offset, _, as_bitmap in entries if as_bitmap]
        union = self._read_bitmap(bitmaps[0] if bitmaps else None)
        for offset in bitmaps[1:]:
            union |= self._read_bitmap(offset)
        for offset, count, as_bitmap in entries:
            if not as_bitmap:
                docs = np.frombuffer(self.read(4 * count, offset), dtype="<u4")
                np.bitwise_or.at(union, docs >> 3, np.left_shift(1, docs & 7).astype(np.uint8))
        return union


def open_sidecars(directory: pathlib.Path, con: duckdb.DuckDBPyConnection,
                  doc_count: int) -> tuple[Optional[HitStore], Optional[FilterIndex]]:
    """The hit store and filter index of the search table open in `con` (each None when missing or
    not of this table, as for an index built before they existed: the table answers instead)."""
    # no bound parameter: DuckDB's client would import pandas to check it (`search` hides pandas later)
    tables = con.execute(f"SELECT count(*) FROM duckdb_tables() WHERE table_name = '{TOKEN_TABLE}'").fetchone()[0]
    if not tables:
        return None, None
    token = con.execute(f"SELECT token FROM {TOKEN_TABLE}").fetchone()[0]
    opened = []
    for kind, name in ((HitStore, HITS_FILE), (FilterIndex, FILTERS_FILE)):
        try:
            sidecar = kind(directory / name, token)
        except (OSError, ValueError, struct.error):
            sidecar = None
        opened.append(sidecar if sidecar is None or sidecar.doc_count == doc_count else None)
    return opened[0], opened[1]
