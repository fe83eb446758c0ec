"""The chat client and caller against the real loopback server: success, every fault class, retries,
the total deadline, the size cap and the concurrency bound."""
import time

import pytest

from benchmarks.chat_server import ChatServer, FaultPlan
from transforms.llm import (API_KEY_ENV, ChatClient, LLMCaller, LLMTimeout, MalformedResponse, RateLimited,
                            RequestRejected, ResponseTooLarge, RetryPolicy, ServerError, build_chat_body, call_with_retries,
                            chat_completions_url, parse_retry_after)

MESSAGES = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "two plus two"}]


def test_success_returns_content_and_usage():
    with ChatServer(respond=lambda req: "four, said " + req["model"]) as server:
        client = ChatClient(server.url, "tiny", timeout_s=2, temperature=0.2, max_tokens=50, extra={"seed": 7})
        result = client.complete(MESSAGES)
        sent = server.requests[0]
    assert result.content == "four, said tiny"
    assert (result.prompt_tokens, result.completion_tokens) == (5, 3)
    assert sent["temperature"] == 0.2 and sent["max_tokens"] == 50 and sent["seed"] == 7
    assert sent["messages"] == MESSAGES


@pytest.mark.parametrize("fault, error_class", [
    (FaultPlan(rate_429=1.0, retry_after_s=3), RateLimited),
    (FaultPlan(rate_500=1.0), ServerError),
    (FaultPlan(rate_malformed=1.0), MalformedResponse),
    (FaultPlan(rate_timeout=1.0, timeout_sleep_s=3), LLMTimeout),
])
def test_each_fault_is_a_retryable_error(fault, error_class):
    with ChatServer(faults=fault) as server:
        with pytest.raises(error_class) as info:
            ChatClient(server.url, "m", timeout_s=0.3).complete(MESSAGES)
    assert info.value.retryable
    if error_class is RateLimited:
        assert info.value.retry_after_s == 3.0


def test_api_key_from_environment_and_rejection_is_not_retryable(monkeypatch):
    with ChatServer(api_key="s3cret") as server:
        monkeypatch.setenv(API_KEY_ENV, "s3cret")
        assert ChatClient(server.url, "m").complete(MESSAGES).content == "two plus two"
        with pytest.raises(RequestRejected) as info:
            ChatClient(server.url, "m", api_key="wrong").complete(MESSAGES)
    assert info.value.status == 401 and not info.value.retryable


def test_retries_recover_after_faulty_attempts_and_honour_retry_after():
    plan = FaultPlan(rate_429=1.0, retry_after_s=0.2, faulty_attempts=2)
    with ChatServer(faults=plan) as server:
        client = ChatClient(server.url, "m", timeout_s=1)
        waits = []
        result = call_with_retries(lambda: client.complete(MESSAGES),
                                   RetryPolicy(max_attempts=4, initial_backoff_s=0.01, jitter=0.0),
                                   sleep=lambda s: (waits.append(s), time.sleep(s)))
        assert server.request_count == 3
    assert result.content == "two plus two"
    assert waits == [0.2, 0.2]     # Retry-After is a floor over the 0.01 s backoff


def test_non_retryable_errors_are_not_repeated():
    with ChatServer(api_key="k") as server:
        client = ChatClient(server.url, "m", api_key="nope")
        with pytest.raises(RequestRejected):
            call_with_retries(lambda: client.complete(MESSAGES), RetryPolicy(max_attempts=5), sleep=lambda s: None)
        assert server.request_count == 1


def test_exhausted_retries_raise_the_last_error():
    with ChatServer(faults=FaultPlan(rate_500=1.0)) as server:
        client = ChatClient(server.url, "m")
        seen = []
        with pytest.raises(ServerError):
            call_with_retries(lambda: client.complete(MESSAGES), RetryPolicy(max_attempts=3),
                              sleep=lambda s: None, on_error=lambda e, a: seen.append(a))
        assert server.request_count == 3 and seen == [0, 1, 2]


def test_fault_plan_is_deterministic_per_content_and_attempt():
    plan = FaultPlan(rate_500=0.5, seed=3)
    first = [plan.fault_for(f"k{i}", 0) for i in range(200)]
    assert first == [plan.fault_for(f"k{i}", 0) for i in range(200)]
    assert 60 < first.count("500") < 140
    assert first != [plan.fault_for(f"k{i}", 1) for i in range(200)]
    with pytest.raises(ValueError):
        FaultPlan(rate_500=0.7, rate_429=0.5)


def test_helpers():
    assert chat_completions_url("http://h:1/v1/") == "http://h:1/v1/chat/completions"
    assert chat_completions_url("http://h:1/v1/chat/completions") == "http://h:1/v1/chat/completions"
    assert build_chat_body("m", MESSAGES) == {"model": "m", "messages": MESSAGES}
    assert parse_retry_after("2.5") == 2.5
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412470.0) == 10.0
    assert parse_retry_after("soon") is None and parse_retry_after(None) is None


def test_client_pickles_and_bypasses_proxies_for_loopback(monkeypatch):
    import pickle

    monkeypatch.setenv("http_proxy", "http://127.0.0.1:9")      # a dead proxy must not matter for loopback
    with ChatServer() as server:
        client = ChatClient(server.url, "m")
        assert client.complete(MESSAGES).content == "two plus two"
        copy = pickle.loads(pickle.dumps(client))
        assert copy.complete(MESSAGES).content == "two plus two"


def test_timeout_is_a_total_deadline_against_a_trickling_endpoint():
    # 0.2 s between bytes is always inside a per-read timeout of 1 s, and the whole body (some
    # 300 bytes) takes a minute: a client without a total deadline would return it complete.
    with ChatServer(trickle_s=0.2) as server:
        with pytest.raises(LLMTimeout, match="no complete answer"):
            ChatClient(server.url, "m", timeout_s=1).complete(MESSAGES)
        assert server.request_count == 1


def test_a_flood_is_refused_after_reading_at_most_the_cap():
    import tracemalloc

    with ChatServer(pad_response_to=50_000_000) as server:
        client = ChatClient(server.url, "m", timeout_s=60, max_response_bytes=100_000)
        tracemalloc.start()
        with pytest.raises(ResponseTooLarge, match="exceeds 100000 bytes") as info:
            client.complete(MESSAGES)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    assert not info.value.retryable
    assert peak < 5_000_000                      # the 50 MB body was never held


def test_a_response_without_length_is_cut_at_the_cap():
    with ChatServer(pad_response_to=300_000) as server:
        client = ChatClient(server.url, "m", timeout_s=60, max_response_bytes=1_000_000)
        assert len(client.complete(MESSAGES).content) > 250_000       # under the cap: accepted
        client.max_response_bytes = 200_000
        with pytest.raises(ResponseTooLarge):
            client.complete(MESSAGES)


def test_caller_bounds_requests_in_flight_and_reports_each_answer():
    with ChatServer(hold_until_in_flight=3, faults=FaultPlan(rate_500=1.0, faulty_attempts=1)) as server:
        caller = LLMCaller(ChatClient(server.url, "m", timeout_s=60),
                           RetryPolicy(max_attempts=3, initial_backoff_s=0.01), concurrency=3)
        prompts = [[{"role": "user", "content": f"question {i}"}] for i in range(12)]
        answers = caller.map(caller.ask, prompts)
        caller.close()
        assert server.max_in_flight == 3
    assert [a.result.content for a in answers] == [f"question {i}" for i in range(12)]
    assert all(a.attempts == 2 and a.error_kinds == ["server-error"] for a in answers)


def test_caller_answer_says_why_it_failed():
    with ChatServer(faults=FaultPlan(rate_429=1.0, retry_after_s=0)) as server:
        caller = LLMCaller(ChatClient(server.url, "m"), RetryPolicy(max_attempts=2, initial_backoff_s=0.01),
                           concurrency=1, throttle_delay_s=0.01)
        answer = caller.ask(MESSAGES)
        caller.close()
    assert answer.result is None and isinstance(answer.error, RateLimited) and answer.attempts == 2
    assert answer.describe_error().startswith("rate-limited after 2 attempt(s): HTTP 429")
    assert "(earlier attempts: rate-limited)" in answer.describe_error()
