"""Query embedding for search with only what inference needs: `tokenizers`, `safetensors`, NumPy.

Importing sentence-transformers pulls in torch, transformers and the training stack (most of the
38 s a cold `thmforge search` took on a loaded machine). A query is one short sequence, so a BERT
forward pass in NumPy is milliseconds. This covers the sentence-transformers layout the corpus
uses by default (a BERT encoder, mean pooling, optional normalization, weights in
model.safetensors, a fast tokenizer.json); any other model returns None from `load` and search
falls back to `transforms.embed.encoder.Encoder`. Equality with that encoder is tested.
"""
from __future__ import annotations

import json
import pathlib
from typing import Optional, Sequence

import numpy as np

_ERF = (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429, 0.3275911)


def _erf(x: np.ndarray) -> np.ndarray:
    """erf to 1.5e-7 (Abramowitz and Stegun 7.1.26): NumPy has none and SciPy costs an import."""
    a1, a2, a3, a4, a5, p = _ERF
    sign = np.sign(x)
    x = np.abs(x)
    t = 1.0 / (1.0 + p * x)
    y = 1.0 - ((((a5 * t + a4) * t + a3) * t + a2) * t + a1) * t * np.exp(-x * x)
    return sign * y


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * weight + bias


def _json(path: pathlib.Path) -> Optional[dict]:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


class BertQueryEncoder:
    """A sentence-transformers BERT model with mean pooling, run in NumPy."""

    def __init__(self, root: pathlib.Path, config: dict, max_length: int, normalize: bool, prompt: str):
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        self.tokenizer = Tokenizer.from_file(str(root / "tokenizer.json"))
        self.tokenizer.enable_truncation(max_length)
        self.tokenizer.no_padding()
        # dense weights transposed once into aligned, contiguous arrays: multiplying by the
        # safetensors buffers' transposed views directly misses the BLAS path (13 ms a product)
        self.weights = {name: np.ascontiguousarray(w.T) if name.endswith("dense.weight") or name.endswith(
            (".query.weight", ".key.weight", ".value.weight")) else w
            for name, w in load_file(str(root / "model.safetensors")).items()}
        self.prefix = "" if "embeddings.word_embeddings.weight" in self.weights else "bert."
        self.layers = int(config["num_hidden_layers"])
        self.heads = int(config["num_attention_heads"])
        self.eps = float(config.get("layer_norm_eps", 1e-12))
        self.normalize = normalize
        self.prompt = prompt
        self.dim = int(config["hidden_size"])

    def _w(self, name: str) -> np.ndarray:
        return self.weights[self.prefix + name]

    def _dense(self, x: np.ndarray, name: str) -> np.ndarray:
        return x @ self._w(name + ".weight") + self._w(name + ".bias")

    def _encode_one(self, text: str) -> np.ndarray:
        ids = np.asarray(self.tokenizer.encode(self.prompt + text).ids, dtype=np.int64)
        x = (self._w("embeddings.word_embeddings.weight")[ids]
             + self._w("embeddings.position_embeddings.weight")[: len(ids)]
             + self._w("embeddings.token_type_embeddings.weight")[0])
        x = _layer_norm(x, self._w("embeddings.LayerNorm.weight"), self._w("embeddings.LayerNorm.bias"), self.eps)
        n, width = x.shape
        head = width // self.heads
        for i in range(self.layers):
            layer = f"encoder.layer.{i}."
            q, k, v = (self._dense(x, layer + f"attention.self.{p}").reshape(n, self.heads, head).transpose(1, 0, 2)
                       for p in ("query", "key", "value"))
            scores = q @ k.transpose(0, 2, 1) / np.sqrt(head)
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            context = (scores / scores.sum(-1, keepdims=True)) @ v
            attended = self._dense(context.transpose(1, 0, 2).reshape(n, width), layer + "attention.output.dense")
            x = _layer_norm(x + attended, self._w(layer + "attention.output.LayerNorm.weight"),
                            self._w(layer + "attention.output.LayerNorm.bias"), self.eps)
            inner = self._dense(x, layer + "intermediate.dense")
            inner = 0.5 * inner * (1.0 + _erf(inner / np.sqrt(2.0)))
            x = _layer_norm(x + self._dense(inner, layer + "output.dense"), self._w(layer + "output.LayerNorm.weight"),
                            self._w(layer + "output.LayerNorm.bias"), self.eps)
        pooled = x.mean(0)
        if self.normalize:
            pooled = pooled / max(float(np.linalg.norm(pooled)), 1e-12)
        return pooled.astype(np.float32)

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        return np.stack([self._encode_one(t) for t in texts]) if texts else np.zeros((0, self.dim), np.float32)


def load(model_path: str, *, normalize: bool, prompt: str) -> Optional[BertQueryEncoder]:
    """The NumPy encoder for the model folder at `model_path`, or None when its layout is not the
    one it reproduces exactly (then use the sentence-transformers encoder)."""
    root = pathlib.Path(model_path)
    modules = _json(root / "modules.json")
    config = _json(root / "config.json")
    if not modules or not config or not (root / "tokenizer.json").is_file() or not (root / "model.safetensors").is_file():
        return None
    kinds = [m.get("type", "").rsplit(".", 1)[-1] for m in modules]
    if kinds not in (["Transformer", "Pooling"], ["Transformer", "Pooling", "Normalize"]):
        return None
    if modules[0].get("path"):
        return None
    pooling = _json(root / modules[1].get("path", "") / "config.json") or {}
    modes = {k for k, v in pooling.items() if k.startswith("pooling_mode_") and v is True}
    if modes != {"pooling_mode_mean_tokens"}:
        return None
    if (config.get("model_type") != "bert" or config.get("hidden_act") != "gelu"
            or config.get("position_embedding_type", "absolute") != "absolute"):
        return None
    max_length = int((_json(root / "sentence_bert_config.json") or {}).get("max_seq_length")
                     or config.get("max_position_embeddings", 512))
    return BertQueryEncoder(root, config, max_length, normalize or "Normalize" in kinds, prompt)
