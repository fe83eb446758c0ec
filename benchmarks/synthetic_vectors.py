"""Embedding-like vectors at any scale: the packaged model's embeddings of real LaTeX paragraphs
(`/work/shared/corpora`, else the repository's samples), mixed pairwise and perturbed.

Uniform noise has no clusters and makes every index look bad (or, at low dimension, good); real
embeddings cluster by topic. Each synthetic row is base_i + u * base_j + noise, normalized, for
random real embeddings i and j, u in [0, 0.6) and Gaussian noise of `NOISE` per coordinate, so rows
fall in topic clusters with a continuum between them. Queries are perturbed held-out embeddings.
"""
from __future__ import annotations

import os
import pathlib
import re

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
TEXT_ROOTS = (ROOT.parent / "shared" / "corpora", ROOT / "samples" / "src")
NOISE = 0.03


def real_paragraphs(limit: int, min_chars: int = 80, max_chars: int = 400) -> list[str]:
    """Up to `limit` distinct paragraphs of LaTeX (blank-line separated) from the text roots."""
    seen: dict[str, None] = {}
    for root in TEXT_ROOTS:
        for path in sorted(root.rglob("*.tex")) if root.is_dir() else ():
            text = path.read_text(encoding="utf-8", errors="replace")
            for paragraph in re.split(r"\n\s*\n", text):
                paragraph = " ".join(paragraph.split())
                if min_chars <= len(paragraph) <= max_chars and not paragraph.startswith("%"):
                    seen.setdefault(paragraph)
                    if len(seen) >= limit:
                        return list(seen)
    return list(seen)


def too_few_paragraphs(found: int, needed: int) -> str:
    """The error for text roots too small: fewer base texts would cluster the corpus around fewer
    points, a different (harder) benchmark that still runs (at 10M rows, 67 bases gave recall@10 0.87)."""
    roots = ", ".join(str(root) for root in TEXT_ROOTS)
    return f"{found} paragraphs of LaTeX under {roots}, {needed} needed (is ../shared/corpora there?)"


def real_embeddings(count: int, cache: pathlib.Path | None = None) -> np.ndarray:
    """The packaged model's unit embeddings of `count` real paragraphs (cached as .npy when asked)."""
    if cache is not None and cache.is_file():
        cached = np.load(cache)
        if len(cached) >= count:
            return cached[:count]
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from transforms.embed.encoder import Encoder

    texts = real_paragraphs(count)
    if len(texts) < count:
        raise ValueError(too_few_paragraphs(len(texts), count))
    vectors = Encoder().encode_documents(texts)
    if cache is not None:
        np.save(cache, vectors)
    return vectors


def perturbed(base: np.ndarray, rows: int, rng: np.random.Generator, chunk: int = 200_000):
    """Yield (rows, dim) float32 unit blocks of `rows` embedding-like vectors made from `base`."""
    dim = base.shape[1]
    for start in range(0, rows, chunk):
        n = min(chunk, rows - start)
        i = rng.integers(0, len(base), n)
        j = rng.integers(0, len(base), n)
        u = rng.uniform(0, 0.6, (n, 1)).astype(np.float32)
        block = base[i] + u * base[j] + rng.normal(0, NOISE, (n, dim)).astype(np.float32)
        block /= np.linalg.norm(block, axis=1, keepdims=True)
        yield block.astype(np.float32, copy=False)
