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


class IndexNeighbours:
    """Picklable (paths only); opens the index memory-mapped on first use in each worker."""

    def __init__(self, root: str, representation: str, threshold: float, shortlist: int = vector_index.SHORTLIST):
        self.root = root
        self.representation = representation
        self.threshold = threshold
        self.shortlist = shortlist
        self._index: Optional[vector_index.VectorIndex] = None

    def __getstate__(self) -> dict:
        return {**self.__dict__, "_index": None}

    def _open(self) -> vector_index.VectorIndex:
        if self._index is None:
            root = pathlib.Path(self.root)
            shards = vector_index.fresh_plan(root)
            index = vector_index.open_index(root, self.representation, shards) if shards is not None else None
            if index is None:
                raise RuntimeError(f"{self.root}: the {self.representation} index no longer covers the corpus")
            self._index = index
        return self._index

    def _location(self, doc: int) -> tuple[str, int]:
        index = self._open()
        shard = index.shards[bisect.bisect_right(index.bases, doc) - 1]
        return shard.file, doc - shard.base

    def __call__(self, queries: np.ndarray) -> list[list[tuple[str, int]]]:
        """Per query, the (theorems file relative to the corpus, row) of every statement the index
        finds within `SLACK` of the threshold. The batch is searched in one call; a query whose whole
        shortlist is above the floor asks again alone for four times as many."""
        index, floor = self._open(), self.threshold - SLACK
        found = []
        for query, hits in zip(queries, index.search_many(queries, self.shortlist)):
            k = self.shortlist
            while len(hits) == k and hits[-1][1] >= floor and k < MAX_SHORTLIST:
                k *= 4
                hits = index.search(query, k)
            found.append([self._location(doc) for doc, score in hits if score >= floor])
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
    return IndexNeighbours(root, representation, threshold)
