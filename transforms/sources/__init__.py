"""Sources: each module turns inputs into `Submission`s and a `Submission` into an `ExtractionResult`.

Every source module exposes
    read(inputs: list[str], limits: Limits) -> Iterator[Submission]
    extract(submission: Submission, limits: Limits) -> ExtractionResult
so the corpus pipeline treats arXiv bundles, LaTeX projects, the Stacks Project and ProofWiki alike.
"""
import importlib

SOURCE_MODULES = {
    "arxiv": "transforms.sources.arxiv",
    "latex-project": "transforms.sources.latex_project",
    "stacks": "transforms.sources.stacks",
    "proofwiki": "transforms.sources.proofwiki",
}


def source_module(name: str):
    """The module implementing source `name` (imported lazily: workers load only what they run)."""
    if name not in SOURCE_MODULES:
        raise ValueError(f"unknown source {name!r}; choose one of {', '.join(SOURCE_MODULES)}")
    return importlib.import_module(SOURCE_MODULES[name])
