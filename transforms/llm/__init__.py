"""The one OpenAI-compatible LLM client of thmforge, shared by the describers and the benchmark runner.

`ChatClient` makes one request (total deadline, size cap); `LLMCaller` adds retries, backoff,
Retry-After, rate limiting, adaptive throttling and bounded concurrency around it.
"""
from transforms.llm.caller import Answer, LLMCaller, RateLimiter
from transforms.llm.client import (API_KEY_ENV, MAX_RESPONSE_BYTES, ChatClient, ChatResult, RetryPolicy,
                                   build_chat_body, call_with_retries, chat_completions_url,
                                   parse_chat_response, parse_retry_after)
from transforms.llm.errors import (ConnectionFailed, LLMError, LLMTimeout, MalformedResponse, RateLimited,
                                   RequestRejected, ResponseTooLarge, ServerError)

__all__ = [
    "Answer", "LLMCaller", "RateLimiter", "API_KEY_ENV", "MAX_RESPONSE_BYTES", "ChatClient", "ChatResult",
    "RetryPolicy", "build_chat_body", "call_with_retries", "chat_completions_url", "parse_chat_response",
    "parse_retry_after", "LLMError", "RateLimited", "ServerError", "LLMTimeout", "ConnectionFailed",
    "MalformedResponse", "RequestRejected", "ResponseTooLarge",
]
