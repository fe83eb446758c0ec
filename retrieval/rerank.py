"""Cross-encoder reranking of a shortlist (sentence-transformers `CrossEncoder`, by name or path).

No cross-encoder checkpoint ships with the project's dependencies; a model must be given by a local
path or a name already in the Hugging Face cache (the hub is never contacted: HF_HUB_OFFLINE=1).
"""
from __future__ import annotations

import os
import threading
from typing import Sequence

from schemas.errors import UsageError


class CrossEncoderReranker:
    """Scores (query, text) pairs jointly; higher is more relevant. One call at a time: a server's
    threads share it, and a fast tokenizer refuses concurrent calls."""

    def __init__(self, model: str, batch_size: int = 32, max_length: int = 512):
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        from sentence_transformers import CrossEncoder

        from transforms.embed.encoder import resolve_model_path

        try:
            self.model = CrossEncoder(resolve_model_path(model), max_length=max_length)
        except (OSError, ValueError) as exc:
            raise UsageError(f"--rerank: cannot load cross-encoder {model!r} offline ({exc.__class__.__name__}); "
                             "give a local model directory") from None
        self.name = model
        self.batch_size = batch_size
        self._lock = threading.Lock()

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        with self._lock:
            scores = self.model.predict([(query, t or "") for t in texts], batch_size=self.batch_size,
                                        show_progress_bar=False)
        return [float(s) for s in scores]


def agreement(query: str, context: str) -> float:
    """How much of the query the statement's context (title, section path, paper title) shares, 0..1:
    rapidfuzz's token-set ratio, so word order and extra words in either do not count against it."""
    from rapidfuzz import fuzz, utils

    return fuzz.token_set_ratio(query, context, processor=utils.default_process) / 100 if context else 0.0


def rerank_by_agreement(query: str, ranked: Sequence[int], contexts: Sequence[str], weight: float,
                        rrf_k: int = 60) -> list[tuple[int, float]]:
    """A model-free second stage: each candidate's first-stage reciprocal rank plus `weight` times its
    agreement with the query on the scale of a first place, best first (ties keep first-stage order)."""
    scored = [(doc, 1 / (rrf_k + position) + weight * agreement(query, context) / (rrf_k + 1))
              for position, (doc, context) in enumerate(zip(ranked, contexts), start=1)]
    return sorted(scored, key=lambda item: -item[1])
