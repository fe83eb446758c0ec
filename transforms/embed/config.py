"""Options and configuration of the embedding stage; its manifest is what search rebuilds the encoder from."""
from __future__ import annotations

import dataclasses
import functools
from typing import Optional

from apache_beam.options.pipeline_options import PipelineOptions

from transforms.embed.encoder import DEFAULT_MODEL, Encoder, EncoderConfig, model_dimension
from transforms.embed.options import add_embed_arguments
from transforms.embed.representation import DEFAULT_TEMPLATE, TEMPLATE_TEXT, TEMPLATES

RETRIEVAL_INSTRUCTION = ("Given an informal description of a mathematical result, "
                         "retrieve the theorem statement that matches it")

# Prompt conventions of instruction-tuned embedders, used when no prompt is given on the command line.
KNOWN_PROMPTS = {
    "qwen3-embedding": (f"Instruct: {RETRIEVAL_INSTRUCTION}\nQuery: ", ""),
    "embeddinggemma": ("task: search result | query: ", "title: none | text: "),
    "e5": ("query: ", "passage: "),
}


def default_prompts(model: str) -> tuple[str, str]:
    """(query_prompt, document_prompt) for a model family recognized in its name, else no prompts."""
    name = model.lower().rsplit("/", 1)[-1]
    for family, prompts in KNOWN_PROMPTS.items():
        if name.startswith(family) or f"-{family}" in name or f"{family}-" in name:
            return prompts
    return "", ""


class EmbedOptions(PipelineOptions):
    """Command-line options of the embedding stage."""

    @classmethod
    def _add_argparse_args(cls, parser):
        add_embed_arguments(parser)


@dataclasses.dataclass(frozen=True)
class EmbedConfig:
    model: Optional[str] = DEFAULT_MODEL          # None: embeddings disabled
    batch_size: int = 64
    device: Optional[str] = None
    fp16: bool = False
    embed_statements: bool = False
    query_prompt: Optional[str] = None            # None: the model family's convention (default_prompts)
    document_prompt: Optional[str] = None
    normalize: bool = True
    share_across_processes: bool = False
    batches_per_call: int = 16                    # model batches per RunInference call (sorted by length together)
    progress: bool = False                        # progress of the embedding on stderr
    template: str = DEFAULT_TEMPLATE              # the representation embedded (transforms/embed/representation.py)

    def __post_init__(self):
        if self.batch_size < 1:
            raise ValueError("--embed-batch-size must be at least 1")
        if self.batches_per_call < 1:
            raise ValueError("batches_per_call must be at least 1")
        if self.template not in TEMPLATES:
            raise ValueError(f"--embed-template: choose one of {', '.join(TEMPLATES)}")

    @property
    def rows_per_call(self) -> int:
        """Rows handed to one `encode` call: it sorts them by length, so bigger windows pad less."""
        return self.batch_size * self.batches_per_call

    @classmethod
    def from_options(cls, options: PipelineOptions, **overrides) -> "EmbedConfig":
        opts = options.view_as(EmbedOptions)
        model = opts.embed_model
        values = dict(
            model=None if (model or "").lower() in ("", "none") else model,
            batch_size=opts.embed_batch_size, device=opts.embed_device, fp16=opts.embed_fp16,
            embed_statements=opts.embed_statements, query_prompt=opts.embed_query_prompt,
            document_prompt=opts.embed_document_prompt, normalize=not opts.embed_no_normalize,
            share_across_processes=opts.embed_share_across_processes, template=opts.embed_template,
        )
        values.update(overrides)
        return cls(**values)

    @property
    def enabled(self) -> bool:
        return self.model is not None

    def encoder_config(self) -> EncoderConfig:
        query, document = default_prompts(self.model or "")
        return EncoderConfig(
            model=self.model or DEFAULT_MODEL,
            query_prompt=query if self.query_prompt is None else self.query_prompt,
            document_prompt=document if self.document_prompt is None else self.document_prompt,
            normalize=self.normalize, batch_size=self.batch_size, device=self.device, fp16=self.fp16)

    @functools.cached_property
    def dim(self) -> Optional[int]:
        """The vector size (for the table schema), from the model's configs, else by loading it once."""
        if not self.enabled:
            return None
        return model_dimension(self.model) or Encoder(self.encoder_config()).dim

    def manifest(self) -> dict:
        """{model, dim, query_prompt, document_prompt, normalize, ...}: search rebuilds its encoder from this."""
        if not self.enabled:
            return {"model": None, "dim": None}
        section = self.encoder_config().manifest(self.dim)
        section.update(batch_size=self.batch_size, device=self.device, fp16=self.fp16,
                       columns=["embedding"] + (["statement_embedding"] if self.embed_statements else []),
                       template=self.template, embedded_text=TEMPLATE_TEXT[self.template])
        return section
