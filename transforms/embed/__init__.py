"""The embedding stage (sentence-transformers through Beam RunInference) and the shared `Encoder`.

    config = EmbedConfig.from_options(options)       # options include EmbedOptions
    rows, failures = rows | EmbedStatements(config)
    theorems_table(config.dim); manifest["embedding"] = config.manifest()
"""
from transforms.embed.config import EmbedConfig, EmbedOptions, default_prompts
from transforms.embed.encoder import DEFAULT_MODEL, Encoder, EncoderConfig, model_dimension
from transforms.embed.transform import EmbedStatements

__all__ = ["EmbedConfig", "EmbedOptions", "EmbedStatements", "Encoder", "EncoderConfig", "DEFAULT_MODEL",
           "default_prompts", "model_dimension"]
