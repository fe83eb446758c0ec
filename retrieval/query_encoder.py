"""Query embedding for search with only what inference needs: `tokenizers`, `safetensors`, NumPy.

Importing sentence-transformers pulls in torch, transformers and the training stack (most of the
38 s a cold `thmforge search` took on a loaded machine). A query is one short sequence, so a BERT
forward pass in NumPy is milliseconds. This covers the sentence-transformers layouts the corpus
uses (a BERT or MPNet encoder, mean pooling, optional normalization, weights in
model.safetensors, a fast tokenizer.json); any other model returns None from `load` and search
falls back to `transforms.embed.encoder.Encoder`. Equality with that encoder is tested.
"""
from __future__ import annotations

import concurrent.futures
import functools
import json
import math
import os
import pathlib
import threading
from typing import NamedTuple, Optional, Sequence

import numpy as np

_ERF = (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429, 0.3275911)
GELU_ROWS = 64          # GELU's temporaries for 64 tokens (64 x 1536 floats) stay in a core's L2
MIN_PART_ROWS = 32      # tokens a thread at least: below, waking a thread costs more than it saves
MAX_THREADS = 4
# the row sums of exp(scores) that need no shift: the largest term is then a normal float32
# (above 1e-30 / the row's length), so terms too small to matter are all that can underflow
SOFTMAX_SUMS = (1e-30, 1e30)
# MPNet's names for what a BERT layer has too: its layers differ only by a relative position bias
MPNET_NAMES = {".attention.attn.q.": ".attention.self.query.", ".attention.attn.k.": ".attention.self.key.",
               ".attention.attn.v.": ".attention.self.value.", ".attention.attn.o.": ".attention.output.dense.",
               ".attention.LayerNorm.": ".attention.output.LayerNorm."}
MPNET_MAX_DISTANCE = 128    # relative positions beyond share MPNet's last bucket
# runnable tasks besides the caller that still leave a core free: on an idle 2-core machine
# /proc/loadavg counts a second one in 7% of readings (kernel threads, a request thread handing its
# query over), and declining to split then set serve's p95 (55 against 48 ms, p99 72-79 against 53-55)
TRANSIENT_TASKS = 1


def usable_cores() -> int:
    """The cores this process may run on (its affinity, where the platform has one)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def spare_cores(cores: int, loadavg: Optional[str] = None) -> int:
    """Cores free right now: `cores` less the threads runnable at this instant (the fourth field of
    /proc/loadavg, `runnable/total`), the caller included, allowing for TRANSIENT_TASKS more; none
    where that is not known."""
    try:
        if loadavg is None:
            loadavg = pathlib.Path("/proc/loadavg").read_text()
        running = int(loadavg.split()[3].split("/")[0])
    except (OSError, ValueError, IndexError):
        return 0
    return max(0, cores - running + TRANSIENT_TASKS)


def part_count(rows: int, threads: int, heads: int) -> int:
    """Threads to share a pass over `rows` tokens: at most `threads`, each with at least
    MIN_PART_ROWS tokens' worth of work, and a divisor of `heads` (each takes whole heads)."""
    count = max(1, min(threads, rows // MIN_PART_ROWS))
    while heads % count:
        count -= 1
    return count


def _gelu(x: np.ndarray) -> np.ndarray:
    """Exact GELU, 0.5 x (1 + erf(x / sqrt 2)), with erf to 1.5e-7 (Abramowitz and Stegun 7.1.26:
    NumPy has none and SciPy costs an import), in float32 and in place. With z = |x| / sqrt 2,
    1 - erf(z) = tail(t) exp(-z^2) for t = 1 / (1 + p z), so GELU is max(x, 0) - |x| tail / 2."""
    a1, a2, a3, a4, a5, p = _ERF
    size = np.abs(x)
    t = size * np.float32(p * 2 ** -0.5)
    t += 1
    np.reciprocal(t, out=t)
    half_tail = t * np.float32(a5 / 2)
    for a in (a4, a3, a2, a1):
        half_tail += np.float32(a / 2)
        half_tail *= t
    half_tail *= size
    np.square(size, out=size)
    size *= np.float32(-0.5)
    half_tail *= np.exp(size, out=size)
    np.maximum(x, 0, out=x)
    x -= half_tail
    return x


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    """Layer normalization of the rows of `x`, in place. Row means as a matrix-vector product:
    a BLAS kernel, where NumPy's reduction along short rows is several times slower."""
    average = np.full(x.shape[-1], 1 / x.shape[-1], np.float32)
    x -= np.matmul(x, average)[:, None]
    deviation = np.matmul(np.square(x), average)[:, None]
    deviation += np.float32(eps)
    np.sqrt(deviation, out=deviation)
    x /= deviation
    x *= weight
    x += bias
    return x


def _attention_weights(q: np.ndarray, k: np.ndarray, ones: np.ndarray,
                       bias: Optional[np.ndarray] = None) -> tuple[np.ndarray, np.ndarray]:
    """Softmax of the scores q k (plus `bias`) along each row, as exp(scores) and the rows' sums (dividing the
    product with the values by the sums instead: head-wide rows, not n-wide). A row's maximum is
    subtracted first only where a sum left SOFTMAX_SUMS (an overflow, or every term vanishing):
    softmax is the same whatever a row is shifted by and float32's exp keeps its relative precision
    in between, so the usual guard's two passes over the scores are skipped."""
    scores = np.matmul(q, k)
    if bias is not None:
        scores += bias
    with np.errstate(over="ignore", under="ignore"):
        weights = np.exp(scores)
    sums = np.matmul(weights, ones)
    low, high = SOFTMAX_SUMS
    if not (sums.min() >= low and sums.max() <= high):
        scores -= scores.max(-1, keepdims=True)
        weights = np.exp(scores, out=scores)
        sums = np.matmul(weights, ones)
    return weights, sums


def relative_position_buckets(distances: np.ndarray, buckets: int, max_distance: int = MPNET_MAX_DISTANCE) -> np.ndarray:
    """MPNet's bucket for each key's position less its query's: half the buckets for keys
    before the query, half for the others; in each, one bucket a distance below a quarter of the
    buckets, then logarithmic steps up to `max_distance`. In float32 like the reference, so that
    distances on a step's boundary (16, 32, 64) fall alike."""
    half = buckets // 2
    exact = half // 2
    bucket = np.where(distances > 0, half, 0)
    size = np.abs(distances)
    steps = (np.log(np.maximum(size, 1).astype(np.float32) / np.float32(exact))
             / np.float32(math.log(max_distance / exact)) * np.float32(half - exact))
    far = np.minimum(exact + steps.astype(np.int64), half - 1)
    return bucket + np.where(size < exact, size, far)


def _json(path: pathlib.Path) -> Optional[dict]:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


class LayerPart(NamedTuple):
    """One thread's share of a layer's dense weights (`BertQueryEncoder._layer_parts`)."""
    qkv: np.ndarray
    qkv_bias: np.ndarray
    output: np.ndarray
    inner: np.ndarray
    inner_bias: np.ndarray
    outer: np.ndarray


class BertQueryEncoder:
    """A sentence-transformers BERT or MPNet model with mean pooling, run in NumPy."""

    def __init__(self, root: pathlib.Path, config: dict, max_length: int, normalize: bool, prompt: str,
                 threads: Optional[int] = None):
        from safetensors.numpy import load_file
        from threadpoolctl import ThreadpoolController
        from tokenizers import Tokenizer

        self.tokenizer = Tokenizer.from_file(str(root / "tokenizer.json"))
        self.tokenizer.enable_truncation(max_length)
        self.tokenizer.no_padding()
        # dense weights transposed once into aligned, contiguous arrays: multiplying by the
        # safetensors buffers' transposed views directly misses the BLAS path (13 ms a product)
        renames = MPNET_NAMES.items() if config["model_type"] == "mpnet" else ()
        stored = {functools.reduce(lambda n, r: n.replace(*r), renames, name): w
                  for name, w in load_file(str(root / "model.safetensors")).items()}
        self.weights = {name: np.ascontiguousarray(w.T) if name.endswith("dense.weight") or name.endswith(
            (".query.weight", ".key.weight", ".value.weight")) else w for name, w in stored.items()}
        self.prefix = "" if "embeddings.word_embeddings.weight" in self.weights else "bert."
        self.layers = int(config["num_hidden_layers"])
        for i in range(self.layers):    # query, key and value as one product
            names = [f"{self.prefix}encoder.layer.{i}.attention.self.{p}" for p in ("query", "key", "value")]
            self.weights[f"{self.prefix}encoder.layer.{i}.attention.qkv.weight"] = np.concatenate(
                [self.weights.pop(n + ".weight") for n in names], axis=1)
            self.weights[f"{self.prefix}encoder.layer.{i}.attention.qkv.bias"] = np.concatenate(
                [self.weights.pop(n + ".bias") for n in names])
        self.heads = int(config["num_attention_heads"])
        # attention's 1 / sqrt(head size) folded into the query's weights and bias
        scale = np.float32(1 / np.sqrt(int(config["hidden_size"]) // self.heads))
        for i in range(self.layers):
            for part in ("weight", "bias"):
                qkv = self.weights[f"{self.prefix}encoder.layer.{i}.attention.qkv.{part}"]
                qkv[..., :int(config["hidden_size"])] *= scale
        self.eps = float(config.get("layer_norm_eps", 1e-12))
        self.normalize = normalize
        self.prompt = prompt
        self.dim = int(config["hidden_size"])
        self._ones = np.ones(max_length, np.float32)
        # MPNet: positions count from after the padding token's, and each head adds a bias by
        # relative position to its scores (one table: a query's is its top-left corner)
        self.first_position = int(config["pad_token_id"]) + 1 if config["model_type"] == "mpnet" else 0
        relative = self.weights.pop(self.prefix + "encoder.relative_attention_bias.weight", None)
        self._position_bias = None if relative is None else np.ascontiguousarray(relative[relative_position_buckets(
            np.arange(max_length)[None, :] - np.arange(max_length)[:, None], len(relative))].transpose(2, 0, 1))
        self._blas = ThreadpoolController()
        self.threads = threads
        self._cores = min(MAX_THREADS, usable_cores())
        self._pool: Optional[concurrent.futures.ThreadPoolExecutor] = None
        self._cut: dict[int, list[list[LayerPart]]] = {}

    def _w(self, name: str) -> np.ndarray:
        return self.weights[self.prefix + name]

    def _layer_parts(self, parts: int) -> list[list[LayerPart]]:
        """Each layer's weights cut into `parts` column groups, one a thread: query, key and value
        of heads/parts heads, their rows of the attention's output product, and a parts-th of the
        feed-forward's inner width with its rows of the second product. A thread's products then
        keep every token (a product over half the tokens costs 8-10% more per token) and read only
        its share of the weights; the threads add their partial outputs at two points a layer.
        Made once for each part count used (one part: the weights as they are)."""
        if parts not in self._cut:
            width, inner = self.dim // parts, self._w("encoder.layer.0.intermediate.dense.weight").shape[1] // parts
            layers = []
            for i in range(self.layers):
                def w(name: str) -> np.ndarray:
                    return self._w(f"encoder.layer.{i}.{name}")
                parts_of_layer = []
                for j in range(parts):
                    mine, inner_mine = slice(j * width, (j + 1) * width), slice(j * inner, (j + 1) * inner)
                    qkv_columns = np.concatenate([np.arange(self.dim)[mine] + m * self.dim for m in range(3)])
                    parts_of_layer.append(LayerPart(
                        qkv=w("attention.qkv.weight") if parts == 1 else w("attention.qkv.weight")[:, qkv_columns],
                        qkv_bias=w("attention.qkv.bias")[qkv_columns],
                        output=np.ascontiguousarray(w("attention.output.dense.weight")[mine]),
                        inner=np.ascontiguousarray(w("intermediate.dense.weight")[:, inner_mine]),
                        inner_bias=w("intermediate.dense.bias")[inner_mine],
                        outer=np.ascontiguousarray(w("output.dense.weight")[inner_mine])))
                layers.append(parts_of_layer)
            self._cut[parts] = layers
        return self._cut[parts]

    def _attend(self, qkv: np.ndarray, spans: list[tuple[int, int]], heads_from: int) -> np.ndarray:
        """Self-attention of every token among its own query's tokens, for the heads in `qkv` (from
        head number `heads_from` on): each token's query (already scaled, see `__init__`), key and
        value for those heads, the queries' tokens one after the other in `spans`. The heads at
        once: one stacked product a step."""
        width = qkv.shape[1] // 3
        head = self.dim // self.heads
        heads = width // head
        context = np.empty((len(qkv), width), dtype=np.float32)
        for start, stop in spans:
            n = stop - start
            q = qkv[start:stop, :width].reshape(n, heads, head).transpose(1, 0, 2)
            k = qkv[start:stop, width:2 * width].reshape(n, heads, head).transpose(1, 2, 0)
            v = qkv[start:stop, 2 * width:].reshape(n, heads, head).transpose(1, 0, 2)
            bias = None if self._position_bias is None else self._position_bias[heads_from:heads_from + heads, :n, :n]
            weights, sums = _attention_weights(q, k, self._ones[:n], bias)
            weighted = context[start:stop].reshape(n, heads, head).transpose(1, 0, 2)
            np.matmul(weights, v, out=weighted)
            weighted /= sums[..., None]
        return context

    def _add_parts(self, partials: np.ndarray, norm: str) -> np.ndarray:
        """The sum of the threads' partial products (the first thread's holds bias and residual
        too), layer-normalized; with one thread, in place."""
        total = partials[0] if len(partials) == 1 else np.sum(partials, axis=0)
        return _layer_norm(total, self._w(norm + ".weight"), self._w(norm + ".bias"), self.eps)

    @staticmethod
    def _share(product: np.ndarray, part: int, bias: np.ndarray, residual: np.ndarray) -> None:
        """Bias and residual go into the first thread's partial product only: added once."""
        if part == 0:
            product += bias
            product += residual

    def _layers(self, x: np.ndarray, spans: list[tuple[int, int]], layers: list[list[LayerPart]], part: int,
                partials: np.ndarray, barrier: Optional[threading.Barrier]) -> np.ndarray:
        """Run every layer, for this thread's `part` of the heads and inner width (`_layer_parts`),
        on every token of `x`; the hidden states after the last. Each thread writes its partial
        products into `partials[0 or 1, part]` and, with `barrier`, waits for the others before
        adding them (every thread adds them all: the same sum, no third wait). Two buffers: a
        thread can only write one again after every thread has read it."""
        try:
            for i, cut in enumerate(layers):
                layer, weights = f"encoder.layer.{i}.", cut[part]
                qkv = np.matmul(x, weights.qkv)
                qkv += weights.qkv_bias
                self._share(np.matmul(self._attend(qkv, spans, part * self.heads // len(cut)), weights.output,
                                      out=partials[0, part]), part, self._w(layer + "attention.output.dense.bias"), x)
                if barrier is not None:
                    barrier.wait()
                hidden = self._add_parts(partials[0], layer + "attention.output.LayerNorm")
                inner = np.matmul(hidden, weights.inner)
                inner += weights.inner_bias
                for block in range(0, len(inner), GELU_ROWS):
                    _gelu(inner[block:block + GELU_ROWS])
                self._share(np.matmul(inner, weights.outer, out=partials[1, part]), part,
                            self._w(layer + "output.dense.bias"), hidden)
                if barrier is not None:
                    barrier.wait()
                x = self._add_parts(partials[1], layer + "output.LayerNorm")
            return x
        except BaseException:
            if barrier is not None:     # the other threads stop waiting for this one
                barrier.abort()
            raise

    def _threads_now(self, rows: int) -> int:
        """The threads `threads` asked for; by default, this one and a thread for each core free now
        (`spare_cores`).
        Split, a pass costs more CPU (the threads' synchronization, each adding up all the partial
        products): worth it for an idle core, not when every core has work, by this process (other
        requests) or another."""
        if self.threads:
            return self.threads
        if rows < 2 * MIN_PART_ROWS or self._cores < 2:
            return 1
        return 1 + min(self._cores - 1, spare_cores(self._cores))

    def _forward(self, texts: Sequence[str]) -> np.ndarray:
        """Mean-pooled embeddings of `texts`. The queries' tokens are stacked, so every dense layer
        is one matrix product for the batch (no padding); only attention goes query by query. With
        at least 2 x MIN_PART_ROWS tokens the heads and inner width are split between threads
        (`_threads_now`, `part_count`; NumPy and BLAS release the GIL), each on one BLAS thread: a
        long query uses the idle cores without OpenBLAS's own threads, which spin while they wait
        (and OpenBLAS's thread count is the whole process's)."""
        encodings = self.tokenizer.encode_batch([self.prompt + t for t in texts])
        lengths = [len(e.ids) for e in encodings]
        ends = np.cumsum(lengths).tolist()
        spans = list(zip([0] + ends[:-1], ends))
        ids = np.concatenate([np.asarray(e.ids, dtype=np.int64) for e in encodings])
        positions = np.concatenate([np.arange(n) for n in lengths]) + self.first_position
        x = self._w("embeddings.word_embeddings.weight")[ids] + self._w("embeddings.position_embeddings.weight")[positions]
        if self.prefix + "embeddings.token_type_embeddings.weight" in self.weights:
            x += self._w("embeddings.token_type_embeddings.weight")[0]
        x = _layer_norm(x, self._w("embeddings.LayerNorm.weight"), self._w("embeddings.LayerNorm.bias"), self.eps)
        parts = part_count(len(x), self._threads_now(len(x)), self.heads)
        layers = self._layer_parts(parts)
        partials = np.empty((2, parts, len(x), self.dim), np.float32)
        if parts == 1:
            x = self._layers(x, spans, layers, 0, partials, None)
        else:
            if self._pool is None:
                self._pool = concurrent.futures.ThreadPoolExecutor(MAX_THREADS - 1, thread_name_prefix="query-encoder")
            barrier = threading.Barrier(parts)
            helpers = [self._pool.submit(self._layers, x, spans, layers, part, partials, barrier) for part in range(1, parts)]
            try:
                x = self._layers(x, spans, layers, 0, partials, barrier)
            except threading.BrokenBarrierError:
                pass                    # a helper failed: its error is raised below
            finally:
                concurrent.futures.wait(helpers)
            for helper in helpers:
                helper.result()
        pooled = np.add.reduceat(x, [start for start, _ in spans], axis=0) / np.asarray(lengths, np.float32)[:, None]
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


def load(model_path: str, *, normalize: bool, prompt: str, threads: Optional[int] = None,
         max_tokens: Optional[int] = None) -> Optional[BertQueryEncoder]:
    """The NumPy encoder for the model folder at `model_path`, or None when its layout is not the
    one it reproduces exactly (then use the sentence-transformers encoder). `threads`: split a
    long forward pass between this many threads (default: as many as there are idle cores, up to
    MAX_THREADS). `max_tokens`: truncate texts at this many tokens, where below the model's
    max_seq_length (as sentence-transformers does with a lower `max_seq_length`)."""
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
    if config.get("model_type") not in ("bert", "mpnet") or config.get("hidden_act") != "gelu":
        return None
    if config["model_type"] == "bert" and config.get("position_embedding_type", "absolute") != "absolute":
        return None
    max_length = int((_json(root / "sentence_bert_config.json") or {}).get("max_seq_length")
                     or config.get("max_position_embeddings", 512))
    if max_tokens is not None:
        max_length = min(max_length, max_tokens)
    return BertQueryEncoder(root, config, max_length, normalize or "Normalize" in kinds, prompt, threads)
