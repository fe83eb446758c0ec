"""benchmarks/retrieval_quality.py's embedding cache and margin intervals, with the packaged model."""
import json

import numpy as np
import pytest

from benchmarks import retrieval_quality
from benchmarks.retrieval_quality import VectorCache, bootstrap_interval, statement_sample, summarize, unit
from transforms.embed.encoder import DEFAULT_MODEL
from transforms.embed import EmbedConfig, Encoder


def test_vectors_are_cached_by_text_so_a_variant_embeds_only_its_new_texts(tmp_path):
    encoder = Encoder(EmbedConfig().encoder_config())
    first, embedded = VectorCache(tmp_path, "m").encode(encoder, ["Every group is a set.", "Primes are infinite."])
    assert embedded == 2 and first.shape == (2, 384)
    reopened = VectorCache(tmp_path, "m")                     # a later run reads what the first one wrote
    texts = ["Primes are infinite.", "A field has no zero divisors.", "Every group is a set."]
    again, embedded = reopened.encode(encoder, texts)
    assert embedded == 1
    assert np.allclose(again, unit(encoder.encode_documents(texts)), atol=1e-4)
    assert np.allclose(again[[2, 0]], first, atol=1e-6)
    assert VectorCache(tmp_path, "another model").encode(encoder, texts[:1])[1] == 1


class StopsAfter:
    """The real encoder, interrupted (as a killed run is) once it has embedded `calls` chunks."""

    def __init__(self, encoder: Encoder, calls: int):
        self.encoder, self.calls = encoder, calls

    def encode_documents(self, texts):
        if self.calls == 0:
            raise KeyboardInterrupt
        self.calls -= 1
        return self.encoder.encode_documents(texts)


def test_an_interrupted_run_keeps_the_chunks_it_embedded(tmp_path, monkeypatch):
    monkeypatch.setattr(retrieval_quality, "CACHE_CHUNK", 2)
    encoder = Encoder(EmbedConfig().encoder_config())
    texts = ["Every group is a set.", "Primes are infinite.", "A field has no zero divisors.", "Rings have units."]
    with pytest.raises(KeyboardInterrupt):
        VectorCache(tmp_path, "m").encode(StopsAfter(encoder, calls=1), texts)
    assert not list(tmp_path.rglob("*.partial"))
    kept = VectorCache(tmp_path, "m")
    assert set(kept.rows) == {kept.key(t) for t in sorted(texts, key=len)[:2]}   # shortest first: chunks pad little
    resumed, embedded = kept.encode(encoder, texts)
    assert embedded == 2                                       # only the chunk the interrupted run never reached
    assert np.allclose(resumed, unit(encoder.encode_documents(texts)), atol=1e-4)


def test_bootstrap_interval_of_a_margin():
    assert bootstrap_interval([([1, 2, None], [1, 2, None])]) == " [+0.000, +0.000]"
    low, high = (float(x) for x in bootstrap_interval([([1] * 30, [2] * 15 + [None] * 15)]).strip(" []").split(","))
    assert 0 < low < 0.75 < high <= 1.0
    assert bootstrap_interval([([1], [])]) == ""


def test_each_models_best_configuration_is_set_against_the_default(tmp_path, capsys):
    def cell(model, template, mode, name, ranks):
        mrr = sum(1 / r for r in ranks if r) / len(ranks)
        return {"set": name, "model": model, "template": template, "mode": mode, "n": len(ranks),
                "theorem": {"mrr@20": mrr}, "paper": {"mrr@20": mrr}, "theorem_ranks": ranks}
    ranks = {"named-tuning": ([1, 2], [2, 2], [1, 1]), "sections-tuning": ([2, None], [2, 4], [1, 2]),
             "named-heldout": ([1, None], [1, 1], [2, 2])}    # default, the other model's vector, its hybrid
    cells = [c for name, (default, other, hybrid) in ranks.items() for c in (
        cell(DEFAULT_MODEL, "context-v1", "vector", name, default), cell("dir/other", "plain", "vector", name, other),
        cell("dir/other", "plain", "hybrid w=0.25", name, hybrid))]
    path = tmp_path / "cells.jsonl"
    path.write_text("".join(json.dumps(c) + "\n" for c in cells))
    summarize([str(path)])
    out = capsys.readouterr().out
    assert "(best mean theorem MRR@20): ('dir/other', 'plain', 'hybrid w=0.25')" in out
    assert "other's best" not in out                         # the overall choice is that model's best already
    cells = [c for c in cells if c["mode"] == "vector"]
    path.write_text("".join(json.dumps(c) + "\n" for c in cells))
    summarize([str(path)])
    out = capsys.readouterr().out.split("chosen on")[1]
    assert f"('{DEFAULT_MODEL}', 'context-v1', 'vector')" in out.split("\n")[0]     # the default chosen
    assert "other's best on the tuning sets: ('dir/other', 'plain', 'vector') (mean 0.438, the default's 0.500)" in out
    assert out.count("named-heldout 1.000 - 0.500 = +0.500 [+0.000, +1.000]") == 1


def test_the_statement_sample_holds_every_gold_and_evenly_spaced_others():
    assert statement_sample({3, 7}, 10, 0) == list(range(10))
    assert statement_sample({3, 7}, 10, 2) == [3, 7] == statement_sample({3, 7}, 10, 1)
    assert statement_sample({3, 7}, 10, 6) == [0, 2, 3, 5, 7, 8]       # others 0 1 2 4 5 6 8 9, every second
    assert statement_sample({3, 7}, 10, 50) == list(range(10))
