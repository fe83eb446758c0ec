"""Fixtures of the query tests: the packaged encoder and a small corpus on disk."""
import pathlib

import pytest

from query_corpus import write_corpus
from transforms.embed.encoder import Encoder, EncoderConfig


@pytest.fixture(scope="session")
def encoder() -> Encoder:
    return Encoder(EncoderConfig(device="cpu"))


@pytest.fixture(scope="session")
def corpus_dir(tmp_path_factory, encoder) -> pathlib.Path:
    return write_corpus(tmp_path_factory.mktemp("corpus"), encoder)
