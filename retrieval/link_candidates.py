"""Embedding candidates for `thmforge link` from the corpus's vector index (`DIR/index/`).

The link job (pipelines/) may not import retrieval/, so the runner opens this and hands it down
as the job's `neighbours` callable. It only shortlists: the job re-scores every shortlisted pair
on the full-precision vectors of the theorems files, so the threshold is decided exactly there.
A query whose shortlist is full of statements above the threshold asks again for four times as
many, so a statement with many restatements keeps them all.
"""
from __future__ import annotations

import bisect
import pathlib
from typing import Optional

import numpy as np

from retrieval import vector_index
from retrieval.search import REPRESENTATIONS

SLACK = 0.01          # shortlist below the threshold too: the index's stored vectors are float32 copies
MAX_SHORTLIST = 65_536
FIRST_SHORTLIST = 200  # the first ask per query (search re-scores more); widened when full of matches
INDEX_FROM_ROWS = 10_000   # `--embedding-search auto` uses the index from this many rows (measured crossover)
PQ_MARGIN = 0.2       # PQ scores of 48-byte codes run low (at 20k rows, cosine >= 0.75: by 0.03 typically, 0.15 at most)


class IndexNeighbours:
    """Picklable (paths only); opens the index memory-mapped on first use in each worker."""

    def __init__(self, root: str, representation: str, threshold: float, rows: int,
                 shortlist: int = FIRST_SHORTLIST):
        self.root = root
        self.rows = rows
        self.representation = representation
        self.threshold = threshold
        self.shortlist = shortlist
        self._index: Optional[vector_index.VectorIndex] = None

    def __getstate__(self) -> dict:
        return {**self.__dict__, "_index": None}

    def _open(self) -> vector_index.VectorIndex:
        if self._index is None:
            faiss = vector_index.load_faiss()

            root = pathlib.Path(self.root)
            shards = vector_index.fresh_plan(root)
            index = vector_index.open_index(root, self.representation, shards) if shards is not None else None
            if index is None:
                raise RuntimeError(f"{self.root}: the {self.representation} index no longer covers the corpus")
            faiss.omp_set_num_threads(1)    # a Beam worker per core parallelizes; OpenMP on a shared core spins
            self._index = index
        return self._index

    def _location(self, doc: int) -> tuple[str, int]:
        index = self._open()
        shard = index.shards[bisect.bisect_right(index.bases, doc) - 1]
        return shard.file, doc - shard.base

    def _shortlists(self, queries: np.ndarray, k: int, nprobe: int, floor: float) -> tuple[np.ndarray, np.ndarray]:
        """(docs, scores) of each query's `k` nearest by the PQ codes, one faiss call for the batch.
        A candidate whose PQ score comes within `PQ_MARGIN` of `floor` is re-scored on its stored
        vector; the others keep their PQ score, which only says they are below (-inf: none found)."""
        faiss = vector_index.load_faiss()

        index = self._open()
        params = faiss.SearchParametersIVF()
        params.nprobe = nprobe
        approximate, docs = index.index.search(queries, k, params=params)
        scores = np.where(docs >= 0, approximate, -np.inf).astype(np.float32)
        near = np.nonzero(scores >= floor - PQ_MARGIN)
        if len(near[0]):
            stored = index.stored(docs[near])
            exact = np.einsum("ij,ij->i", stored, queries[near[0]])
            scores[near] = np.where(stored.any(axis=1), exact, -np.inf)   # a doc without a vector is stored as zeros
        return docs, scores

    def __call__(self, queries: np.ndarray) -> list[list[tuple[str, int]]]:
        """Per query, the (theorems file relative to the corpus, row) of every statement the index
        finds within `SLACK` of the threshold. The batch is searched at once; the queries whose
        every candidate is above the floor ask again, for four times as many over four times the
        lists, until one falls below it or the whole index is searched."""
        index, floor = self._open(), self.threshold - SLACK
        queries = vector_index.unit_rows(np.asarray(queries, dtype=np.float32).reshape(-1, index.dim))
        found: list[list[tuple[str, int]]] = [[] for _ in queries]
        pending = np.arange(len(queries))
        k, nprobe = min(self.shortlist, index.doc_limit), index.nprobe
        while len(pending):
            docs, scores = self._shortlists(queries[pending], k, nprobe, floor)
            above = scores >= floor
            for query, row_docs, row_above in zip(pending, docs, above):
                found[query] = [self._location(int(doc)) for doc in row_docs[row_above]]
            if k >= MAX_SHORTLIST or k >= index.doc_limit and nprobe >= index.nlist:   # nothing more to ask
                break
            unsure = above.any(axis=1) & (above | (docs < 0)).all(axis=1)   # nothing seen below the floor
            pending, k, nprobe = pending[unsure], min(4 * k, index.doc_limit, MAX_SHORTLIST), min(4 * nprobe, index.nlist)
        return found


def open_neighbours(root: str, threshold: float) -> Optional[IndexNeighbours]:
    """The index of the vectors link reads (statement vectors when the corpus has them, else
    description vectors) when it covers exactly the corpus's committed theorems files; else None."""
    from retrieval.catalog import read_manifest

    columns = (read_manifest(pathlib.Path(root)).get("embedding") or {}).get("columns") or ["embedding"]
    representation = "statement" if REPRESENTATIONS["statement"] in columns else "description"
    shards = vector_index.fresh_plan(pathlib.Path(root))
    if shards is None or vector_index.open_index(pathlib.Path(root), representation, shards) is None:
        return None
    return IndexNeighbours(root, representation, threshold, sum(s.rows for s in shards))
