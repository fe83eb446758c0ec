"""Errors of a chat-completions call, each saying whether a retry can help.

Retryable: rate limits (429, with the server's Retry-After), server errors (5xx), timeouts,
dropped connections and malformed responses. Not retryable: the rest of 4xx (bad request, bad key,
unknown model), where repeating the same request would fail the same way and only cost money.
"""
from __future__ import annotations

from typing import Optional


class LLMError(Exception):
    """A failed chat-completions call; `retryable` says whether repeating it may succeed."""

    retryable: bool = True
    kind: str = "llm-error"

    def __init__(self, message: str, *, status: Optional[int] = None, retry_after_s: Optional[float] = None):
        super().__init__(message)
        self.status = status
        self.retry_after_s = retry_after_s


class RateLimited(LLMError):
    kind = "rate-limited"


class ServerError(LLMError):
    kind = "server-error"


class LLMTimeout(LLMError):
    kind = "timeout"


class ConnectionFailed(LLMError):
    kind = "connection-failed"


class MalformedResponse(LLMError):
    kind = "malformed-response"


class RequestRejected(LLMError):
    """4xx other than 429: the request itself is wrong (auth, model name, parameters)."""

    retryable = False
    kind = "request-rejected"


class ResponseTooLarge(LLMError):
    """The answer is bigger than the client accepts; asking again would cost as much for the same."""

    retryable = False
    kind = "response-too-large"


def error_for_status(status: int, message: str, retry_after_s: Optional[float] = None) -> LLMError:
    """The error class for an HTTP status that is not a success."""
    if status == 429:
        return RateLimited(message, status=status, retry_after_s=retry_after_s)
    if status in (408, 504):
        return LLMTimeout(message, status=status, retry_after_s=retry_after_s)
    if status >= 500:
        return ServerError(message, status=status, retry_after_s=retry_after_s)
    return RequestRejected(message, status=status)
