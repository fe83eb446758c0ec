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


def _gelu(x: np.ndarray) -> np.ndarray:
    """Exact GELU, 0.5 x (1 + erf(x / sqrt 2)), with erf to 1.5e-7 (Abramowitz and Stegun 7.1.26:
    NumPy has none and SciPy costs an import), in float32 and in place (no temporaries)."""
    a1, a2, a3, a4, a5, p = _ERF
    z = np.abs(x) * np.float32(2 ** -0.5)
    t = z * np.float32(p)
    t += 1
    np.reciprocal(t, out=t)
    tail = t * np.float32(a5)           # 1 - erf(z) = tail polynomial of t times exp(-z^2)
    for a in (a4, a3, a2, a1):
        tail += np.float32(a)
        tail *= t
    np.square(z, out=z)
    np.negative(z, out=z)
    tail *= np.exp(z, out=z)
    np.copysign(tail, x, out=tail)
    out = np.sign(x)                    # 1 + erf(x / sqrt 2) = 1 + sign(x) - sign(x) (1 - erf(z))
    out += 1
    out -= tail
    out *= x
    out *= np.float32(0.5)
    return out


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    centred = x - x.mean(-1, keepdims=True)
    scale = 1.0 / np.sqrt((centred * centred).mean(-1, keepdims=True) + eps)
    return centred * scale * weight + bias


def _json(path: pathlib.Path) -> Optional[dict]:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


class BertQueryEncoder:
    """A sentence-transformers BERT model with mean pooling, run in NumPy."""

    def __init__(self, root: pathlib.Path, config: dict, max_length: int, normalize: bool, prompt: str):
        from safetensors.numpy import load_file
        from threadpoolctl import ThreadpoolController
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
        for i in range(self.layers):    # query, key and value as one product
            names = [f"{self.prefix}encoder.layer.{i}.attention.self.{p}" for p in ("query", "key", "value")]
            self.weights[f"{self.prefix}encoder.layer.{i}.attention.qkv.weight"] = np.concatenate(
                [self.weights.pop(n + ".weight") for n in names], axis=1)
            self.weights[f"{self.prefix}encoder.layer.{i}.attention.qkv.bias"] = np.concatenate(
                [self.weights.pop(n + ".bias") for n in names])
        self.heads = int(config["num_attention_heads"])
        self.eps = float(config.get("layer_norm_eps", 1e-12))
        self.normalize = normalize
        self.prompt = prompt
        self.dim = int(config["hidden_size"])
        self._blas = ThreadpoolController()

    def _w(self, name: str) -> np.ndarray:
        return self.weights[self.prefix + name]

    def _dense(self, x: np.ndarray, name: str) -> np.ndarray:
        return x @ self._w(name + ".weight") + self._w(name + ".bias")

    def _attend(self, qkv: np.ndarray, lengths: list[int]) -> np.ndarray:
        """Self-attention of each query's tokens among themselves; `qkv`: every token's query, key
        and value, the queries' tokens one after the other."""
        width = qkv.shape[1] // 3
        head = width // self.heads
        scale = np.float32(1 / np.sqrt(head))
        context = np.empty((len(qkv), width), dtype=np.float32)
        start = 0
        for n in lengths:
            q, k, v = qkv[start:start + n].reshape(n, 3, self.heads, head).transpose(1, 2, 0, 3)
            scores = (q * scale) @ k.transpose(0, 2, 1)
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            context[start:start + n] = ((scores / scores.sum(-1, keepdims=True)) @ v).transpose(1, 0, 2).reshape(n, width)
            start += n
        return context

    def _forward(self, texts: Sequence[str]) -> np.ndarray:
        """Mean-pooled embeddings of `texts`. The queries' tokens are stacked, so every dense layer
        is one matrix product for the batch (no padding); only attention goes query by query."""
        encodings = self.tokenizer.encode_batch([self.prompt + t for t in texts])
        lengths = [len(e.ids) for e in encodings]
        ids = np.concatenate([np.asarray(e.ids, dtype=np.int64) for e in encodings])
        positions = np.concatenate([np.arange(n) for n in lengths])
        x = (self._w("embeddings.word_embeddings.weight")[ids]
             + self._w("embeddings.position_embeddings.weight")[positions]
             + self._w("embeddings.token_type_embeddings.weight")[0])
        x = _layer_norm(x, self._w("embeddings.LayerNorm.weight"), self._w("embeddings.LayerNorm.bias"), self.eps)
        for i in range(self.layers):
            layer = f"encoder.layer.{i}."
            context = self._attend(self._dense(x, layer + "attention.qkv"), lengths)
            x = _layer_norm(x + self._dense(context, layer + "attention.output.dense"),
                            self._w(layer + "attention.output.LayerNorm.weight"),
                            self._w(layer + "attention.output.LayerNorm.bias"), self.eps)
            inner = _gelu(self._dense(x, layer + "intermediate.dense"))
            x = _layer_norm(x + self._dense(inner, layer + "output.dense"), self._w(layer + "output.LayerNorm.weight"),
                            self._w(layer + "output.LayerNorm.bias"), self.eps)
        pooled = np.add.reduceat(x, np.cumsum([0] + lengths[:-1]), axis=0) / np.asarray(lengths, np.float32)[:, None]
        if self.normalize:
            pooled /= np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), np.float32(1e-12))
        return pooled.astype(np.float32, copy=False)

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        """float32 throughout (float64 scalars would promote every product to float64: twice the
        CPU), on one BLAS thread: a query's products are small, and OpenBLAS's threads spin
        waiting for a core on a busy machine (700 ms of CPU a query at load 12, against 40)."""
        if not texts:
            return np.zeros((0, self.dim), np.float32)
        with self._blas.limit(limits=1, user_api="blas"):
            return self._forward(texts)


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
