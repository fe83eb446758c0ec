"""OpenAI-compatible chat-completions client shared by the describers and the benchmark runner."""
from transforms.llm.client import (API_KEY_ENV, ChatClient, ChatResult, RetryPolicy, build_chat_body,
                                   call_with_retries, chat_completions_url, parse_chat_response,
                                   parse_retry_after)
from transforms.llm.errors import (ConnectionFailed, LLMError, LLMTimeout, MalformedResponse, RateLimited,
                                   RequestRejected, ServerError)

__all__ = [
    "API_KEY_ENV", "ChatClient", "ChatResult", "RetryPolicy", "build_chat_body", "call_with_retries",
    "chat_completions_url", "parse_chat_response", "parse_retry_after", "LLMError", "RateLimited",
    "ServerError", "LLMTimeout", "ConnectionFailed", "MalformedResponse", "RequestRejected",
]
