"""The persistent vector index of a corpus: `DIR/index/<representation>/`, read memory-mapped.

Layout (written by `retrieval.index_job`, read by `VectorIndex`):
  DIR/index/plan.json     the shards, shared by all representations and by `search.duckdb`: each
                          theorems Parquet file with its size, rows and first doc id
  DIR/index/search.duckdb the search table (metadata, doc ids) and its persisted BM25 index
and per representation, under DIR/index/<representation>/:
  index.json          the encoded shards, the dimension and the current merged index's name
  quantizer.index     faiss IVF-PQ, trained on a sample and empty: every shard encodes with it
  shards/<base>/      one per theorems Parquet file: `lists.ivl`, its vectors' inverted lists (PQ
                      codes and ids = doc ids, without the quantizer, which is stored once)
  vectors.f32         the stored unit vectors, float32, row = doc id (zeros where a row has none):
                      each shard writes its rows at its base, so re-scoring reads one mapped file
  merged-<n>.index    the shards' inverted lists merged (faiss `merge_ondisk`) into one on-disk
  merged-<n>.ivfdata  index, memory-mapped at search time

A document's id is its shard's base plus its row in the theorem file, so a new file adds a shard
without renumbering the others. A query probes `nprobe` lists of PQ codes for a shortlist, then
re-scores the shortlist with the stored float32 vectors: quantization picks candidates, never the
final order. A search over few rows (a small corpus, or a filter that leaves few) is answered
exactly over those rows' stored vectors: no dearer than the probe, and it misses nothing. Filters
are applied inside the search: a wider one is a faiss search restricted to the allowed ids (a
bitmap), with the probe widened until `k` candidates survive. See docs/vector_index.md.
"""
from __future__ import annotations

import contextlib
import dataclasses
import errno
import json
import os
import pathlib
import shutil
import sys
from typing import Optional, Sequence

import numpy as np

INDEX_DIR = "index"
PLAN = "plan.json"
SEARCH_DB = "search.duckdb"
MANIFEST = "index.json"
QUANTIZER = "quantizer.index"
SHARDS = "shards"
SHARD_LISTS = "lists.ivl"   # a shard's inverted lists (faiss `write_InvertedLists`)
SHARD_FORMAT = 3            # manifests of older shards (a full index or vectors.npy per shard) are re-encoded
STORED = "vectors.f32"
PQ_BYTES = 48               # bytes per vector in the shortlist's codes (384 floats: 8 dims a byte)
MAX_LISTS = 4096
PQ_TRAIN_PER_CENTROID = 64  # PQ training points per sub-vector centroid (faiss's default 256)
PQ_TRAIN_ITERATIONS = 10    # k-means iterations of the PQ's sub-vector centroids (faiss's default 25)
TRAIN_PER_LIST = 40         # k-means sample: faiss warns under 39 points a centroid (64: 1M rows train 20 s CPU longer)
NPROBE = 96                 # lists probed while they hold up to PROBED_ROWS / NPROBE rows (1M rows: 1,024 lists)
PROBED_ROWS = 96_000        # codes a probe scans: longer lists (MAX_LISTS reached) are probed fewer
MIN_NPROBE = 24             # 10M rows: recall@10 0.9735 with 24 probes, 0.9765 with 39, 0.9775 with 96
SHORTLIST = 400             # candidates re-scored exactly (at least 10 per result) up to SHORTLIST_ROWS rows
SHORTLIST_ROWS = 100_000
MAX_SHORTLIST = 1_000       # 1M rows: a faiss search for 1,264 candidates took 18-20 ms of CPU, for 1,000 7.4
EXACT_FILTER_ROWS = 20_000  # a search over at most this many rows (a filter's, or the whole corpus) is an exact scan
SCAN_ROWS = 262_144         # rows per block of an exact scan (1.5 KB each at 384-d)
SCAN_SCORES = 1 << 24       # rows x queries per block of a batched exact scan (64 MB of scores)
MERGE_GROUP = 64            # shards merged at once (`merge_shards`: each mapped one costs 24 bytes a list)
GROUPED_LISTS = 2048        # from this many lists, a vector's list is found in two levels (`list_finder`)
GROUP_PROBE = 8             # groups of centroids searched per vector (4,096 lists in 128 groups: 99.7% of
                            # vectors get their nearest centroid, the others one within 0.002 of its cosine)


# OpenBLAS kernels by the CPU's features (NumPy's names), widest first: faiss's wheel bundles
# OpenBLAS 0.3.15, which takes a CPU model it does not know (a cloud VM's "Intel(R) Xeon(R)
# Processor") for a Prescott and multiplies with SSE3: k-means and the lists' assignment ran 4x
# slower there than with its Skylake-X (AVX-512) kernels (20,480 x 512 products: 0.26 -> 0.06 s)
OPENBLAS_CORES = ((("AVX512_SKX",), "SkylakeX"), (("AVX2", "FMA3"), "Haswell"))


def openblas_core(cpu_features: dict[str, bool]) -> Optional[str]:
    """The OpenBLAS core type (OPENBLAS_CORETYPE) whose kernels a CPU with `cpu_features` runs:
    the widest of OPENBLAS_CORES it has, else None (OpenBLAS's own detection)."""
    return next((core for needs, core in OPENBLAS_CORES if all(cpu_features.get(f) for f in needs)), None)


def load_faiss():
    """faiss, imported the first time with its OpenBLAS told the CPU's kernels (`openblas_core`;
    an OPENBLAS_CORETYPE the user set wins, an empty one is OpenBLAS's detection, so ours). The
    variable is ours only while faiss loads: child processes and other libraries detect for themselves."""
    given = os.environ.get("OPENBLAS_CORETYPE")
    if "faiss" not in sys.modules and not given:
        try:
            from numpy._core._multiarray_umath import __cpu_features__
        except ImportError:     # NumPy 1
            from numpy.core._multiarray_umath import __cpu_features__

        core = openblas_core(__cpu_features__)
        if core is not None:
            os.environ["OPENBLAS_CORETYPE"] = core
            try:
                import faiss    # noqa: F401 (loads it)
            finally:
                if given is None:
                    del os.environ["OPENBLAS_CORETYPE"]
                else:
                    os.environ["OPENBLAS_CORETYPE"] = given
    import faiss

    return faiss


def recall_at_k(found: Sequence[Sequence[int]], exact: Sequence[Sequence[int]], k: int) -> float:
    """Mean fraction of the exact top k found in the approximate top k."""
    if not exact:
        return 1.0
    shares = [len(set(a[:k]) & set(e[:k])) / max(1, len(e[:k])) for a, e in zip(found, exact)]
    return sum(shares) / len(shares)


def shortlist_size(rows: int) -> int:
    """Candidates to re-score: SHORTLIST, growing with the square root of the rows beyond
    SHORTLIST_ROWS, as more rows crowd within the PQ codes' error of the true top 10, up to
    MAX_SHORTLIST (1M rows, 1,024 lists, nprobe 96, 100 held-out paragraphs: recall@10 0.974 with
    632, 0.981 with 1,000)."""
    return min(MAX_SHORTLIST, max(SHORTLIST, int(SHORTLIST * (rows / SHORTLIST_ROWS) ** 0.5)))


def probe_count(rows: int, nlist: int) -> int:
    """Lists a search probes: NPROBE, or where the lists hold more than PROBED_ROWS / NPROBE rows
    (beyond about 2M rows: 49 of 2,048 lists at 4M, 39 of 4,096 at 10M) as many as scan about
    PROBED_ROWS codes, at least MIN_NPROBE. A probe costs the codes it scans, and at 10M recall is
    the shortlist's (the PQ order), not the probe's: 200 held-out paragraphs, shortlist 1,000:
    recall@10 0.9775 with 96 lists (7.9 ms of CPU a faiss search), 0.9765 with 39 (4.3 ms); with
    the 4.4% filter 0.999 and 0.9985. At 1M the probe counts (96 lists: 0.965, 48: 0.951 on a
    proxy), so NPROBE stays there. See docs/vector_index.md, "Seventh pass"."""
    rows_per_list = max(1.0, rows / max(1, nlist))
    return int(min(nlist, NPROBE, max(MIN_NPROBE, PROBED_ROWS // rows_per_list)))


def index_dir(root: pathlib.Path, representation: str) -> pathlib.Path:
    return root / INDEX_DIR / representation


def list_count(rows: int) -> int:
    """Coarse lists for `rows` vectors: the power of two at or below 2 sqrt(rows), at most MAX_LISTS.
    Assigning a vector costs a product with every centroid and training grows with the square of
    the lists, so halving them halves both (1M rows: 2,048 -> 1,024 lists, 35 -> 13 us a row of
    coarse work); each probe then covers twice the rows, which is also what recall needed."""
    target = max(1, int(2 * rows ** 0.5))
    return int(min(MAX_LISTS, 1 << max(0, target.bit_length() - 1)))


def unit_rows(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1
    return (matrix / norms).astype(np.float32, copy=False)


def read_vectors(path: str, column: str) -> tuple[np.ndarray, np.ndarray]:
    """(row numbers with a vector, their unit vectors) of one theorems Parquet file."""
    present, raw = _raw_vectors(path, column)
    return present, unit_rows(raw) if len(present) else raw


def _raw_vectors(path: str, column: str) -> tuple[np.ndarray, np.ndarray]:
    """(row numbers with a vector, their vectors as stored) of one theorems Parquet file."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    # one thread: a Beam worker per core parallelizes (Arrow's pool only adds CPU: 6.3 against 7.2 us a row);
    # the file alone: `read_table` imports pyarrow.dataset, which imports pandas (0.25 s of CPU)
    values = pq.ParquetFile(path).read(columns=[column], use_threads=False).column(0).combine_chunks()
    if values.null_count:
        present = np.flatnonzero(values.is_valid().to_numpy(zero_copy_only=False))
        values = values.take(present)
    else:                   # the usual case: no copy before normalizing (9.0 -> 5.1 us a row)
        present = np.arange(len(values))
    if not len(present):
        return present, np.zeros((0, 0), dtype=np.float32)
    flat = values.flatten()
    if pa.types.is_float32(flat.type) and not flat.null_count:   # the buffer as is: `to_numpy` imports pandas (0.3 s)
        flat = np.frombuffer(flat.buffers()[1], dtype=np.float32, count=len(flat), offset=flat.offset * 4)
    else:
        flat = np.asarray(flat.to_numpy(zero_copy_only=False), dtype=np.float32)
    return present, flat.reshape(len(present), -1)


def sample_of(vectors: np.ndarray, fraction: float, seed: int) -> np.ndarray:
    """A random `fraction` of a file's vectors (at least one when it has any), for training."""
    if not len(vectors):
        return vectors
    rng = np.random.default_rng(seed)
    take = max(1, int(round(len(vectors) * fraction)))
    return vectors[np.sort(rng.choice(len(vectors), min(take, len(vectors)), replace=False))]


def train_sample_rows(lists: int) -> int:
    """Vectors to sample for training: TRAIN_PER_LIST a coarse list, and at least what the PQ trains on."""
    return max(lists * TRAIN_PER_LIST, 256 * PQ_TRAIN_PER_CENTROID)


def code_spec(sample_rows: int, dim: int) -> str:
    """faiss's name of the codes: PQ (256 centroids per sub-vector, 39 samples each at least), or
    for a sample too small to train it (a small corpus), 8-bit scalar quantization."""
    return f"PQ{pq_bytes(dim)}" if sample_rows >= 256 * 39 else "SQ8"


def train_quantizer(sample: np.ndarray, nlist: int) -> bytes:
    """An empty IVF index (inner product on unit vectors) trained on `sample`, serialized. With
    GROUPED_LISTS lists or more, k-means assigns the sample through `list_finder` (faiss's
    `clustering_index`): the exact assignment, a product with every centroid, was most of training."""
    faiss = load_faiss()

    faiss.omp_set_num_threads(1)    # a Beam worker per core parallelizes; OpenMP on a shared core spins
    dim = sample.shape[1]
    nlist = max(1, min(nlist, len(sample) // 39 or 1))
    index = faiss.index_factory(dim, f"IVF{nlist},{code_spec(len(sample), dim)}", faiss.METRIC_INNER_PRODUCT)
    if hasattr(index, "do_polysemous_training"):
        # faiss's default reorders PQ centroids for Hamming-distance filtering (simulated annealing:
        # minutes of CPU, most of a 100k-row build); the shortlist is scored with PQ tables instead
        index.do_polysemous_training = False
        # the PQ's 256 centroids a sub-vector from PQ_TRAIN_PER_CENTROID points each rather than
        # faiss's 256: they only pick the shortlist, which is re-scored exactly (100k rows: 5.6 ->
        # 2.3 s of CPU to train)
        index.pq.cp.max_points_per_centroid = PQ_TRAIN_PER_CENTROID
        # and 10 iterations rather than 25: the same recall (400 held-out paragraphs, recall@10
        # 0.9867 against 0.9858 at 100k rows, 0.9842 against 0.9807 at 1M), 3.1 -> 1.9 s of CPU
        # to train at 100k
        index.pq.cp.niter = PQ_TRAIN_ITERATIONS
    sample = np.ascontiguousarray(sample, dtype=np.float32)
    finder = list_finder(sample, nlist)     # the centroids change every iteration: faiss re-adds them
    if finder is not None:
        index.clustering_index = finder
    index.train(sample)
    return faiss.serialize_index(index).tobytes()


def list_finder(points: np.ndarray, nlist: int):
    """For `nlist` >= GROUPED_LISTS coarse lists, a faiss IVF-flat index (inner product) whose
    groups are trained on `points`, to which the lists' centroids are added: a vector is compared
    with the groups' centroids, then with the centroids in its GROUP_PROBE nearest groups. 4,096
    lists in 128 groups: 11 against 32 us of CPU a vector, its nearest centroid for 99.7% of
    vectors (and one within 0.002 of its cosine for the others: a vector in a neighbouring list is
    still found by a probe of that list). None below GROUPED_LISTS, where the exact product is cheap."""
    faiss = load_faiss()

    if nlist < GROUPED_LISTS:
        return None
    dim = points.shape[1]
    groups = 1 << int(np.log2(GROUP_PROBE * nlist) / 2)     # about sqrt(probe * lists): the two levels' work balanced
    finder = faiss.IndexIVFFlat(faiss.IndexFlatIP(dim), dim, groups, faiss.METRIC_INNER_PRODUCT)
    finder.cp.min_points_per_centroid = 16      # 4,096 centroids in 128 groups: no warning for 32 a group
    finder.train(np.ascontiguousarray(points, dtype=np.float32))
    finder.nprobe = GROUP_PROBE
    return finder


def pq_bytes(dim: int) -> int:
    """PQ sub-quantizers: PQ_BYTES when it divides `dim`, else the largest divisor below it."""
    return next(m for m in range(min(PQ_BYTES, dim), 0, -1) if dim % m == 0)


def stored_rows(present: np.ndarray, vectors: np.ndarray, rows: int, dim: int) -> np.ndarray:
    """A file's `rows` rows as stored: its unit vectors, zeros where a row has none."""
    if len(present) == rows:    # the usual case: every row has a vector, stored as read
        return vectors
    stored = np.zeros((rows, dim), dtype=np.float32)
    stored[present] = vectors
    return stored


def write_stored_rows(path: pathlib.Path, base: int, rows: np.ndarray) -> None:
    """Write `rows` at row `base` of the stored vectors file (shards write disjoint ranges of it in
    parallel; rows never written read as zeros)."""
    data = memoryview(np.ascontiguousarray(rows, dtype=np.float32)).cast("B")     # no copy
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        offset, view = base * rows.shape[1] * 4, data
        while view:
            written = os.pwrite(descriptor, view, offset)
            offset, view = offset + written, view[written:]
    finally:
        os.close(descriptor)


def read_stored_rows(path: pathlib.Path, base: int, rows: int, dim: int) -> np.ndarray:
    """`rows` rows of the stored vectors file from row `base` (one read, straight into the array)."""
    out = np.empty((rows, dim), dtype=np.float32)
    view = memoryview(out).cast("B")
    descriptor = os.open(path, os.O_RDONLY)
    try:
        offset = base * dim * 4
        while view:
            read = os.preadv(descriptor, [view], offset)
            if not read:
                raise ValueError(f"{path}: ends before row {base + rows}")
            offset, view = offset + read, view[read:]
    finally:
        os.close(descriptor)
    return out


class ShardEncoder:
    """The trained quantizer, deserialized once for every shard a worker encodes (6,800 shards at
    10M rows), with its `list_finder` over the lists' centroids."""

    def __init__(self, quantizer: bytes):
        faiss = load_faiss()

        faiss.omp_set_num_threads(1)
        self.quantizer = quantizer
        self.index = faiss.deserialize_index(np.frombuffer(quantizer, dtype=np.uint8))
        if hasattr(self.index, "pq"):   # the same codes from a centroid layout SIMD reads faster (8.5 -> 5.9 us a row)
            self.index.pq.sync_transposed_centroids()
        centroids = self.index.quantizer.reconstruct_n(0, self.index.nlist)
        self.finder = list_finder(centroids, self.index.nlist)
        if self.finder is not None:
            self.finder.add(centroids)

    def encode(self, present: np.ndarray, vectors: np.ndarray, base: int) -> tuple[bytes, int]:
        """(serialized inverted lists of a file's `vectors`, those of its rows `present`, with ids
        base + row: codes and ids only; vectors encoded)."""
        faiss = load_faiss()

        index = self.index
        if len(present) and vectors.shape[1] != index.d:
            raise ValueError(f"{vectors.shape[1]}-d vectors, the index holds {index.d}-d")
        index.reset()
        if len(present):
            vectors = np.ascontiguousarray(vectors, dtype=np.float32)
            ids = (present + base).astype(np.int64)
            if self.finder is None:
                index.add_with_ids(vectors, ids)
            else:
                lists = np.ascontiguousarray(self.finder.search(vectors, 1)[1][:, 0])
                lost = np.flatnonzero(lists < 0)        # the probed groups were empty: the exact product
                if len(lost):
                    lists[lost] = index.quantizer.search(vectors[lost], 1)[1][:, 0]
                index.add_core(len(vectors), faiss.swig_ptr(vectors), faiss.swig_ptr(ids), faiss.swig_ptr(lists))
        writer = faiss.VectorIOWriter()
        faiss.write_InvertedLists(index.invlists, writer)
        return faiss.vector_to_array(writer.data).tobytes(), len(present)


def _merged_lists(index, inputs: list, path: pathlib.Path):
    """faiss OnDiskInvertedLists at `path` holding the inverted lists of the `inputs` (indexes,
    `_mapped_lists`), list by list, entries in input order (`merge_from_multiple`); its entry count."""
    faiss = load_faiss()

    pointers = faiss.InvertedListsPtrVector()
    for owner in inputs:
        pointers.push_back(owner.invlists)
    merged = faiss.OnDiskInvertedLists(index.nlist, index.code_size, str(path))
    return merged, merged.merge_from_multiple(pointers.data(), pointers.size(), False)


def _mapped_lists(path: pathlib.Path, flags: int, index):
    """An empty index owning the inverted lists read from `path` (their data mapped), which frees
    and unmaps them when it goes: faiss's Python binding leaves lists it reads unowned (they would
    stay to the process's end), and a proxy told to own them is not freed either."""
    faiss = load_faiss()

    owner = faiss.IndexIVFScalarQuantizer(faiss.IndexFlatL2(index.code_size), index.code_size, index.nlist,
                                          faiss.ScalarQuantizer.QT_8bit)      # a byte a dimension: the same code size
    owner.replace_invlists(faiss.read_InvertedLists(faiss.FileIOReader(str(path)), flags), True)
    return owner


def merge_shards(directory: pathlib.Path, shard_bases: list[int], name: str) -> None:
    """Merge the shards' inverted lists into `name`.index / `name`.ivfdata under `directory` (the
    shards are memory-mapped, not loaded). Each mapped input holds 24 bytes a list in memory (at
    10M rows 6,800 shards of 4,096 lists: 668 MB), so more than MERGE_GROUP shards are merged in
    two rounds: groups of MERGE_GROUP into part files (`name`.parts/, removed after), then the
    parts. A part's lists are its shards' entries in shard order, so the result is the same bytes."""
    faiss = load_faiss()

    index = faiss.read_index(str(directory / QUANTIZER))
    inputs, flags = [directory / SHARDS / str(base) / SHARD_LISTS for base in shard_bases], faiss.IO_FLAG_MMAP
    parts = directory / f"{name}.parts"
    shutil.rmtree(parts, ignore_errors=True)
    try:
        with _stdout_to_stderr():       # faiss reports resizing the file on stdout
            if len(inputs) > MERGE_GROUP:
                parts.mkdir()
                groups, inputs = [inputs[i:i + MERGE_GROUP] for i in range(0, len(inputs), MERGE_GROUP)], []
                for number, group in enumerate(groups):
                    part, _ = _merged_lists(index, [_mapped_lists(p, flags, index) for p in group],
                                            parts / f"{number}.ivfdata")
                    inputs.append(parts / f"{number}.ilod")
                    writer = faiss.FileIOWriter(str(inputs[-1]))
                    faiss.write_InvertedLists(part, writer)
                    del writer, part      # closed and unmapped: the part's pages leave this process
                flags = faiss.IO_FLAG_READ_ONLY     # an OnDiskInvertedLists record maps its file when read
            merged, index.ntotal = _merged_lists(index, [_mapped_lists(p, flags, index) for p in inputs],
                                                 directory / f"{name}.ivfdata")
        index.replace_invlists(merged, True)
        merged.this.disown()            # the index owns it now
        faiss.write_index(index, str(directory / f"{name}.index"))
    finally:
        shutil.rmtree(parts, ignore_errors=True)


@dataclasses.dataclass(frozen=True)
class Shard:
    file: str           # path of the theorems file relative to the corpus root
    size: int           # its size in bytes when indexed (a changed file is re-indexed)
    base: int           # doc id of its first row
    rows: int


def read_json(path: pathlib.Path) -> Optional[dict]:
    """A JSON record of the index, or None when it does not exist."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path}: unreadable ({exc})") from None


def write_json(path: pathlib.Path, record: dict) -> None:
    """Replace `path` at once (readers see the old record or the new one)."""
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps(record, indent=1, sort_keys=True), encoding="utf-8")
    temporary.replace(path)


def shards_of(plan: Optional[dict]) -> list[Shard]:
    return [Shard(**s) for s in (plan or {}).get("shards", [])]


def theorem_files(root: pathlib.Path) -> dict[str, int]:
    """The committed theorems Parquet files (relative path -> size in bytes): those the manifest
    names, so a build-corpus committing meanwhile is never half indexed; the folder for corpora
    whose manifest names no files."""
    from retrieval.catalog import committed_files, read_manifest
    from schemas import THEOREMS

    listed = committed_files(root, read_manifest(root), THEOREMS)
    paths = [pathlib.Path(p) for p in listed] if listed is not None else sorted((root / "theorems").rglob("*.parquet"))
    return {str(p.relative_to(root)): p.stat().st_size for p in sorted(paths) if p.is_file()}


def fresh_plan(root: pathlib.Path) -> Optional[list[Shard]]:
    """The plan's shards when they cover exactly the corpus's current theorem files, else None."""
    plan = read_json(root / INDEX_DIR / PLAN)
    if plan is None or not (root / INDEX_DIR / SEARCH_DB).is_file():
        return None
    shards = shards_of(plan)
    return shards if {s.file: s.size for s in shards} == theorem_files(root) else None


def open_index(root: pathlib.Path, representation: str, shards: list[Shard]) -> Optional["VectorIndex"]:
    """The representation's index when it holds every shard of the plan, else None."""
    directory = index_dir(root, representation)
    manifest = read_json(directory / MANIFEST)
    if manifest is None or set(map(int, manifest.get("encoded", {}))) != {s.base for s in shards}:
        return None
    return VectorIndex(directory, shards, manifest)


@contextlib.contextmanager
def _stdout_to_stderr():
    """File descriptor 1 pointed at stderr meanwhile (C++ output bypasses sys.stdout), so that
    `search --format json` prints only JSON."""
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(2, 1)
    try:
        yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)


def docs_bitmap(docs: np.ndarray, doc_count: int) -> np.ndarray:
    """The bits faiss's `IDSelectorBitmap` reads for `docs` (bit d % 8 of byte d // 8) among
    `doc_count` docs; docs past them are left out (a bool mask of every doc, then packed)."""
    mask = np.zeros(doc_count, dtype=bool)
    mask[docs[docs < doc_count]] = True
    return np.packbits(mask, bitorder="little")


def bitmap_docs(bitmap: np.ndarray) -> np.ndarray:
    """The sorted doc ids a `selector_bitmap` holds: only its nonzero bytes are unpacked."""
    bytes_set = np.flatnonzero(bitmap)
    bits = np.flatnonzero(np.unpackbits(bitmap[bytes_set], bitorder="little"))
    return bytes_set[bits >> 3] * 8 + (bits & 7)


def bitmap_count(bitmap: np.ndarray) -> int:
    """The docs a `selector_bitmap` holds."""
    return int(np.bitwise_count(bitmap).sum(dtype=np.int64))


class VectorIndex:
    """A built index, memory-mapped: IVF-PQ shortlist, exact re-scoring from stored vectors."""

    def __init__(self, directory: pathlib.Path, shards: list[Shard], manifest: dict, nprobe: Optional[int] = None,
                 shortlist: Optional[int] = None, exact_filter_rows: int = EXACT_FILTER_ROWS):
        faiss = load_faiss()

        self.directory = directory
        self.shards = sorted(shards, key=lambda s: s.base)     # a file added later may sort before others
        self.bases = [s.base for s in self.shards]
        self.dim = int(manifest["dim"])
        with _stdout_to_stderr():      # faiss prints where it found the .ivfdata on stdout
            self.index = faiss.read_index(str(directory / f"{manifest['merged']}.index"),
                                          faiss.IO_FLAG_ONDISK_SAME_DIR)
        self.nlist = int(self.index.nlist)
        self.exact_filter_rows = exact_filter_rows
        self.doc_limit = max((s.base + s.rows for s in self.shards), default=0)
        self.nprobe = min(nprobe, self.nlist) if nprobe else probe_count(int(self.index.ntotal), self.nlist)
        self.shortlist = shortlist or shortlist_size(self.doc_limit)
        path = directory / STORED
        rows = path.stat().st_size // (4 * self.dim) if path.is_file() else 0
        if rows < self.doc_limit:
            raise ValueError(f"{path}: holds {rows} stored vectors, the shards need {self.doc_limit}")
        # read with preadv, not mapped: pages a mapping touches count as the process's resident
        # memory, and the kernel maps whole page-cache folios on a fault (a gather of 632 rows of a
        # mapped 1M-row file added 377 MB), so re-scoring would hold most of a 10M-row file
        self._stored_fd = os.open(path, os.O_RDONLY) if self.doc_limit else None
        self._nowait = hasattr(os, "RWF_NOWAIT") and hasattr(os, "posix_fadvise")

    def __del__(self):
        if getattr(self, "_stored_fd", None) is not None:
            os.close(self._stored_fd)

    def stored(self, docs: np.ndarray) -> np.ndarray:
        """The stored unit vectors of `docs` (zeros for a doc without one): one `preadv` per run of
        consecutive docs, straight into the result (2 us a run; a `pread` and a copy took 5).
        A run not in the page cache does not wait there (`RWF_NOWAIT`): the misses are all asked
        of the disk at once (`POSIX_FADV_WILLNEED`), then read, so a shortlist whose rows are on
        disk (a 10M-row file is 15 GB) waits about one disk read rather than one per row."""
        docs = np.asarray(docs, dtype=np.int64)
        out = np.zeros((len(docs), self.dim), dtype=np.float32)
        if self._stored_fd is None or not len(docs):
            return out
        row_bytes = self.dim * 4
        view = memoryview(out).cast("B")
        breaks = np.flatnonzero(np.diff(docs) != 1) + 1
        starts, stops = np.concatenate(([0], breaks)).tolist(), np.concatenate((breaks, [len(docs)])).tolist()
        missed = []
        flags = os.RWF_NOWAIT if self._nowait else 0
        for start, stop, offset in zip(starts, stops, (docs[starts] * row_bytes).tolist()):
            part = view[start * row_bytes:stop * row_bytes]
            try:
                if os.preadv(self._stored_fd, [part], offset, flags) == len(part):
                    continue
            except BlockingIOError:
                pass
            except OSError as exc:
                if exc.errno != errno.EOPNOTSUPP:
                    raise
                self._nowait, flags = False, 0      # a file system without non-blocking buffered reads
            missed.append((part, offset))
        for part, offset in missed:
            os.posix_fadvise(self._stored_fd, offset, len(part), os.POSIX_FADV_WILLNEED)
        for part, offset in missed:
            os.preadv(self._stored_fd, [part], offset)
        return out

    def _rescored(self, query: np.ndarray, docs: np.ndarray, k: int) -> list[tuple[int, float]]:
        docs = np.unique(docs[docs >= 0])
        if not len(docs):
            return []
        matrix = self.stored(docs)
        scores = matrix @ query
        zero = np.flatnonzero(scores == 0)      # a row without a vector is stored as zeros
        empty = zero[~matrix[zero].any(axis=1)]
        if len(empty):
            docs, scores = np.delete(docs, empty), np.delete(scores, empty)
        if len(scores) > k:                     # the k best and every row tied with the k-th
            best = scores >= np.partition(scores, len(scores) - k)[len(scores) - k]
            docs, scores = docs[best], scores[best]
        order = np.lexsort((docs, -scores))[:k]
        return [(int(docs[i]), float(scores[i])) for i in order]

    def probes(self, allowed_rows: Optional[int] = None) -> bool:
        """Whether a search over `allowed_rows` rows (None: every row) probes the lists, rather than
        scanning the rows exactly."""
        return (self.doc_limit if allowed_rows is None else allowed_rows) > self.exact_filter_rows

    def selector_bitmap(self, allowed: np.ndarray) -> np.ndarray:
        """`docs_bitmap` of `allowed` over this index's docs; a caller that filters the same way
        again keeps it."""
        return docs_bitmap(allowed, self.doc_limit)

    def search(self, query: np.ndarray, k: int, allowed: Optional[np.ndarray] = None,
               bitmap: Optional[np.ndarray] = None, allowed_rows: Optional[int] = None) -> list[tuple[int, float]]:
        """(doc, cosine) of the k nearest docs, best first; `allowed`: sorted doc ids passing filters,
        `bitmap`: their `selector_bitmap` when the caller has it, alone (without `allowed`) with
        their number, `allowed_rows` (a caller with the bitmap need not list the ids)."""
        faiss = load_faiss()

        if allowed is not None:
            allowed_rows = len(allowed)
        elif bitmap is not None and allowed_rows is None:
            raise ValueError("a bitmap without the allowed ids needs their number")
        if not self.probes(allowed_rows):
            return self.exact(query, k, allowed if allowed is not None or bitmap is None else bitmap_docs(bitmap))
        query = unit_rows(np.asarray(query, dtype=np.float32).reshape(1, -1))[0]
        want = max(self.shortlist, 10 * k)
        params = faiss.SearchParametersIVF()
        if allowed_rows is not None:
            bitmap = self.selector_bitmap(allowed) if bitmap is None else bitmap
            selector = faiss.IDSelectorBitmap(self.doc_limit, faiss.swig_ptr(bitmap))    # alive through the search
            params.sel = selector
        nprobe = self.nprobe
        if allowed_rows is not None:    # the allowed rows' neighbours spread over more lists: probe more
            nprobe = min(self.nlist, int(np.ceil(nprobe / max(allowed_rows / max(1, self.doc_limit), 1e-6) ** 0.5)))
        while True:
            params.nprobe = nprobe
            _, ids = self.index.search(query.reshape(1, -1), want, params=params)
            found = ids[0][ids[0] >= 0]
            if len(found) >= min(want, allowed_rows if allowed_rows is not None else want) or nprobe >= self.nlist:
                break
            nprobe = min(self.nlist, nprobe * 4)    # a narrow filter: widen the probe until k survive
        return self._rescored(query, found, k)

    def exact(self, query: np.ndarray, k: int, allowed: Optional[np.ndarray] = None) -> list[tuple[int, float]]:
        """The reference: every stored vector (or every allowed one) scanned, see `exact_many`."""
        return self.exact_many(np.asarray(query, dtype=np.float32).reshape(1, -1), k, allowed)[0]

    def exact_many(self, queries: np.ndarray, k: int,
                   allowed: Optional[np.ndarray] = None) -> list[list[tuple[int, float]]]:
        """The exact top k (doc, cosine) of every query, best first, ties by doc, in ONE pass over
        the stored vectors for all the queries (a pass per query reads 15 GB at 10M rows): block by
        block, read rather than mapped (the scan stays out of the RSS); with `allowed` (sorted doc
        ids passing filters), the allowed rows only, a block at a time (a broad filter at 10M
        allows millions)."""
        queries = unit_rows(np.asarray(queries, dtype=np.float32).reshape(-1, self.dim))
        top_docs = np.zeros((0, len(queries)), dtype=np.int64)
        top_scores = np.zeros((0, len(queries)), dtype=np.float32)
        block_rows = max(1, min(SCAN_ROWS, SCAN_SCORES // max(1, len(queries))))
        for docs, block in self._scan_blocks(block_rows, allowed):
            scores = block @ queries.T                              # (rows, queries)
            zero = np.flatnonzero(scores[:, 0] == 0)                # a row without a vector is stored as zeros
            scores[zero[~block[zero].any(axis=1)]] = -np.inf
            best = (np.argpartition(-scores, k - 1, axis=0)[:k] if len(docs) > k
                    else np.broadcast_to(np.arange(len(docs))[:, None], scores.shape))
            top_docs = np.concatenate([top_docs, docs[best]])
            top_scores = np.concatenate([top_scores, np.take_along_axis(scores, best, axis=0)])
            order = np.lexsort((top_docs, -top_scores), axis=0)[:k]
            top_docs = np.take_along_axis(top_docs, order, axis=0)
            top_scores = np.take_along_axis(top_scores, order, axis=0)
        return [[(int(d), float(s)) for d, s in zip(top_docs[:, q], top_scores[:, q]) if np.isfinite(s)]
                for q in range(len(queries))]

    def _scan_blocks(self, block_rows: int, allowed: Optional[np.ndarray]):
        """(doc ids, their stored vectors) of every indexed row, or of the allowed ones, `block_rows` at a time."""
        if allowed is not None:
            allowed = np.asarray(allowed, dtype=np.int64)
            for start in range(0, len(allowed), block_rows):
                docs = allowed[start:start + block_rows]
                yield docs, self.stored(docs)
            return
        ranges = []                 # the shards' rows as runs of consecutive doc ids
        for shard in self.shards:
            if ranges and ranges[-1][1] == shard.base:
                ranges[-1][1] += shard.rows
            else:
                ranges.append([shard.base, shard.base + shard.rows])
        buffer = np.empty((block_rows, self.dim), dtype=np.float32)
        with open(self.directory / STORED, "rb", buffering=0) as file:
            for begin, end in ranges:
                for first in range(begin, end, block_rows):
                    count = min(block_rows, end - first)
                    file.seek(first * self.dim * 4)
                    view = memoryview(buffer[:count]).cast("B")
                    while view:
                        view = view[file.readinto(view):]
                    yield np.arange(first, first + count), buffer[:count]
