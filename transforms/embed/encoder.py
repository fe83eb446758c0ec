"""The sentence-transformers encoder shared by the embedding stage and query-time search.

The corpus records `Encoder.manifest()`; search rebuilds the same encoder from it, so queries and
documents always use one model, one prompt convention and one normalization.
"""
from __future__ import annotations

import dataclasses
import os
from typing import Optional, Sequence

import numpy as np

from transforms.models import DEFAULT_MODEL, resolve_model_path  # noqa: F401  (re-exported)


@dataclasses.dataclass(frozen=True)
class EncoderConfig:
    model: str = DEFAULT_MODEL
    query_prompt: str = ""          # prepended to queries (instruction-tuned embedders)
    document_prompt: str = ""       # prepended to documents
    normalize: bool = True
    batch_size: int = 64
    device: Optional[str] = None    # None: sentence-transformers picks (cuda when available)
    fp16: bool = False              # half precision (GPU only)
    max_tokens: Optional[int] = None    # truncate texts at this many tokens (None: the model's max_seq_length)

    def manifest(self, dim: int) -> dict:
        return {"model": self.model, "dim": dim, "query_prompt": self.query_prompt,
                "document_prompt": self.document_prompt, "normalize": self.normalize}


class Encoder:
    """Loads the model once (per process) and encodes queries or documents to float32 vectors."""

    def __init__(self, config: EncoderConfig = EncoderConfig()):
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        from sentence_transformers import SentenceTransformer

        self.config = config
        self.model = SentenceTransformer(resolve_model_path(config.model), device=config.device)
        if config.fp16 and self.model.device.type == "cuda":
            self.model.half()
        if config.max_tokens is not None:
            self.model.max_seq_length = min(self.model.max_seq_length, config.max_tokens)
        dimension = getattr(self.model, "get_embedding_dimension", None) or self.model.get_sentence_embedding_dimension
        self.dim = int(dimension())

    def _encode(self, texts: Sequence[str], prompt: str) -> np.ndarray:
        vectors = self.model.encode(
            [prompt + t for t in texts] if prompt else list(texts),
            batch_size=self.config.batch_size,
            normalize_embeddings=self.config.normalize,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return vectors.astype(np.float32, copy=False)

    def encode_documents(self, texts: Sequence[str]) -> np.ndarray:
        return self._encode(texts, self.config.document_prompt)

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._encode(texts, self.config.query_prompt)


def model_dimension(name_or_path: str) -> Optional[int]:
    """The output dimension read from a local sentence-transformers folder's configs, without loading weights.

    None when the folder is not local or its layout is not recognized (then load the model to know).
    """
    import json
    import pathlib

    root = pathlib.Path(resolve_model_path(name_or_path))
    try:
        modules = json.loads((root / "modules.json").read_text())
    except (OSError, ValueError):
        return None
    for module in reversed(modules):
        kind = module.get("type", "")
        config_path = root / module.get("path", "") / "config.json"
        if kind.endswith("Dense"):
            try:
                return int(json.loads(config_path.read_text())["out_features"])
            except (OSError, ValueError, KeyError):
                return None
        if kind.endswith("Pooling"):
            try:
                pooling = json.loads(config_path.read_text())
            except (OSError, ValueError):
                return None
            modes = sum(1 for k, v in pooling.items() if k.startswith("pooling_mode_") and v is True)
            return int(pooling["word_embedding_dimension"]) * max(1, modes)
    return None
