"""The describe model handlers: bounded concurrency, per-element isolation, the vLLM configuration path."""
import apache_beam as beam
from apache_beam.ml.inference.base import RemoteModelHandler
from apache_beam.options.pipeline_options import PipelineOptions

from benchmarks.chat_server import ChatServer, FaultPlan
from describe_helpers import words_answer
from transforms.describe import DescribeConfig, DescribeStatements
from transforms.describe.handlers import OpenAIDescribeHandler, VLLMDescribeHandler, model_handler
from transforms.describe.records import DescribeRequest


def requests(n, prefix="Statement"):
    return [DescribeRequest(key=f"k{i}", statement_hash=f"h{i}", heading="lemma",
                            statement=f"{prefix} {i}: every finite group of order {i} is solvable.",
                            context="body", context_text=None) for i in range(n)]


def config(endpoint, **overrides):
    values = dict(describer="openai", llm_endpoint=endpoint, llm_model="m", concurrency=4, cache_dir="unused",
                  llm_timeout_s=10, initial_backoff_s=0.01, max_backoff_s=0.05, throttle_delay_s=0.01)
    values.update(overrides)
    return DescribeConfig(**values)


def test_openai_handler_is_a_remote_handler_with_bounded_concurrency():
    # The server holds requests until four are in flight and counts them itself: a client bounded
    # at four shows exactly four on any machine, one that allowed more would show more.
    with ChatServer(respond=words_answer, hold_until_in_flight=4) as server:
        handler = OpenAIDescribeHandler(config(server.url, llm_timeout_s=60))
        assert isinstance(handler, RemoteModelHandler) and handler.num_retries == 0
        assert handler.batch_elements_kwargs() == {"min_batch_size": 1, "max_batch_size": 16}
        model = handler.load_model()
        results = list(handler.run_inference(requests(16), model))
        assert server.max_in_flight == 4
    assert [r.example.key for r in results] == [f"k{i}" for i in range(16)]
    assert all(r.inference.description.startswith("A result about statement") for r in results)


def test_one_failing_element_does_not_fail_its_batch():
    def respond(request):
        if "Broken" in request["messages"][1]["content"]:
            raise RuntimeError("model crashed")       # the server answers 500 for this prompt only
        return words_answer(request)

    with ChatServer(respond=respond) as server:
        handler = OpenAIDescribeHandler(config(server.url, max_attempts=2))
        batch = requests(3) + requests(1, prefix="Broken")
        outcomes = [r.inference for r in handler.run_inference(batch, handler.load_model())]
    assert [o.description is not None for o in outcomes] == [True, True, True, False]
    assert outcomes[3].error_class == "server-error" and outcomes[3].requests == 2


def test_throttler_holds_off_when_the_endpoint_is_overloaded():
    with ChatServer(respond=words_answer, faults=FaultPlan(rate_429=1.0, retry_after_s=0)) as server:
        handler = OpenAIDescribeHandler(config(server.url, max_attempts=3, concurrency=2))
        outcomes = [r.inference for r in handler.run_inference(requests(12), handler.load_model())]
    assert all(o.error_class == "rate-limited" for o in outcomes)
    assert sum(o.throttled for o in outcomes) > 0


class LoopbackVLLMServer:
    """Stands in for the vLLM process Beam's handler starts on a GPU worker: our chat server's port."""

    def __init__(self, server):
        self.server = server

    def load_model(self):
        return self

    def get_server_port(self):
        return self.server.port


def test_vllm_describer_configuration_path(tmp_path):
    options = PipelineOptions(["--describer", "vllm", "--llm-model", "Qwen/Qwen3-8B", "--vllm-server-arg",
                               "max-model-len=8192", "--vllm-server-arg", "gpu-memory-utilization=0.9",
                               "--llm-concurrency", "16", "--describe-cache", str(tmp_path)])
    cfg = DescribeConfig.from_options(options)
    handler = model_handler(cfg)
    assert isinstance(handler, VLLMDescribeHandler)
    assert handler.server_handler._model_name == "Qwen/Qwen3-8B"
    assert handler.server_handler._vllm_server_kwargs == {"max-model-len": "8192", "gpu-memory-utilization": "0.9"}
    assert handler.share_model_across_processes() and handler.batch_elements_kwargs()["max_batch_size"] == 64
    assert cfg.manifest()["endpoint"] == "vllm (on workers)" and cfg.model_id == "Qwen/Qwen3-8B"
    pipeline = beam.Pipeline(options=PipelineOptions([]))      # the graph builds (it is not run here)
    rows, failures = pipeline | beam.Create([]) | DescribeStatements(cfg)
    assert rows.pipeline is pipeline and failures.pipeline is pipeline

    with ChatServer(respond=words_answer) as server:            # requests go to the worker-local server
        handler.server_handler = LoopbackVLLMServer(server)
        results = list(handler.run_inference(requests(3), handler.load_model()))
        assert {r["model"] for r in server.requests} == {"Qwen/Qwen3-8B"}
    assert all(r.inference.description for r in results)
