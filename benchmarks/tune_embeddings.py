"""Trial of contrastive domain adaptation: fine-tune the embedding model on pairs found in the tuning projects.

  .venv/bin/python benchmarks/tune_embeddings.py --corpus out/evalset-corpus --output /tmp/tuned-minilm \
      [--steps 110 --batch 32 --seconds 900 --train-length 128]
  .venv/bin/python benchmarks/retrieval_quality.py --corpus out/evalset-corpus --model \
      sentence-transformers/all-MiniLM-L6-v2 /tmp/tuned-minilm --template context-v1 --max-queries 60 --max-statements 600

Pairs come from the tuning projects only (`build_evalsets.HELD_OUT` excluded): a statement's title
with the statement's `context-v1` text without its title, and a section's title with the text of up
to three of its statements without that section in their path. Loss: in-batch negatives
(sentence-transformers' MultipleNegativesRankingLoss), on CPU, texts cut to `--train-length` tokens
while training, stopped after `--steps` steps or `--seconds`, whichever comes first. The directory written is a sentence-transformers model that
`build-corpus --embed-model PATH` and `retrieval_quality.py --model PATH` accept. This is a
measurement, not a pipeline stage: `thmforge tune-embeddings` exists only if it improves the
held-out sets (see retrieval/evalsets/README.md).
"""
from __future__ import annotations

import argparse
import pathlib
import random
import sys
import time

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from build_evalsets import HELD_OUT, fold, rows_of, usable  # noqa: E402
from retrieval.catalog import open_catalog  # noqa: E402
from transforms.describe.records import normalize_space  # noqa: E402
from transforms.embed.encoder import DEFAULT_MODEL, resolve_model_path  # noqa: E402
from transforms.embed.representation import CONTEXT, representation_text  # noqa: E402

STATEMENTS_PER_SECTION = 3


def training_pairs(rows: list[dict]) -> list[tuple[str, str]]:
    """(query-like text, statement text with that text hidden) from the tuning projects."""
    rows = [r for r in rows if r["paper_id"] not in HELD_OUT]
    pairs = []
    for r in rows:
        title = normalize_space(r["title"])
        if title and usable(title) and fold(title) not in fold(r["statement_text"] or ""):
            pairs.append((title, representation_text(dict(r, title=None, description=None), CONTEXT)))
    sections: dict[tuple, list[dict]] = {}
    for r in sorted(rows, key=lambda r: (r["paper_id"], r["ordinal"] or 0)):
        path = tuple(normalize_space(s) for s in r["section_path"] or [])
        if path:
            sections.setdefault(path, []).append(r)
    for path, members in sections.items():
        if usable(path[-1]):
            for r in members[:STATEMENTS_PER_SECTION]:
                pairs.append((path[-1], representation_text(dict(r, description=None, section_path=list(path[:-1])),
                                                            CONTEXT)))
    return [(q, d) for q, d in pairs if d]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", required=True)
    parser.add_argument("--output", required=True, help="model directory to write")
    parser.add_argument("--model", default=DEFAULT_MODEL)
    parser.add_argument("--steps", type=int, default=110, help="about one epoch of the tuning pairs at batch 32")
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=900.0, help="stop training after this long")
    parser.add_argument("--lr", type=float, default=2e-5)
    parser.add_argument("--train-length", type=int, default=128,
                        help="tokens per text while training (the saved model keeps its own limit)")
    args = parser.parse_args()

    import torch
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer import losses

    con = open_catalog(args.corpus).con
    rows = rows_of(con, """SELECT t.theorem_id, t.paper_id, t.ordinal, t.kind, t.title, t.display_name, t.number,
                                  t.section_path, t.statement_text, p.title AS paper_title
                           FROM theorems t LEFT JOIN papers p USING (paper_id)""")
    rows = [dict(r, _paper_title=r.pop("paper_title")) for r in rows]
    pairs = training_pairs(rows)
    random.Random(0).shuffle(pairs)
    torch.manual_seed(0)
    model = SentenceTransformer(resolve_model_path(args.model), device="cpu")
    saved_length, model.max_seq_length = model.max_seq_length, min(model.max_seq_length, args.train_length)
    loss = losses.MultipleNegativesRankingLoss(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    model.train()
    start, cpu, step = time.perf_counter(), time.process_time(), 0
    while step < args.steps and time.perf_counter() - start < args.seconds:
        batch = [pairs[(step * args.batch + i) % len(pairs)] for i in range(args.batch)]
        features = [model.preprocess([q for q, _ in batch]), model.preprocess([d for _, d in batch])]
        value = loss(features, None)
        optimizer.zero_grad()
        value.backward()
        optimizer.step()
        step += 1
        if step % 10 == 0:
            print(f"step {step}: loss {value.item():.3f} ({time.perf_counter() - start:.0f}s)", flush=True)
    model.eval()
    model.max_seq_length = saved_length
    model.save(args.output)
    print(f"{len(pairs)} pairs from tuning projects; {step} steps x {args.batch} in "
          f"{time.perf_counter() - start:.0f}s, {time.process_time() - cpu:.0f} CPU-s -> {args.output}")


if __name__ == "__main__":
    main()
