"""`serve`: the web application's JSON API over loopback with real requests (uvicorn, real sockets)."""
import http.client
import json
import socket
import threading
from urllib.parse import quote, urlsplit

import pytest

from retrieval.web import MAX_BODY_BYTES, STATIC_DIR


def request(base, method, path, body=None, headers=None, raw=None):
    """(status, headers, decoded JSON body or raw bytes) of one request on a new connection."""
    url = urlsplit(base)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=60)
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    conn.request(method, path, body=data, headers={"Content-Type": "application/json", **(headers or {})})
    response = conn.getresponse()
    payload = response.read()
    conn.close()
    is_json = response.getheader("Content-Type", "").startswith("application/json") and payload
    return response.status, {k.lower(): v for k, v in response.getheaders()}, json.loads(payload) if is_json else payload


def test_search_returns_ranked_hits(web_server):
    status, _, payload = request(web_server, "POST", "/search", {
        "query": "a closed subset of a compact space is compact", "n_results": 3})
    assert status == 200 and payload["n_results"] == 3 and payload["mode"] == "vector"
    top = payload["results"][0]
    assert top["label"] == "lem:closed-compact" and top["rank"] == 1 and top["name"] == "Lemma 2.2"
    assert top["paper_title"] == "Notes on point-set topology" and top["authors"] == ["Felix Hausdorff"]


def test_filters_and_modes(web_server):
    status, _, payload = request(web_server, "POST", "/search", {
        "query": "group homomorphism kernel", "n_results": 10, "mode": "hybrid", "kinds": ["theorem"],
        "year_from": 2010, "year_to": 2016, "authors": ["noether"], "sources": ["latex-project"]})
    assert status == 200 and payload["results"]
    assert {r["kind"] for r in payload["results"]} == {"theorem"}
    assert {r["paper_id"] for r in payload["results"]} == {"latex-project:algebra-notes"}


@pytest.mark.parametrize("body, message", [
    ({}, "query"),
    ({"query": ""}, "query"),
    ({"query": "   "}, "non-blank"),
    ({"query": "x" * 3000}, "at most"),
    ({"query": "x", "n_results": 101}, "n_results"),
    ({"query": "x", "n_results": "5"}, "n_results"),
    ({"query": "x", "n_results": True}, "n_results"),
    ({"query": "x", "mode": "sql"}, "mode"),
    ({"query": "x", "kinds": ["lemma' OR 1=1 --"]}, "kinds"),
    ({"query": "x", "categories": ["math'; DROP VIEW theorems"]}, "categories"),
    ({"query": "x", "year_from": "2020"}, "year_from"),
    ({"query": "x", "limit": 5}, "unknown fields: limit"),
    (["x"], "JSON object"),
    # type-confused JSON: each one a 400 that names the field, never a dropped connection
    ({"query": "x", "paper_ids": False}, "paper_ids"),
    ({"query": "x", "kinds": 5}, "kinds"),
    ({"query": "x", "authors": {"a": 1}}, "authors"),
    ({"query": "x", "authors": ["a\x00b"]}, "authors"),
    ({"query": 7}, "query"),
    ({"query": "x", "year_to": 2020.5}, "year_to"),
])
def test_invalid_requests_are_json_400(web_server, body, message):
    status, headers, payload = request(web_server, "POST", "/search", body)
    assert status == 400 and headers["content-type"] == "application/json" and message in payload["error"]


@pytest.mark.parametrize("raw, field", [(b'{"query": "\\ud800"}', "query"),
                                        (b'{"query": "x", "authors": ["\\udfff"]}', "authors")])
def test_lone_surrogates_are_json_400(web_server, raw, field):
    status, _, payload = request(web_server, "POST", "/search", raw=raw)
    assert status == 400 and payload["error"].startswith(field)


def test_an_empty_year_range_matches_nothing(web_server):
    status, _, payload = request(web_server, "POST", "/search", {"query": "compact", "year_from": 2020, "year_to": 2010})
    assert status == 200 and payload["results"] == []


def test_transport_errors(web_server):
    assert request(web_server, "POST", "/search", raw=b"{not json")[0] == 400
    assert request(web_server, "POST", "/search", raw=b"\xff\xfe")[0] == 400
    assert request(web_server, "POST", "/search", raw=b"[" * 100_000 + b"]" * 100_000)[0] == 413
    assert request(web_server, "POST", "/search", {"query": "x"}, headers={"Content-Type": "text/plain"})[0] == 415
    status, _, payload = request(web_server, "POST", "/search", raw=b" " * (MAX_BODY_BYTES + 1))
    assert status == 413 and "larger" in payload["error"]
    status, headers, payload = request(web_server, "GET", "/search")
    assert status == 405 and headers["allow"] == "OPTIONS, POST" and "GET" in payload["error"]
    assert request(web_server, "DELETE", "/search")[0] == 405
    assert request(web_server, "GET", "/nope")[0] == 404
    assert request(web_server, "POST", "/search", {"query": "compact"})[0] == 200     # still fine afterwards


def test_head_and_options(web_server):
    status, headers, body = request(web_server, "HEAD", "/health")
    assert status == 200 and body == b"" and int(headers["content-length"]) > 0
    status, headers, _ = request(web_server, "OPTIONS", "/search")
    assert status == 204 and headers["allow"] == "OPTIONS, POST"
    status, headers, _ = request(web_server, "OPTIONS", "/statements/x")
    assert status == 204 and headers["allow"] == "GET, HEAD, OPTIONS"
    assert request(web_server, "OPTIONS", "/nope")[0] == 404
    status, headers, _ = request(web_server, "TRACE", "/health")
    assert status == 405 and "GET" in headers["allow"]


def test_cors_by_flag(web_server):
    preflight = {"Origin": "https://example.org", "Access-Control-Request-Method": "POST",
                 "Access-Control-Request-Headers": "content-type"}
    status, headers, _ = request(web_server, "OPTIONS", "/search", headers=preflight)
    assert status == 200 and headers["access-control-allow-origin"] == "https://example.org"
    status, headers, _ = request(web_server, "OPTIONS", "/search", headers={**preflight, "Origin": "https://evil.test"})
    assert status == 400 and "access-control-allow-origin" not in headers
    status, headers, _ = request(web_server, "POST", "/search", {"query": "compact"}, headers={"Origin": "https://example.org"})
    assert status == 200 and headers["access-control-allow-origin"] == "https://example.org"


def test_statement_and_paper(web_server):
    theorem_id = "arxiv:1901.00002#6"
    status, _, statement = request(web_server, "GET", "/statements/" + quote(theorem_id, safe=":"))
    assert status == 200 and statement["name"] == "Lemma 2.2" and statement["label"] == "lem:closed-compact"
    assert statement["paper"]["title"] == "Notes on point-set topology"
    assert statement["uses"] == statement["used_by"] == statement["restatements"] == []   # no edges table
    assert "Felix Hausdorff" in statement["citation"] and "Lemma 2.2" in statement["citation"]
    status, _, paper = request(web_server, "GET", "/papers/arxiv:1901.00002")
    assert status == 200 and paper["authors"] == ["Felix Hausdorff"]
    assert [s["name"] for s in paper["statements"]][:2] == ["Theorem 2.1", "Lemma 2.2"]
    assert request(web_server, "GET", "/statements/" + quote("arxiv:1901.00002#999"))[0] == 404
    status, _, corollary = request(web_server, "GET", "/statements/" + quote("arxiv:2101.00001#4", safe=":"))
    assert status == 200 and corollary["proof_text"].endswith("apply Lemma 1.4.")
    assert corollary["proof_latex"].endswith("Lemma~\\ref{lem:geometric}.")
    assert request(web_server, "GET", "/papers/arxiv:0000.00000")[0] == 404


def test_openapi_is_generated_from_the_models(web_server):
    status, _, schema = request(web_server, "GET", "/openapi.json")
    assert status == 200 and schema["openapi"].startswith("3.")
    assert {"/search", "/statements/{theorem_id}", "/papers/{paper_id}", "/health"} <= set(schema["paths"])
    props = schema["components"]["schemas"]["SearchRequest"]["properties"]
    assert {"query", "n_results", "kinds", "sources", "categories", "year_from", "year_to", "authors"} <= set(props)
    assert props["n_results"]["maximum"] == 100
    assert schema["components"]["schemas"]["SearchRequest"]["additionalProperties"] is False
    assert "422" not in schema["paths"]["/search"]["post"]["responses"]
    assert request(web_server, "GET", "/health")[2] == {"status": "ok", "statements": 15}


def test_idle_and_half_sent_clients_hold_no_thread_and_are_dropped(corpus_dir):
    """Half-sent request lines are disconnected after the header deadline, a trickling body is
    answered 408 after the body deadline, and neither holds a thread meanwhile."""
    from conftest import serve_app

    servers = serve_app(corpus_dir, header_timeout=1, body_deadline=1, mcp_host=None)
    base = next(servers)
    try:
        url = urlsplit(base)
        assert request(base, "GET", "/health")[0] == 200
        threads_before = threading.active_count()
        half_sent = [socket.create_connection((url.hostname, url.port), timeout=60) for _ in range(100)]
        for sock in half_sent:
            sock.sendall(b"POST /search HTTP/1.1\r\nHost: x\r\n")
        trickle = socket.create_connection((url.hostname, url.port), timeout=60)
        trickle.sendall(b"POST /search HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                        b"Content-Length: 100\r\n\r\n{\"query\":")
        assert threading.active_count() - threads_before < 10
        for sock in half_sent:
            assert sock.recv(100) == b""           # closed by the server, well before the 60 s client timeout
            sock.close()
        answer = b""
        while chunk := trickle.recv(4096):   # headers and body may arrive in separate reads
            answer += chunk
        trickle.close()
        assert answer.startswith(b"HTTP/1.1 408") and b'"error"' in answer
    finally:
        next(servers, None)


def test_concurrent_requests(web_server):
    results = []

    def worker(q):
        results.append(request(web_server, "POST", "/search", {"query": q, "n_results": 2, "mode": "hybrid"}))

    threads = [threading.Thread(target=worker, args=(f"compact group sequence {i}",)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 8 and all(status == 200 and len(p["results"]) == 2 for status, _, p in results)


def test_vendored_katex_is_the_recorded_version(web_server):
    """The page's KaTeX is served by the app itself, and it is the version the package records."""
    version = (STATIC_DIR / "katex" / "VERSION").read_text().strip()
    status, _, script = request(web_server, "GET", "/static/katex/katex.min.js")
    assert status == 200 and f'version:"{version}"'.encode() in script
    assert (STATIC_DIR / "katex" / "LICENSE").read_text().startswith("The MIT License")
