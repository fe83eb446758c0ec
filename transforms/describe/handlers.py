"""RunInference model handlers for LLM describers: `openai` (any compatible endpoint) and `vllm`.

Beam's RunInference retries and dead-letters whole batches, so one bad statement would fail or
re-pay its neighbours. Here each element is handled on its own inside the batch through the shared
`transforms.llm.LLMCaller` (retries, backoff, Retry-After, adaptive throttling and bounded
concurrency live there, once), plus answer validation with one stricter retry. A request never
raises for one element: it returns a `DescribeOutcome` with the reason instead. Beam's own
`RemoteModelHandler` retry is therefore off (`num_retries=0`): it would only repeat whole batches.
"""
from __future__ import annotations

from typing import Any, Iterable, Optional, Sequence

from apache_beam.metrics import Metrics
from apache_beam.ml.inference.base import ModelHandler, PredictionResult, RemoteModelHandler

from transforms.describe.prompts import PromptTemplate, first_messages, load_template, stricter_messages
from transforms.describe.records import NAMESPACE, DescribeOutcome, DescribeRequest
from transforms.describe.validate import clean_answer, rejection_reason, to_ascii
from transforms.llm import ChatClient, LLMCaller, RetryPolicy


class RemoteDescriber:
    """Describes requests against one chat endpoint; shared by the threads of one worker process."""

    def __init__(self, caller: LLMCaller, template: PromptTemplate, *, keep_alive: Any = None):
        self.caller = caller
        self.template = template
        self._keep_alive = keep_alive   # e.g. the vLLM server process handle

    def describe_batch(self, batch: Sequence[DescribeRequest]) -> list[DescribeOutcome]:
        return self.caller.map(self.describe, batch)

    def describe(self, request: DescribeRequest) -> DescribeOutcome:
        """Ask, validate, ask once more strictly if needed; never raises for a bad element."""
        tally = {"requests": 0, "throttled": 0, "input_tokens": 0, "output_tokens": 0}
        messages = first_messages(self.template, request.heading, request.statement,
                                  request.context, request.context_text)
        rejected = 0
        try:
            for strict in (False, True):
                answer = self.caller.ask(messages)
                tally["requests"] += answer.attempts
                tally["throttled"] += answer.throttled
                if answer.error is not None:
                    return DescribeOutcome(request.key, None, rejected_answers=rejected,
                                           error_class=answer.error.kind, message=answer.describe_error(), **tally)
                tally["input_tokens"] += answer.result.prompt_tokens or 0
                tally["output_tokens"] += answer.result.completion_tokens or 0
                text = clean_answer(answer.result.content)
                reason = rejection_reason(text)
                if reason is None:
                    return DescribeOutcome(request.key, to_ascii(text), rejected_answers=rejected, **tally)
                rejected += 1
                if not strict:
                    messages = stricter_messages(self.template, messages, answer.result.content, reason)
            return DescribeOutcome(request.key, None, rejected_answers=rejected, error_class="invalid-description",
                                   message=f"answer rejected twice, last: {reason}", **tally)
        except Exception as error:  # a bug or an unexpected client failure: isolate it to this element
            return DescribeOutcome(request.key, None, rejected_answers=rejected, error_class=type(error).__name__,
                                   message=str(error)[:500], **tally)


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
        super().__init__(namespace=NAMESPACE, num_retries=0, throttle_delay_secs=int(max(1, config.throttle_delay_s)))
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
    caller = LLMCaller(client, policy, concurrency=config.concurrency, throttle_delay_s=config.throttle_delay_s,
                       thread_name="describe")
    return RemoteDescriber(caller, load_template(config.template), keep_alive=keep_alive)


def model_handler(config) -> ModelHandler:
    if config.describer == "openai":
        return OpenAIDescribeHandler(config)
    if config.describer == "vllm":
        return VLLMDescribeHandler(config)
    raise ValueError(f"describer {config.describer!r} has no model handler")
