"""benchmarks/retrieval_quality.py's embedding cache and margin intervals, with the packaged model."""
import numpy as np
import pytest

from benchmarks import retrieval_quality
from benchmarks.retrieval_quality import VectorCache, bootstrap_interval, unit
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
