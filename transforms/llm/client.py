"""A small OpenAI-compatible chat-completions client (stdlib HTTP), shared by describers and run-bench.

Works against vLLM, Ollama, llama.cpp's server, OpenAI and anything else speaking the protocol.
The API key comes from `THMFORGE_LLM_API_KEY` unless given. Every failure is an `LLMError` that
says whether it is retryable; `call_with_retries` applies backoff and honours `Retry-After`.
`timeout_s` is a total deadline per request (connect, headers and body together: a server that
trickles a byte at a time cannot hold a request longer), and an answer larger than
`max_response_bytes` is refused after reading at most that many bytes.
"""
from __future__ import annotations

import dataclasses
import email.utils
import http.client
import json
import os
import random
import socket
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Callable, Mapping, Optional, Sequence, TypeVar

from transforms.llm.errors import (ConnectionFailed, LLMError, LLMTimeout, MalformedResponse,
                                   ResponseTooLarge, error_for_status)

API_KEY_ENV = "THMFORGE_LLM_API_KEY"
MAX_RESPONSE_BYTES = 8 * 1024 * 1024     # far above any chat answer (~2M tokens of text), far below a flood
ERROR_BODY_BYTES = 2000                  # how much of an error response is kept for the message

Message = Mapping[str, Any]   # {"role": "system"|"user"|"assistant", "content": str}
T = TypeVar("T")


def chat_completions_url(endpoint: str) -> str:
    """`.../v1` (OpenAI style base URL) or a full `.../chat/completions` URL to the latter."""
    endpoint = endpoint.rstrip("/")
    if endpoint.endswith("/chat/completions"):
        return endpoint
    return endpoint + "/chat/completions"


def build_chat_body(model: str, messages: Sequence[Message], *, temperature: Optional[float] = None,
                    max_tokens: Optional[int] = None, extra: Optional[Mapping[str, Any]] = None) -> dict:
    """The JSON body of a chat-completions request; `extra` adds provider parameters (seed, top_p, ...)."""
    body: dict[str, Any] = {"model": model, "messages": [dict(m) for m in messages]}
    if temperature is not None:
        body["temperature"] = temperature
    if max_tokens is not None:
        body["max_tokens"] = max_tokens
    for key, value in (extra or {}).items():
        body[key] = value
    return body


@dataclasses.dataclass(frozen=True)
class ChatResult:
    content: str
    prompt_tokens: Optional[int] = None       # None when the endpoint reports no usage
    completion_tokens: Optional[int] = None
    model: Optional[str] = None
    finish_reason: Optional[str] = None


def parse_chat_response(data: bytes) -> ChatResult:
    """A chat-completions response body to a `ChatResult`; anything unexpected is `MalformedResponse`."""
    try:
        payload = json.loads(data)
        choice = payload["choices"][0]
        content = choice["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        raise MalformedResponse(f"malformed chat response ({type(exc).__name__}): {data[:200]!r}") from None
    if content is not None and not isinstance(content, str):
        raise MalformedResponse(f"message content is {type(content).__name__}, not text")
    usage = payload.get("usage") or {}
    return ChatResult(
        content=content or "",
        prompt_tokens=_int_or_none(usage.get("prompt_tokens")),
        completion_tokens=_int_or_none(usage.get("completion_tokens")),
        model=payload.get("model"),
        finish_reason=choice.get("finish_reason"),
    )


def _int_or_none(value: Any) -> Optional[int]:
    return int(value) if isinstance(value, (int, float)) else None


def parse_retry_after(value: Optional[str], now: Optional[float] = None) -> Optional[float]:
    """Seconds to wait from a Retry-After header: a number of seconds or an HTTP date."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError):
        return None
    return max(0.0, when - (time.time() if now is None else now))


class _Deadline:
    """Shuts a request's socket down when its total time runs out, wherever the request is waiting."""

    def __init__(self, seconds: float):
        self.expired = False
        self._sock: Optional[socket.socket] = None
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True
        self._timer.start()

    def attach(self, sock: socket.socket) -> None:
        with self._lock:
            self._sock = sock
            expired = self.expired
        if expired:
            _shutdown(sock)

    def _expire(self) -> None:
        with self._lock:
            self.expired = True
            sock = self._sock
        if sock is not None:
            _shutdown(sock)

    def cancel(self) -> None:
        self._timer.cancel()


def _shutdown(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)     # wakes a blocked recv in the requesting thread
    except OSError:
        pass


class _Watched:
    """Connection mixin: hands the connected socket to the request's deadline."""

    def __init__(self, *args, deadline: _Deadline, **kwargs):
        super().__init__(*args, **kwargs)
        self.deadline = deadline

    def connect(self):
        super().connect()
        self.deadline.attach(self.sock)


class _WatchedHTTPConnection(_Watched, http.client.HTTPConnection):
    pass


class _WatchedHTTPSConnection(_Watched, http.client.HTTPSConnection):
    pass


class _WatchedHTTPHandler(urllib.request.HTTPHandler):
    def __init__(self, deadline: _Deadline):
        super().__init__()
        self.deadline = deadline

    def http_open(self, req):
        return self.do_open(_WatchedHTTPConnection, req, deadline=self.deadline)


class _WatchedHTTPSHandler(urllib.request.HTTPSHandler):
    def __init__(self, deadline: _Deadline):
        super().__init__()
        self.deadline = deadline

    def https_open(self, req):
        return self.do_open(_WatchedHTTPSConnection, req, context=self._context, deadline=self.deadline)


class ChatClient:
    """Posts chat-completions requests to one endpoint and model; thread-safe (no shared state)."""

    def __init__(self, endpoint: str, model: str, *, api_key: Optional[str] = None, timeout_s: float = 60.0,
                 temperature: Optional[float] = None, max_tokens: Optional[int] = None,
                 extra: Optional[Mapping[str, Any]] = None, max_response_bytes: int = MAX_RESPONSE_BYTES):
        self.url = chat_completions_url(endpoint)
        self.model = model
        self.api_key = api_key if api_key is not None else os.environ.get(API_KEY_ENV)
        self.timeout_s = timeout_s
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.extra = dict(extra or {})
        self.max_response_bytes = max_response_bytes
        host = urllib.parse.urlsplit(self.url).hostname or ""
        # A loopback endpoint (a local vLLM, a test server) never goes through an environment proxy.
        self._loopback = host in ("127.0.0.1", "localhost", "::1")

    def _open(self, request: urllib.request.Request, deadline: _Deadline):
        handlers = [_WatchedHTTPHandler(deadline), _WatchedHTTPSHandler(deadline)]
        if self._loopback:
            handlers.append(urllib.request.ProxyHandler({}))
        return urllib.request.build_opener(*handlers).open(request, timeout=self.timeout_s)

    def complete(self, messages: Sequence[Message], *, temperature: Optional[float] = None,
                 max_tokens: Optional[int] = None, extra: Optional[Mapping[str, Any]] = None) -> ChatResult:
        """One request, no retries; raises an `LLMError` subclass on any failure."""
        body = build_chat_body(
            self.model, messages,
            temperature=self.temperature if temperature is None else temperature,
            max_tokens=self.max_tokens if max_tokens is None else max_tokens,
            extra={**self.extra, **(extra or {})},
        )
        return parse_chat_response(self.post(body))

    def post(self, body: Mapping[str, Any]) -> bytes:
        """POST a JSON body, return the response bytes of a 2xx answer (within the deadline and size cap)."""
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        request = urllib.request.Request(self.url, data=json.dumps(body).encode(), headers=headers, method="POST")
        deadline = _Deadline(self.timeout_s)
        try:
            with self._open(request, deadline) as response:
                data = self._read_capped(response)
        except LLMError:
            raise
        except urllib.error.HTTPError as exc:
            detail = _read_quietly(exc)
            raise error_for_status(exc.code, f"HTTP {exc.code} from {self.url}: {detail[:300]}",
                                   parse_retry_after(exc.headers.get("Retry-After"))) from None
        except (TimeoutError, socket.timeout) as exc:
            raise self._timeout() from exc
        except urllib.error.URLError as exc:
            if deadline.expired or isinstance(exc.reason, (TimeoutError, socket.timeout)):
                raise self._timeout() from exc
            raise ConnectionFailed(f"cannot reach {self.url}: {exc.reason}") from exc
        except (http.client.HTTPException, ConnectionError, OSError) as exc:
            if deadline.expired:
                raise self._timeout() from exc
            raise ConnectionFailed(f"connection to {self.url} failed: {exc!r}") from exc
        finally:
            deadline.cancel()
        if deadline.expired:     # the socket was shut mid-body: what was read is cut short
            raise self._timeout()
        return data

    def _read_capped(self, response) -> bytes:
        declared = response.headers.get("Content-Length", "")
        if declared.isdigit() and int(declared) > self.max_response_bytes:
            raise self._too_large(f"{int(declared)} bytes announced")
        data = response.read(self.max_response_bytes + 1)
        if len(data) > self.max_response_bytes:
            raise self._too_large("more sent")
        return data

    def _too_large(self, detail: str) -> ResponseTooLarge:
        return ResponseTooLarge(f"answer from {self.url} exceeds {self.max_response_bytes} bytes ({detail})")

    def _timeout(self) -> LLMTimeout:
        return LLMTimeout(f"no complete answer from {self.url} within {self.timeout_s:g}s")


def _read_quietly(exc: urllib.error.HTTPError) -> str:
    try:
        return exc.read(ERROR_BODY_BYTES).decode("utf-8", "replace")
    except Exception:
        return ""


@dataclasses.dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff with jitter; a server's Retry-After is a floor on the wait."""

    max_attempts: int = 5
    initial_backoff_s: float = 0.5
    max_backoff_s: float = 30.0
    multiplier: float = 2.0
    jitter: float = 0.2             # +- fraction of the computed backoff

    def __post_init__(self):
        if self.max_attempts < 1:
            raise ValueError(f"max_attempts must be at least 1, got {self.max_attempts}")

    def backoff_s(self, retry_index: int, error: LLMError, rng: random.Random) -> float:
        base = min(self.max_backoff_s, self.initial_backoff_s * self.multiplier ** retry_index)
        base *= 1.0 + self.jitter * (2.0 * rng.random() - 1.0)
        if error.retry_after_s is not None:
            base = max(base, min(error.retry_after_s, self.max_backoff_s))
        return max(0.0, base)


def call_with_retries(fn: Callable[[], T], policy: RetryPolicy = RetryPolicy(), *,
                      sleep: Callable[[float], None] = time.sleep,
                      on_error: Optional[Callable[[LLMError, int], None]] = None) -> T:
    """Call `fn` until it succeeds, a non-retryable error occurs, or attempts run out (then re-raise).

    `on_error(error, attempt)` sees every failed attempt (for metrics and throttling signals).
    """
    rng = random.Random()
    for attempt in range(policy.max_attempts):
        try:
            return fn()
        except LLMError as error:
            if on_error is not None:
                on_error(error, attempt)
            if not error.retryable or attempt + 1 >= policy.max_attempts:
                raise
            sleep(policy.backoff_s(attempt, error, rng))
    raise AssertionError("unreachable")
