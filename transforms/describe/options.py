"""Command-line options of the describe stage, declared without Beam so `--help` answers at once."""
from __future__ import annotations

import argparse

from transforms.describe.prompts import CONTEXTS, DEFAULT_TEMPLATE

DESCRIBERS = ("text", "openai", "vllm")


def add_describe_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("descriptions")
    group.add_argument("--describer", choices=DESCRIBERS, default="text",
                       help="text: the statement's plain text (offline, default); openai: an "
                            "OpenAI-compatible endpoint (--llm-endpoint, --llm-model, key in "
                            "THMFORGE_LLM_API_KEY); vllm: Beam's vLLM handler on GPU workers (--llm-model)")
    group.add_argument("--llm-endpoint", default=None,
                       help="base URL of the chat-completions API, e.g. http://127.0.0.1:8000/v1")
    group.add_argument("--llm-model", default=None, help="model name sent to the endpoint / served by vLLM")
    group.add_argument("--llm-concurrency", type=int, default=8,
                       help="requests in flight per worker process (default 8)")
    group.add_argument("--llm-timeout", type=float, default=60.0, help="seconds to wait for one answer")
    group.add_argument("--llm-max-attempts", type=int, default=5,
                       help="attempts per request on retryable errors (429, 5xx, timeouts, malformed)")
    group.add_argument("--llm-temperature", type=float, default=0.2)
    group.add_argument("--llm-max-tokens", type=int, default=256, help="answer length limit in tokens")
    group.add_argument("--llm-batch-size", type=int, default=None,
                       help="statements per RunInference batch (default 4 x concurrency)")
    group.add_argument("--vllm-server-arg", action="append", default=[], metavar="KEY=VALUE",
                       help="extra argument of the vLLM server, e.g. max-model-len=8192 (repeatable)")
    group.add_argument("--describe-context", choices=CONTEXTS, default="body",
                       help="what the LLM sees besides the statement: nothing, the abstract, or the "
                            "paper's introduction, or the statements it uses (body+deps; falls back to body when missing)")
    group.add_argument("--describe-context-chars", type=int, default=4000,
                       help="context text is cut to this many characters")
    group.add_argument("--describe-template", default=DEFAULT_TEMPLATE,
                       help="prompt template id (transforms/describe/templates/<id>.txt)")
    group.add_argument("--describe-cache", default=None,
                       help="description cache directory (default OUTPUT/_cache/descriptions)")
    group.add_argument("--price-input-per-1k", type=float, default=0.0,
                       help="price of 1000 input tokens, for the manifest's cost estimate")
    group.add_argument("--price-output-per-1k", type=float, default=0.0,
                       help="price of 1000 output tokens, for the manifest's cost estimate")
