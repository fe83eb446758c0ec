"""`LLMCaller`: the one way thmforge calls an LLM (the describers and run-bench both use it).

Around a `ChatClient` it adds, once: retries with exponential backoff that honour Retry-After
(`call_with_retries`), an optional request rate (starts spaced 1/rate apart), client-side
adaptive throttling (Beam's `AdaptiveThrottler`, fed by every finished attempt: when the endpoint
keeps failing, every thread holds off for `throttle_delay_s`) and a bound on requests in flight
(a semaphore around each attempt, plus a pool of that many threads to run work on).
`ask` never raises for an LLM failure: it returns an `Answer` that says what happened.
"""
from __future__ import annotations

import concurrent.futures
import dataclasses
import threading
import time
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence, TypeVar

from transforms.llm.client import ChatClient, ChatResult, Message, RetryPolicy, call_with_retries
from transforms.llm.errors import LLMError

T = TypeVar("T")
R = TypeVar("R")


@dataclasses.dataclass
class Answer:
    """What one `ask` ended with: a result, or the last error after `attempts` tries."""

    result: Optional[ChatResult] = None
    error: Optional[LLMError] = None
    attempts: int = 0
    throttled: int = 0                  # attempts that waited for the throttler first
    latency_s: Optional[float] = None   # of the attempt that answered
    error_kinds: list[str] = dataclasses.field(default_factory=list)   # of every failed attempt

    def describe_error(self) -> str:
        """`kind after N attempt(s): message (earlier attempts: ...)`, for failure rows."""
        assert self.error is not None
        earlier = self.error_kinds[:-1]
        tail = f" (earlier attempts: {', '.join(earlier)})" if earlier else ""
        return f"{self.error.kind} after {self.attempts} attempt(s): {self.error}{tail}"


class RateLimiter:
    """Spaces request starts at least 1/rate seconds apart across threads (no bursts)."""

    def __init__(self, rate_per_s: Optional[float], clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep):
        self.interval = 1.0 / rate_per_s if rate_per_s else 0.0
        self.clock, self.sleep = clock, sleep
        self._next = 0.0
        self._lock = threading.Lock()

    def acquire(self) -> None:
        if not self.interval:
            return
        with self._lock:
            now = self.clock()
            slot = max(now, self._next)
            self._next = slot + self.interval
        if slot > now:
            self.sleep(slot - now)


class LLMCaller:
    """One endpoint, shared by the threads of one worker process; `close()` stops its pool."""

    def __init__(self, client: ChatClient, policy: RetryPolicy = RetryPolicy(), *, concurrency: int = 4,
                 rate_limit: Optional[float] = None, throttle_delay_s: float = 1.0, thread_name: str = "llm"):
        if concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, got {concurrency}")
        self.client = client
        self.policy = policy
        self.concurrency = concurrency
        self.throttle_delay_s = throttle_delay_s
        self.limiter = RateLimiter(rate_limit)
        self.pool = concurrent.futures.ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix=thread_name)
        self._slots = threading.BoundedSemaphore(concurrency)
        from apache_beam.io.components.adaptive_throttler import AdaptiveThrottler   # Beam only once used

        self._throttler = AdaptiveThrottler(window_ms=60_000, bucket_ms=1_000, overload_ratio=2)
        self._throttler_lock = threading.Lock()
        self._throttled_until = 0.0

    def ask(self, messages: Sequence[Message], *, extra: Optional[Mapping[str, Any]] = None) -> Answer:
        """Ask until answered, a non-retryable error, or attempts run out; never raises an `LLMError`."""
        answer = Answer()

        def attempt() -> ChatResult:
            if self._wait_if_throttled():
                answer.throttled += 1
            self.limiter.acquire()
            with self._slots:
                answer.attempts += 1
                started = time.monotonic()
                try:
                    result = self.client.complete(messages, extra=extra)
                except LLMError:
                    self._record_attempt(success=False)
                    raise
            self._record_attempt(success=True)
            answer.latency_s = round(time.monotonic() - started, 6)
            return result

        try:
            answer.result = call_with_retries(attempt, self.policy,
                                              on_error=lambda error, _: answer.error_kinds.append(error.kind))
        except LLMError as error:
            answer.error = error
        return answer

    def submit(self, fn: Callable[..., R], *args: Any) -> concurrent.futures.Future:
        """Run `fn(*args)` on the caller's threads (at most `concurrency` at once)."""
        return self.pool.submit(fn, *args)

    def map(self, fn: Callable[[T], R], items: Iterable[T]) -> list[R]:
        """`fn` over `items` on the caller's threads, results in input order."""
        return list(self.pool.map(fn, items))

    def close(self) -> None:
        self.pool.shutdown(wait=True)

    def _record_attempt(self, success: bool) -> None:
        """Feed the adaptive throttler with a finished attempt (in-flight ones are not failures yet);
        when it says the endpoint is overloaded, every thread holds off for `throttle_delay_s`."""
        with self._throttler_lock:
            now_ms = time.time() * 1000
            throttle = self._throttler.throttle_request(now_ms)
            if success:
                self._throttler.successful_request(now_ms)
            elif throttle:
                self._throttled_until = max(self._throttled_until, time.monotonic() + self.throttle_delay_s)

    def _wait_if_throttled(self) -> bool:
        wait = self._throttled_until - time.monotonic()
        if wait > 0:
            time.sleep(wait)
            return True
        return False
