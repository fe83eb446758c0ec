"""Options and configuration of the describe stage, and its manifest section (counts, tokens, cost)."""
from __future__ import annotations

import dataclasses
from typing import Any, Mapping, Optional

from apache_beam.options.pipeline_options import PipelineOptions

from transforms.describe.options import DESCRIBERS, add_describe_arguments
from transforms.describe.prompts import CONTEXTS, DEFAULT_TEMPLATE, load_template
from transforms.describe.text import TEXT_MODEL, TEXT_TEMPLATE


def _key_value(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise ValueError(f"expected KEY=VALUE, got {text!r}")
    return key, value


class DescribeOptions(PipelineOptions):
    """Command-line options of the describe stage (they show in --help and pass through any runner)."""

    @classmethod
    def _add_argparse_args(cls, parser):
        add_describe_arguments(parser)


@dataclasses.dataclass(frozen=True)
class DescribeConfig:
    describer: str = "text"
    llm_endpoint: Optional[str] = None
    llm_model: Optional[str] = None
    concurrency: int = 8
    llm_timeout_s: float = 60.0
    max_attempts: int = 5
    initial_backoff_s: float = 0.5
    max_backoff_s: float = 30.0
    throttle_delay_s: float = 1.0
    temperature: float = 0.2
    max_tokens: int = 256
    llm_extra: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    batch_size_option: Optional[int] = None
    vllm_server_kwargs: tuple[tuple[str, str], ...] = ()
    context: str = "body"
    context_chars: int = 4000
    template: str = DEFAULT_TEMPLATE
    cache_dir: Optional[str] = None
    progress: bool = False                        # progress of the LLM describing on stderr
    cache_flush_every: int = 64
    price_input_per_1k: float = 0.0
    price_output_per_1k: float = 0.0

    def __post_init__(self):
        if self.describer not in DESCRIBERS:
            raise ValueError(f"--describer must be one of {', '.join(DESCRIBERS)}, got {self.describer!r}")
        if self.context not in CONTEXTS:
            raise ValueError(f"--describe-context must be one of {', '.join(CONTEXTS)}, got {self.context!r}")
        if self.uses_llm:
            if not self.llm_model:
                raise ValueError(f"--describer {self.describer} needs --llm-model")
            if self.describer == "openai" and not self.llm_endpoint:
                raise ValueError("--describer openai needs --llm-endpoint (e.g. http://127.0.0.1:8000/v1)")
            if self.concurrency < 1:
                raise ValueError("--llm-concurrency must be at least 1")
            if self.max_attempts < 1:
                raise ValueError("--llm-max-attempts must be at least 1")
            if not self.cache_dir:
                raise ValueError("an LLM describer needs a cache directory (--describe-cache or --output)")
            load_template(self.template)   # fail at construction, not on the workers

    @classmethod
    def from_options(cls, options: PipelineOptions, output: Optional[str] = None, **overrides) -> "DescribeConfig":
        """From Beam options; the cache defaults to `<output>/_cache/descriptions` (`output` or `--output`)."""
        opts = options.view_as(DescribeOptions)
        output = output or options.get_all_options(retain_unknown_options=True).get("output")
        cache_dir = opts.describe_cache or (f"{str(output).rstrip('/')}/_cache/descriptions" if output else None)
        values = dict(
            describer=opts.describer, llm_endpoint=opts.llm_endpoint, llm_model=opts.llm_model,
            concurrency=opts.llm_concurrency, llm_timeout_s=opts.llm_timeout, max_attempts=opts.llm_max_attempts,
            temperature=opts.llm_temperature, max_tokens=opts.llm_max_tokens, batch_size_option=opts.llm_batch_size,
            vllm_server_kwargs=tuple(_key_value(a) for a in opts.vllm_server_arg or ()),
            context=opts.describe_context, context_chars=opts.describe_context_chars,
            template=opts.describe_template, cache_dir=cache_dir,
            price_input_per_1k=opts.price_input_per_1k, price_output_per_1k=opts.price_output_per_1k,
        )
        values.update(overrides)
        return cls(**values)

    @property
    def uses_llm(self) -> bool:
        return self.describer != "text"

    @property
    def model_id(self) -> str:
        """What `description_model` records (and the cache key uses)."""
        return self.llm_model if self.uses_llm else TEXT_MODEL

    @property
    def template_id(self) -> str:
        return self.template if self.uses_llm else TEXT_TEMPLATE

    @property
    def batch_size(self) -> int:
        return self.batch_size_option or 4 * self.concurrency

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        return input_tokens / 1000 * self.price_input_per_1k + output_tokens / 1000 * self.price_output_per_1k

    def manifest(self, totals: Optional[Mapping[str, Any]] = None) -> dict:
        """The manifest's `describe` section: settings, and (given totals) counts, tokens and cost."""
        section: dict[str, Any] = {
            "describer": self.describer, "model": self.model_id, "template": self.template_id,
            "context": self.context if self.uses_llm else "body",
        }
        if self.uses_llm:
            section.update(endpoint=self.llm_endpoint if self.describer == "openai" else "vllm (on workers)",
                           concurrency=self.concurrency, temperature=self.temperature, max_tokens=self.max_tokens,
                           cache=self.cache_dir, price_input_per_1k=self.price_input_per_1k,
                           price_output_per_1k=self.price_output_per_1k)
        if totals:
            section.update(totals)
            if "input_tokens" in totals:
                section["estimated_cost"] = round(self.cost(totals["input_tokens"], totals.get("output_tokens", 0)), 6)
            if "run_input_tokens" in totals:
                section["run_estimated_cost"] = round(
                    self.cost(totals["run_input_tokens"], totals.get("run_output_tokens", 0)), 6)
        return section
