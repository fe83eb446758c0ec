"""Queries are embedded from at most QUERY_TOKENS tokens (the packaged model's training length),
by the NumPy encoder and the sentence-transformers fallback alike; statements keep 256."""
import argparse

import numpy as np
import pytest

from retrieval.catalog import open_catalog
from retrieval.search import QUERY_TOKENS, Searcher
from runners.cmd_search import add_searcher_arguments, searcher_from_args
from schemas.errors import UsageError
from transforms.models import resolve_model_path

LONG_QUERY = ("Let $X$ be a compact Hausdorff space and $f: X \\to \\mathbb{R}$ a continuous function. "
              "Then $f$ is bounded and attains its maximum and its minimum on $X$. ") * 5
SHORT_QUERY = "every bounded monotone sequence converges"


@pytest.fixture(scope="module")
def truncated_reference(encoder):
    """sentence-transformers itself, with max_seq_length lowered: the vectors a truncated query must get."""
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(resolve_model_path(encoder.config.model), device="cpu")

    def encode(text: str, tokens: int) -> np.ndarray:
        model.max_seq_length = tokens
        return model.encode([text], normalize_embeddings=True, convert_to_numpy=True)[0]
    return encode


def _searcher(corpus_dir, lean: bool, *options: str) -> Searcher:
    parser = argparse.ArgumentParser()
    parser.add_argument("dir")
    add_searcher_arguments(parser)
    return searcher_from_args(parser.parse_args([str(corpus_dir), *options]), lean_encoder=lean)


@pytest.mark.parametrize("lean", [True, False], ids=["numpy", "sentence-transformers"])
def test_a_long_query_is_embedded_from_its_first_128_tokens(corpus_dir, encoder, truncated_reference, lean):
    assert QUERY_TOKENS == 128
    assert encoder.model.max_seq_length == 256         # statements: the model's own maximum
    assert QUERY_TOKENS < len(encoder.model.tokenizer(LONG_QUERY)["input_ids"]) < 256     # a pasted paragraph
    searcher = Searcher(open_catalog(str(corpus_dir)), lean_encoder=lean)
    assert (type(searcher.encoder).__name__ == "BertQueryEncoder") == lean
    vector = np.asarray(searcher.embed_query(LONG_QUERY), np.float32)
    assert np.abs(vector - truncated_reference(LONG_QUERY, 128)).max() < 1e-5
    assert np.abs(vector - encoder.encode_queries([LONG_QUERY])[0]).max() > 1e-3     # not the 256-token vector
    short = np.asarray(searcher.embed_query(SHORT_QUERY), np.float32)
    assert np.abs(short - encoder.encode_queries([SHORT_QUERY])[0]).max() < 1e-5    # a short query is unchanged


def test_both_encoders_embed_a_long_query_alike(corpus_dir):
    lean, fallback = (Searcher(open_catalog(str(corpus_dir)), lean_encoder=lean) for lean in (True, False))
    together = [LONG_QUERY, SHORT_QUERY, LONG_QUERY[:300]]
    assert np.abs(lean.encoder.encode_queries(together) - fallback.encoder.encode_queries(together)).max() < 1e-5


@pytest.mark.parametrize("lean", [True, False], ids=["numpy", "sentence-transformers"])
def test_query_tokens_option_reaches_the_encoder(corpus_dir, encoder, truncated_reference, lean):
    assert _searcher(corpus_dir, lean).query_tokens == QUERY_TOKENS
    searcher = _searcher(corpus_dir, lean, "--query-tokens", "64")
    assert np.abs(np.asarray(searcher.embed_query(LONG_QUERY)) - truncated_reference(LONG_QUERY, 64)).max() < 1e-5
    # above the model's maximum: the model's maximum, as statements are embedded
    whole = _searcher(corpus_dir, lean, "--query-tokens", "1000")
    longest = LONG_QUERY * 3
    assert np.abs(np.asarray(whole.embed_query(longest)) - encoder.encode_queries([longest])[0]).max() < 1e-5
    with pytest.raises(UsageError, match="--query-tokens"):
        _searcher(corpus_dir, lean, "--query-tokens", "1")
