"""A real OpenAI-compatible chat-completions server on loopback, for tests and benchmarks.

It speaks the actual protocol over HTTP (`POST /v1/chat/completions`, `GET /v1/models`), so clients
are exercised end to end: sockets, timeouts, status codes, headers and JSON parsing. Answers come
from a `respond(request_json) -> str` callback, so a test decides what the "model" says from the
prompt, deterministically. A `FaultPlan` injects 429s (with `Retry-After`), 500s, timeouts and
malformed JSON at given rates; the choice is a hash of the seed, the request content and the
attempt number for that content, so a run is reproducible and a retry can succeed.

    with ChatServer(respond=lambda req: "An answer.", faults=FaultPlan(rate_500=0.2)) as server:
        client_base_url = server.url          # "http://127.0.0.1:PORT/v1"
        ...
        server.request_count, server.requests, server.fault_counts

Concurrency is counted on the server: `in_flight` covers a request from its arrival until just
before its response is written, so a client that waits for its answers can never show more than
its own bound, however loaded the machine. `hold_until_in_flight=N` holds every request until N
are in flight at once (a latch, released for good when reached), so a client allowed N requests
reaches exactly N deterministically. `trickle_s` sends the body one byte at a time with that pause
(an endpoint that holds a client), `pad_response_to` pads the answer to a body of that many bytes,
streamed without building it in memory (a flood); `aborted_responses` counts bodies the client
stopped reading.
"""
from __future__ import annotations

import collections
import dataclasses
import hashlib
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Optional

Respond = Callable[[dict], str]

MODEL_NAME = "loopback-chat"
PAD_MARKER = "\u0000pad\u0000"   # where the padding of a flood response goes in the JSON body
HOLD_LIMIT_S = 60.0              # a held request is released after this even if the latch never closes


def echo_last_user_message(request: dict) -> str:
    """Default answer: the text of the last user message (deterministic, prompt-derived)."""
    for message in reversed(request.get("messages") or []):
        if message.get("role") == "user":
            return str(message.get("content", ""))
    return ""


def count_tokens(text: str) -> int:
    """A crude, deterministic token count (whitespace words) for the `usage` block."""
    return len(text.split())


@dataclasses.dataclass(frozen=True)
class FaultPlan:
    """Rates (0..1, summed at most 1) of injected faults, chosen per (content, attempt)."""

    rate_429: float = 0.0
    rate_500: float = 0.0
    rate_timeout: float = 0.0
    rate_malformed: float = 0.0
    seed: int = 0
    retry_after_s: float = 0.05      # value of the Retry-After header sent with 429
    timeout_sleep_s: float = 2.0     # how long a "timeout" request stalls (longer than the client waits)
    faulty_attempts: Optional[int] = None  # attempts per content that may fail; later ones succeed

    def __post_init__(self):
        rates = (self.rate_429, self.rate_500, self.rate_timeout, self.rate_malformed)
        if any(r < 0 for r in rates) or sum(rates) > 1.0 + 1e-9:
            raise ValueError(f"fault rates must be >= 0 and sum to at most 1, got {rates}")

    def fault_for(self, content_key: str, attempt: int) -> Optional[str]:
        """The fault ("429", "500", "timeout", "malformed") for this attempt, or None."""
        if self.faulty_attempts is not None and attempt >= self.faulty_attempts:
            return None
        digest = hashlib.sha256(f"{self.seed}\x00{attempt}\x00{content_key}".encode()).digest()
        u = int.from_bytes(digest[:8], "big") / 2.0**64
        for name, rate in (("429", self.rate_429), ("500", self.rate_500),
                           ("timeout", self.rate_timeout), ("malformed", self.rate_malformed)):
            if u < rate:
                return name
            u -= rate
        return None


NO_FAULTS = FaultPlan()


def request_content_key(body: dict) -> str:
    """What identifies "the same request" across retries: model and messages, canonical JSON."""
    return json.dumps({"model": body.get("model"), "messages": body.get("messages")},
                      sort_keys=True, ensure_ascii=True)


class _LoopbackHTTPServer(ThreadingHTTPServer):
    request_queue_size = 256     # the default backlog of 5 drops concurrent connects (1 s SYN retries)
    daemon_threads = True
    block_on_close = False


class ChatServer:
    """A threaded loopback HTTP server; a context manager that always shuts down and closes."""

    def __init__(self, respond: Respond = echo_last_user_message, delay_s: float = 0.0,
                 faults: FaultPlan = NO_FAULTS, api_key: Optional[str] = None,
                 model_name: str = MODEL_NAME, hold_until_in_flight: Optional[int] = None,
                 trickle_s: float = 0.0, pad_response_to: int = 0):
        self.respond = respond
        self.hold_until_in_flight = hold_until_in_flight
        self.trickle_s = trickle_s
        self.pad_response_to = pad_response_to
        self.aborted_responses = 0       # response bodies the client stopped reading
        self._reached = threading.Event()
        self.delay_s = delay_s
        self.faults = faults
        self.api_key = api_key           # when set, requests must carry `Authorization: Bearer KEY`
        self.model_name = model_name
        self.requests: list[dict] = []   # every chat request body received, in arrival order
        self.fault_counts: collections.Counter = collections.Counter()
        self.in_flight = 0               # chat requests being handled right now
        self.max_in_flight = 0           # the most handled at once (shows client concurrency)
        self._attempts: collections.Counter = collections.Counter()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd: Optional[ThreadingHTTPServer] = None
        self._thread: Optional[threading.Thread] = None

    # -- lifecycle -------------------------------------------------------------------------
    def start(self) -> "ChatServer":
        handler = _make_handler(self)
        self._httpd = _LoopbackHTTPServer(("127.0.0.1", 0), handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="chat-server", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()             # wakes handlers stalled by a "timeout" fault
        self._reached.set()              # and held ones
        if self._httpd is not None:
            try:
                self._httpd.shutdown()
            finally:
                self._httpd.server_close()
                if self._thread is not None:
                    self._thread.join(timeout=5)
                self._httpd = None

    def __enter__(self) -> "ChatServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # -- what tests look at ---------------------------------------------------------------
    @property
    def port(self) -> int:
        assert self._httpd is not None, "server not started"
        return self._httpd.server_address[1]

    @property
    def url(self) -> str:
        """Base URL, OpenAI style: ends in /v1."""
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def request_count(self) -> int:
        with self._lock:
            return len(self.requests)

    def reset(self) -> None:
        """Forget received requests, attempt counters and fault counts."""
        with self._lock:
            self.requests.clear()
            self.max_in_flight = self.in_flight
            self._attempts.clear()
            self.fault_counts.clear()

    # -- request handling (called from handler threads) ----------------------------------
    def _register(self, body: dict) -> Optional[str]:
        key = request_content_key(body)
        with self._lock:
            self.requests.append(body)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            if self.hold_until_in_flight is not None and self.in_flight >= self.hold_until_in_flight:
                self._reached.set()
            attempt = self._attempts[key]
            self._attempts[key] += 1
            fault = self.faults.fault_for(key, attempt)
            if fault:
                self.fault_counts[fault] += 1
        return fault

    def _hold(self) -> None:
        if self.hold_until_in_flight is not None:
            self._reached.wait(HOLD_LIMIT_S)

    def _done(self) -> None:
        with self._lock:
            self.in_flight -= 1

    def _aborted(self) -> None:
        with self._lock:
            self.aborted_responses += 1

    def _completion(self, body: dict) -> dict:
        content = self.respond(body)
        prompt_text = " ".join(str(m.get("content", "")) for m in body.get("messages") or [])
        prompt_tokens, completion_tokens = count_tokens(prompt_text), count_tokens(content)
        digest = hashlib.sha256(request_content_key(body).encode()).hexdigest()[:24]
        return {
            "id": f"chatcmpl-{digest}",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model") or self.model_name,
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                      "total_tokens": prompt_tokens + completion_tokens},
        }


def _padding(size: int, piece: int = 1 << 16):
    """`size` bytes of filler in pieces, never all in memory at once."""
    block = b"x" * piece
    while size > 0:
        yield block[:size]
        size -= piece


def _make_handler(server: ChatServer) -> type:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True   # headers and body leave at once (no delayed-ACK stalls)

        def log_message(self, format: str, *args: Any) -> None:  # quiet test output
            pass

        def _send_json(self, status: int, payload: Any, headers: Optional[dict] = None) -> None:
            data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
            self._send_body(status, [data], len(data), headers)

        def _send_body(self, status: int, pieces: Any, length: int, headers: Optional[dict] = None) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(length))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            try:
                for piece in pieces:
                    self.wfile.write(piece)
            except (BrokenPipeError, ConnectionResetError):
                server._aborted()   # the client gave up (its deadline, its size cap)
                self.close_connection = True

        def _error(self, status: int, message: str, kind: str, headers: Optional[dict] = None) -> None:
            self._send_json(status, {"error": {"message": message, "type": kind}}, headers)

        def _authorized(self) -> bool:
            if server.api_key is None:
                return True
            if self.headers.get("Authorization") == f"Bearer {server.api_key}":
                return True
            self._error(401, "invalid API key", "invalid_request_error")
            return False

        def do_GET(self) -> None:
            if not self._authorized():
                return
            if self.path.rstrip("/") == "/v1/models":
                self._send_json(200, {"object": "list", "data": [
                    {"id": server.model_name, "object": "model", "owned_by": "thmforge"}]})
            else:
                self._error(404, f"no route {self.path}", "not_found")

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            if self.path.rstrip("/") != "/v1/chat/completions":
                self._error(404, f"no route {self.path}", "not_found")
                return
            try:
                body = json.loads(raw)
                if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
                    raise ValueError("body must be an object with a 'messages' list")
            except ValueError as exc:
                self._error(400, f"bad request body: {exc}", "invalid_request_error")
                return
            fault = server._register(body)
            done = [False]

            def done_before_writing():
                if not done[0]:
                    done[0] = True
                    server._done()
            self._done_before_writing = done_before_writing
            try:
                server._hold()
                self._answer(body, fault)
            finally:
                done_before_writing()

        def send_response(self, code: int, message: Optional[str] = None) -> None:
            hook = getattr(self, "_done_before_writing", None)
            if hook is not None:
                hook()       # the answer starts now: this request no longer counts as in flight
            super().send_response(code, message)

        def _answer(self, body: dict, fault: Optional[str]) -> None:
            if not self._authorized():
                return
            if server.delay_s:
                server._stopping.wait(server.delay_s)
            if fault == "429":
                self._error(429, "rate limited", "rate_limit_error",
                            {"Retry-After": f"{server.faults.retry_after_s:g}"})
            elif fault == "500":
                self._error(500, "internal error", "server_error")
            elif fault == "timeout":
                server._stopping.wait(server.faults.timeout_sleep_s)
                self._error(504, "stalled past the client's timeout", "timeout")
            elif fault == "malformed":
                self._send_json(200, b'{"id": "chatcmpl-broken", "choices": [{"message": {"content": "')
            else:
                try:
                    payload = server._completion(body)
                except Exception as exc:  # a respond() bug must surface as a 500, not a hang
                    self._error(500, f"respond failed: {exc!r}", "server_error")
                    return
                self._send_completion(payload)

        def _send_completion(self, payload: dict) -> None:
            if server.pad_response_to:
                payload["choices"][0]["message"]["content"] += PAD_MARKER
            head, _, tail = json.dumps(payload).encode().partition(json.dumps(PAD_MARKER)[1:-1].encode())
            padding = max(0, server.pad_response_to - len(head) - len(tail)) if server.pad_response_to else 0
            length = len(head) + padding + len(tail)
            if server.trickle_s:
                self._send_body(200, self._trickled(head + tail), length)
            else:
                self._send_body(200, [head, *_padding(padding), tail], length)

        def _trickled(self, data: bytes):
            for i in range(len(data)):
                if i and server._stopping.wait(server.trickle_s):
                    return
                yield data[i:i + 1]

    return Handler
