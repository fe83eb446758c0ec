"""`serve` answers searches concurrently with exactly the results it gives one at a time.

Real loopback HTTP (uvicorn, one connection per request), the packaged embedding model, DuckDB,
faiss; the corpus both without an index (in-memory search table) and with `thmforge index`'s.
Requests are released together by a barrier; nothing here depends on timing.
"""
import itertools
import random
import threading

import numpy as np
import pytest

from query_corpus import write_corpus
from retrieval.catalog import open_catalog
from retrieval.http_server import running
from retrieval.search import Searcher
from retrieval.service import QueryEmbedder, SearchService
from retrieval.web import create_app
from runners.cli import main
from test_web_api import request

QUERIES = ("a closed subset of a compact space is compact", "kernel of a group homomorphism",
           "bounded monotone sequences converge", "finite group order divides", "geometric series")
FILTERS = ({}, {"kinds": ["theorem", "lemma"]}, {"year_from": 2016, "authors": ["hausdorff", "noether"]},
           {"sources": ["arxiv"], "categories": ["math.CA"]}, {"paper_ids": ["latex-project:algebra-notes"]})
REQUESTS = [{"query": q, "mode": mode, "n_results": 5, **filters}
            for q, mode, filters in itertools.product(QUERIES[:3], ("vector", "lexical", "hybrid"), FILTERS)]
REQUESTS += [{"query": q, "mode": mode, "n_results": 10} for q in QUERIES[3:] for mode in ("vector", "lexical", "hybrid")]


@pytest.fixture(scope="module", params=["in-memory", "indexed"])
def corpus(request, tmp_path_factory, encoder):
    root = write_corpus(tmp_path_factory.mktemp(request.param), encoder)
    if request.param == "indexed":
        assert main(["index", str(root)]) == 0
    return root


def serve(corpus, **service_options):
    searcher = Searcher(open_catalog(str(corpus)))
    assert searcher.indexed == corpus.name.startswith("indexed")
    return running(create_app(SearchService(searcher, **service_options), mcp_host=None, worker_threads=16))


def sequential(base):
    answers = []
    for body in REQUESTS:
        status, _, payload = request(base, "POST", "/search", body)
        assert status == 200, payload
        answers.append(payload)
    return answers


def concurrent(base, bodies):
    """Every body sent at once, each on its own connection and thread: the answers in order."""
    answers = [None] * len(bodies)
    start = threading.Barrier(len(bodies))

    def client(i):
        start.wait()
        answers[i] = request(base, "POST", "/search", bodies[i])

    threads = [threading.Thread(target=client, args=(i,)) for i in range(len(bodies))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(status == 200 for status, _, _ in answers), [a for a in answers if a[0] != 200][:1]
    return [payload for _, _, payload in answers]


def test_concurrent_searches_equal_sequential_ones(corpus):
    """Each query embedded alone (`max_embed_batch=1`): the answers are byte for byte the same."""
    with serve(corpus, max_embed_batch=1) as base:
        expected = sequential(base)
        assert sum(bool(a["results"]) for a in expected) > len(expected) // 2    # the filters leave hits
        order = list(range(len(REQUESTS)))
        for seed in range(2):
            random.Random(seed).shuffle(order)
            answers = concurrent(base, [REQUESTS[i] for i in order])
            assert [answers[order.index(i)] for i in range(len(REQUESTS))] == expected


def test_batched_embeddings_rank_the_same(corpus):
    """Embeddings batched across requests (the default): the same statements in the same order, and
    scores equal to float32 rounding (a batch's matrix shapes differ from one query's)."""
    with serve(corpus) as base:
        expected = sequential(base)
        answers = concurrent(base, REQUESTS)
    for got, want in zip(answers, expected):
        assert [r["theorem_id"] for r in got["results"]] == [r["theorem_id"] for r in want["results"]]
        assert [r["score"] for r in got["results"]] == pytest.approx([r["score"] for r in want["results"]], abs=1e-5)
        strip = lambda payload: [{k: v for k, v in r.items() if k != "score"} for r in payload["results"]]
        assert strip(got) == strip(want)


class GatedEncoder:
    """The real encoder; its first call waits until the test opens the gate, and it records batches."""

    def __init__(self, encoder, fail_on=None):
        self.encoder, self.fail_on = encoder, fail_on
        self.batches = []
        self.entered, self.gate = threading.Event(), threading.Event()

    def __call__(self, texts):
        self.batches.append(list(texts))
        self.entered.set()
        self.gate.wait()
        if self.fail_on in texts:
            raise ValueError(f"cannot encode {self.fail_on!r}")
        return self.encoder.encode_queries(texts)


def test_queries_queued_while_the_encoder_is_busy_are_one_batch(encoder):
    gated = GatedEncoder(encoder)
    embedder = QueryEmbedder(gated, max_batch=4)
    first = embedder.submit(QUERIES[0])
    gated.entered.wait()                            # the encoder thread holds the first query
    texts = [QUERIES[1], *QUERIES[1:]]              # queued meanwhile, one of them twice
    queued = [embedder.submit(q) for q in texts]
    gated.gate.set()
    vectors = [first.result()] + [f.result() for f in queued]
    assert gated.batches == [[QUERIES[0]], list(QUERIES[1:4]), [QUERIES[4]]]   # 4 at most, duplicates once
    assert np.allclose(np.array(vectors), encoder.encode_queries([QUERIES[0], *texts]), atol=1e-6)
    assert vectors[1] == vectors[2]


def test_a_query_that_fails_fails_alone(encoder):
    gated = GatedEncoder(encoder, fail_on="bad")
    embedder = QueryEmbedder(gated)
    first = embedder.submit("warm")
    gated.entered.wait()
    bad, good = embedder.submit("bad"), embedder.submit(QUERIES[0])
    gated.gate.set()
    assert len(first.result()) == encoder.dim
    with pytest.raises(ValueError, match="cannot encode 'bad'"):
        bad.result()
    assert np.allclose(good.result(), encoder.encode_queries([QUERIES[0]])[0], atol=1e-6)
