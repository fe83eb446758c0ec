"""RunInference model handlers for LLM describers: `openai` (any compatible endpoint) and `vllm`.

Beam's RunInference retries and dead-letters whole batches, so one bad statement would fail or
re-pay its neighbours. Here each element is handled on its own inside the batch: retries with
backoff (honouring Retry-After), client-side adaptive throttling (Beam's `AdaptiveThrottler`, fed
per attempt), answer validation with one stricter retry, and a thread pool bounding concurrency.
A request never raises for one element: it returns a `DescribeOutcome` with the reason instead.
"""
from __future__ import annotations

import concurrent.futures
import threading
import time
from typing import Any, Iterable, Optional, Sequence

from apache_beam.io.components.adaptive_throttler import AdaptiveThrottler
from apache_beam.metrics import Metrics
from apache_beam.ml.inference.base import ModelHandler, PredictionResult, RemoteModelHandler

from transforms.describe.prompts import PromptTemplate, first_messages, load_template, stricter_messages
from transforms.describe.records import DescribeOutcome, DescribeRequest
from transforms.describe.validate import clean_answer, rejection_reason, to_ascii
from transforms.llm import ChatClient, LLMError, RetryPolicy, call_with_retries

NAMESPACE = "thmforge.describe"


class RemoteDescriber:
    """Describes requests against one chat endpoint; shared by the threads of one worker process."""

    def __init__(self, client: ChatClient, template: PromptTemplate, *, concurrency: int, policy: RetryPolicy,
                 throttle_delay_s: float = 1.0, keep_alive: Any = None):
        self.client = client
        self.template = template
        self.policy = policy
        self.throttle_delay_s = throttle_delay_s
        self.pool = concurrent.futures.ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="describe")
        self._throttler = AdaptiveThrottler(window_ms=60_000, bucket_ms=1_000, overload_ratio=2)
        self._throttler_lock = threading.Lock()
        self._throttled_until = 0.0
        self._keep_alive = keep_alive   # e.g. the vLLM server process handle

    def describe_batch(self, batch: Sequence[DescribeRequest]) -> list[DescribeOutcome]:
        return list(self.pool.map(self.describe, batch))

    def describe(self, request: DescribeRequest) -> DescribeOutcome:
        """Ask, validate, ask once more strictly if needed; never raises for a bad element."""
        tally = {"requests": 0, "throttled": 0, "input_tokens": 0, "output_tokens": 0}
        messages = first_messages(self.template, request.heading, request.statement,
                                  request.context, request.context_text)
        rejected = 0
        try:
            for strict in (False, True):
                answer = self._ask(messages, tally)
                text = clean_answer(answer)
                reason = rejection_reason(text)
                if reason is None:
                    return DescribeOutcome(request.key, to_ascii(text), rejected_answers=rejected, **tally)
                rejected += 1
                if not strict:
                    messages = stricter_messages(self.template, messages, answer, reason)
            return DescribeOutcome(request.key, None, rejected_answers=rejected, error_class="invalid-description",
                                   message=f"answer rejected twice, last: {reason}", **tally)
        except LLMError as error:
            return DescribeOutcome(request.key, None, rejected_answers=rejected, error_class=error.kind,
                                   message=f"{type(error).__name__} after {tally['requests']} attempts: {error}",
                                   **tally)
        except Exception as error:  # a bug or an unexpected client failure: isolate it to this element
            return DescribeOutcome(request.key, None, rejected_answers=rejected, error_class=type(error).__name__,
                                   message=str(error)[:500], **tally)

    def _ask(self, messages: list[dict], tally: dict) -> str:
        def attempt():
            self._wait_if_throttled(tally)
            tally["requests"] += 1
            try:
                result = self.client.complete(messages)
            except LLMError:
                self._record_attempt(success=False)
                raise
            self._record_attempt(success=True)
            tally["input_tokens"] += result.prompt_tokens or 0
            tally["output_tokens"] += result.completion_tokens or 0
            return result.content
        return call_with_retries(attempt, self.policy)

    def _record_attempt(self, success: bool) -> None:
        """Feed Beam's adaptive throttler with a finished attempt (in-flight ones are not failures yet);
        when it says the endpoint is overloaded, every thread holds off for `throttle_delay_s`."""
        with self._throttler_lock:
            now_ms = time.time() * 1000
            throttle = self._throttler.throttle_request(now_ms)
            if success:
                self._throttler.successful_request(now_ms)
            elif throttle:
                self._throttled_until = max(self._throttled_until, time.monotonic() + self.throttle_delay_s)

    def _wait_if_throttled(self, tally: dict) -> None:
        wait = self._throttled_until - time.monotonic()
        if wait > 0:
            tally["throttled"] += 1
            time.sleep(wait)


def _predictions(batch: Sequence[DescribeRequest], outcomes: Iterable[DescribeOutcome],
                 model_id: str) -> list[PredictionResult]:
    """Pair outcomes with requests and count them (in the DoFn thread, where Beam metrics are recorded)."""
    results = []
    for request, outcome in zip(batch, outcomes):
        for name in ("requests", "rejected_answers", "throttled", "input_tokens", "output_tokens"):
            value = getattr(outcome, name)
            if value:
                Metrics.counter(NAMESPACE, name).inc(value)
        results.append(PredictionResult(example=request, inference=outcome, model_id=model_id))
    return results


class OpenAIDescribeHandler(RemoteModelHandler[DescribeRequest, PredictionResult, RemoteDescriber]):
    """`--describer openai`: any OpenAI-compatible chat-completions endpoint."""

    def __init__(self, config):
        super().__init__(namespace=NAMESPACE, num_retries=1, throttle_delay_secs=int(max(1, config.throttle_delay_s)))
        self.config = config

    def create_client(self) -> RemoteDescriber:
        return _remote_describer(self.config, self.config.llm_endpoint)

    def request(self, batch: Sequence[DescribeRequest], model: RemoteDescriber,
                inference_args: Optional[dict[str, Any]] = None) -> Iterable[PredictionResult]:
        return _predictions(batch, model.describe_batch(batch), self.config.model_id)

    def batch_elements_kwargs(self) -> dict:
        return {"min_batch_size": 1, "max_batch_size": self.config.batch_size}


class VLLMDescribeHandler(ModelHandler[DescribeRequest, PredictionResult, RemoteDescriber]):
    """`--describer vllm`: Beam's vLLM handler starts an OpenAI-compatible vLLM server on the GPU worker;
    requests then go through the same per-element logic as `openai` against that local server.

    Needs `vllm` installed on the workers (e.g. a custom container); one server per worker machine.
    """

    def __init__(self, config):
        from apache_beam.ml.inference.vllm_inference import VLLMChatModelHandler

        super().__init__()
        self.config = config
        self.server_handler = VLLMChatModelHandler(model_name=config.llm_model,
                                                   vllm_server_kwargs=dict(config.vllm_server_kwargs))

    def load_model(self) -> RemoteDescriber:
        server = self.server_handler.load_model()     # starts `python -m vllm.entrypoints.openai.api_server`
        endpoint = f"http://127.0.0.1:{server.get_server_port()}/v1"
        return _remote_describer(self.config, endpoint, keep_alive=server)

    def run_inference(self, batch: Sequence[DescribeRequest], model: RemoteDescriber,
                      inference_args: Optional[dict[str, Any]] = None) -> Iterable[PredictionResult]:
        return _predictions(batch, model.describe_batch(batch), self.config.model_id)

    def share_model_across_processes(self) -> bool:
        return True

    def batch_elements_kwargs(self) -> dict:
        return {"min_batch_size": 1, "max_batch_size": self.config.batch_size}


def _remote_describer(config, endpoint: str, keep_alive: Any = None) -> RemoteDescriber:
    client = ChatClient(endpoint, config.llm_model, timeout_s=config.llm_timeout_s,
                        temperature=config.temperature, max_tokens=config.max_tokens, extra=config.llm_extra)
    policy = RetryPolicy(max_attempts=config.max_attempts, initial_backoff_s=config.initial_backoff_s,
                         max_backoff_s=config.max_backoff_s)
    return RemoteDescriber(client, load_template(config.template), concurrency=config.concurrency, policy=policy,
                           throttle_delay_s=config.throttle_delay_s, keep_alive=keep_alive)


def model_handler(config) -> ModelHandler:
    if config.describer == "openai":
        return OpenAIDescribeHandler(config)
    if config.describer == "vllm":
        return VLLMDescribeHandler(config)
    raise ValueError(f"describer {config.describer!r} has no model handler")
