"""The index job's steps over one theorems file or one quantizer, as plain functions: the Beam job
(`retrieval.index_beam`) calls them from its DoFns, and `index_job` calls them in its own process
for a small corpus (`encode_here`), so both paths write the same files."""
from __future__ import annotations

import pathlib
from typing import NamedTuple, Optional

import numpy as np

from retrieval import vector_index
from retrieval.vector_index import Shard

TRAIN_SAMPLE_SEED = 20260
SAMPLE_DIR = "sample"       # under the representation's index directory while training


def _write_bytes(path: pathlib.Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_bytes(data)
    temporary.replace(path)


class ReadShard(NamedTuple):
    """A theorems file read by `read_shard`: its shard, the rows with a vector (None: every row),
    and its training sample (path, rows, dimension) when one was taken."""
    shard: Shard
    present: Optional[np.ndarray]
    sample: Optional[tuple[str, int, int]]


def read_shard(root: pathlib.Path, directory: pathlib.Path, column: str, dim: int, shard: Shard, store: bool,
               fraction: Optional[float]) -> ReadShard:
    """Read a theorems file's vectors once: with `store`, into its rows of the stored vectors file
    (encoding reads them there: decoding the Parquet file again cost 3-4 us a row); with a
    `fraction`, a training sample of them into `sample/<base>.npy`. The samples meet in files
    rather than in PCollections: at 10M rows the 252 MB sample passed through Beam's in-memory
    PCollections in several encoded copies (the job's peak, 1,857 MB)."""
    present, vectors = vector_index.read_vectors(str(root / shard.file), column)
    if len(present) and vectors.shape[1] != dim:
        raise ValueError(f"{root / shard.file}: {vectors.shape[1]}-d vectors, the index holds {dim}-d")
    if store:
        vector_index.write_stored_rows(directory / vector_index.STORED, shard.base,
                                       vector_index.stored_rows(present, vectors, shard.rows, dim))
    sample = None
    if fraction is not None:
        taken = vector_index.sample_of(vectors, fraction, TRAIN_SAMPLE_SEED + shard.base)
        target = directory / SAMPLE_DIR / f"{shard.base}.npy"
        target.parent.mkdir(parents=True, exist_ok=True)
        np.save(target, taken)
        sample = (str(target), taken.shape[0], taken.shape[1])
    return ReadShard(shard, None if len(present) == shard.rows else present, sample)


def read_samples(samples: list[tuple[str, int, int]]) -> np.ndarray:
    """The samples' rows in one array, filled file by file (one copy in memory)."""
    samples = sorted(s for s in samples if s[1])
    matrix = np.empty((sum(rows for _, rows, _ in samples), samples[0][2] if samples else 0), dtype=np.float32)
    row = 0
    for path, rows, _ in samples:
        matrix[row:row + rows] = np.load(path)
        row += rows
    return matrix


def train(directory: pathlib.Path, samples: list[tuple[str, int, int]], lists: int) -> bytes:
    """The quantizer trained on the samples, kept in `directory`."""
    quantizer = vector_index.train_quantizer(read_samples(samples), lists)
    _write_bytes(directory / vector_index.QUANTIZER, quantizer)
    return quantizer


def encode_shard(encoder: vector_index.ShardEncoder, directory: pathlib.Path, read: ReadShard) -> int:
    """Encode a file's stored rows with the trained quantizer into `shards/<base>/`; vectors encoded."""
    shard = read.shard
    vectors = vector_index.read_stored_rows(directory / vector_index.STORED, shard.base, shard.rows, encoder.index.d)
    present = np.arange(shard.rows) if read.present is None else read.present
    codes, encoded = encoder.encode(present, vectors if read.present is None else vectors[present], shard.base)
    folder = directory / vector_index.SHARDS / str(shard.base)
    (folder / "vectors.npy").unlink(missing_ok=True)     # a shard of format 2 kept its own
    _write_bytes(folder / vector_index.SHARD_LISTS, codes)
    return encoded


def encode_here(root: pathlib.Path, directory: pathlib.Path, column: str, dim: int, shards: list[Shard],
                new_shards: list[Shard], quantizer: Optional[bytes], fraction: float, lists: int) -> None:
    """The Beam job's steps in this process, file after file (`BuildVectorShards` does the same)."""
    new = {s.base for s in new_shards}
    reads = [read_shard(root, directory, column, dim, s, s.base in new, fraction if quantizer is None else None)
             for s in (shards if quantizer is None else new_shards)]
    if quantizer is None:
        quantizer = train(directory, [r.sample for r in reads], lists)
    encoder = vector_index.ShardEncoder(quantizer)
    for read in reads:
        if read.shard.base in new:
            encode_shard(encoder, directory, read)
