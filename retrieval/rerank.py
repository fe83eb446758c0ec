"""Cross-encoder reranking of a shortlist (sentence-transformers `CrossEncoder`, by name or path).

No cross-encoder checkpoint ships with the project's dependencies; a model must be given by a local
path or a name already in the Hugging Face cache (the hub is never contacted: HF_HUB_OFFLINE=1).
"""
from __future__ import annotations

import os
from typing import Sequence

from schemas.errors import UsageError


class CrossEncoderReranker:
    """Scores (query, text) pairs jointly; higher is more relevant."""

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

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        scores = self.model.predict([(query, t or "") for t in texts], batch_size=self.batch_size,
                                    show_progress_bar=False)
        return [float(s) for s in scores]
