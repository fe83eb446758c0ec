"""`serve`: the HTTP API over loopback with real requests."""
import http.client
import json
import threading

import pytest

from retrieval.api import MAX_BODY_BYTES, SearchServer, openapi_schema
from retrieval.catalog import open_catalog
from retrieval.search import Searcher


@pytest.fixture(scope="module")
def server(corpus_dir):
    server = SearchServer(("127.0.0.1", 0), Searcher(open_catalog(str(corpus_dir))))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def request(server, method, path, body=None, headers=None, raw=None):
    conn = http.client.HTTPConnection(*server.server_address[:2], timeout=30)
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    conn.request(method, path, body=data, headers={"Content-Type": "application/json", **(headers or {})})
    response = conn.getresponse()
    payload = json.loads(response.read())
    conn.close()
    return response.status, payload


def test_search_returns_ranked_hits(server):
    status, payload = request(server, "POST", "/search", {
        "query": "a closed subset of a compact space is compact", "n_results": 3})
    assert status == 200 and payload["n_results"] == 3
    top = payload["results"][0]
    assert top["label"] == "lem:closed-compact" and top["rank"] == 1 and top["name"] == "Lemma 2.2"
    assert top["paper_title"] == "Notes on point-set topology" and top["authors"] == ["Felix Hausdorff"]


def test_filters_and_modes(server):
    status, payload = request(server, "POST", "/search", {
        "query": "group homomorphism kernel", "n_results": 10, "mode": "hybrid", "kinds": ["theorem"],
        "year_from": 2010, "year_to": 2016, "authors": ["noether"], "sources": ["latex-project"]})
    assert status == 200 and payload["results"]
    assert {r["kind"] for r in payload["results"]} == {"theorem"}
    assert {r["paper_id"] for r in payload["results"]} == {"latex-project:algebra-notes"}


@pytest.mark.parametrize("body, message", [
    ({}, "query"),
    ({"query": ""}, "query"),
    ({"query": "x" * 3000}, "at most"),
    ({"query": "x", "n_results": 101}, "n_results"),
    ({"query": "x", "n_results": "5"}, "n_results"),
    ({"query": "x", "mode": "sql"}, "mode"),
    ({"query": "x", "kinds": ["lemma' OR 1=1 --"]}, "kind"),
    ({"query": "x", "categories": ["math'; DROP VIEW theorems"]}, "category"),
    ({"query": "x", "year_from": "2020"}, "year"),
    ({"query": "x", "limit": 5}, "unknown fields"),
    (["x"], "object"),
])
def test_invalid_requests_are_json_400(server, body, message):
    status, payload = request(server, "POST", "/search", body)
    assert status == 400 and message in payload["error"]


def test_transport_errors(server):
    assert request(server, "POST", "/search", raw=b"{not json")[0] == 400
    assert request(server, "POST", "/search", raw=b"\xff\xfe")[0] == 400
    assert request(server, "POST", "/search", {"query": "x"}, headers={"Content-Type": "text/plain"})[0] == 415
    status, payload = request(server, "POST", "/search", raw=b" " * (MAX_BODY_BYTES + 1))
    assert status == 413 and "larger" in payload["error"]
    assert request(server, "GET", "/search")[0] == 405
    assert request(server, "DELETE", "/search")[0] == 405
    assert request(server, "GET", "/nope")[0] == 404
    # the server is still fine afterwards
    assert request(server, "POST", "/search", {"query": "compact"})[0] == 200


def test_openapi_and_health(server):
    status, schema = request(server, "GET", "/openapi.json")
    assert status == 200 and schema == openapi_schema()
    assert schema["openapi"].startswith("3.")
    props = schema["components"]["schemas"]["SearchRequest"]["properties"]
    assert {"query", "n_results", "kinds", "sources", "categories", "year_from", "year_to", "authors"} <= set(props)
    assert props["n_results"]["maximum"] == 100
    assert request(server, "GET", "/health") == (200, {"status": "ok", "statements": 15})


def test_concurrent_requests(server):
    results = []

    def worker(q):
        results.append(request(server, "POST", "/search", {"query": q, "n_results": 2}))

    threads = [threading.Thread(target=worker, args=(f"compact group sequence {i}",)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 8 and all(status == 200 and len(p["results"]) == 2 for status, p in results)
