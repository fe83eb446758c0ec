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



@pytest.fixture(scope="session")
def web_server(corpus_dir):
    """The web application over the query corpus, served by uvicorn on a free loopback port: its base URL."""
    yield from serve_app(corpus_dir, cors_origins=["https://example.org"])


def serve_app(corpus_dir, header_timeout=None, **options):
    """`create_app` over `corpus_dir` under uvicorn in a thread, for as long as the generator is suspended."""
    from retrieval.catalog import open_catalog
    from retrieval.http_server import running
    from retrieval.search import Searcher
    from retrieval.service import SearchService
    from retrieval.web import create_app

    app = create_app(SearchService(Searcher(open_catalog(str(corpus_dir)))), **options)
    with running(app, header_timeout=header_timeout) as base:
        yield base
