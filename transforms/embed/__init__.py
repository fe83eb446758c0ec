"""The embedding stage (sentence-transformers through Beam RunInference) and the shared `Encoder`.

    config = EmbedConfig.from_options(options)       # options include EmbedOptions
    rows, failures = rows | EmbedStatements(config)
    theorems_table(config.dim); manifest["embedding"] = config.manifest()

The names are imported on first use, so `transforms.embed.options` (the command-line arguments)
loads without Beam or torch.
"""
import importlib

_EXPORTS = {
    "EmbedConfig": "transforms.embed.config", "EmbedOptions": "transforms.embed.config",
    "default_prompts": "transforms.embed.config", "EmbedStatements": "transforms.embed.transform",
    "DEFAULT_MODEL": "transforms.embed.encoder", "Encoder": "transforms.embed.encoder",
    "EncoderConfig": "transforms.embed.encoder", "model_dimension": "transforms.embed.encoder",
}
__all__ = list(_EXPORTS)


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_EXPORTS[name]), name)
