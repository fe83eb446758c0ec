"""(d) Embedding-stage throughput through Beam RunInference next to plain `SentenceTransformer.encode`.

Texts are theorem-like environment bodies cut from the LaTeX in ../shared/corpora (books and papers;
synthetic sentences when absent). The baseline is one `SentenceTransformer.encode` call over all texts
(model loaded beforehand). The pipeline is `Create(rows) | EmbedStatements(config)` on FnApiRunner;
its "steady" figure subtracts the fixed cost (start-up and model load) measured with a tiny run.
Target: the pipeline reaches at least 80% of the baseline.

CPU:   .venv/bin/python benchmarks/embedding_throughput.py [--texts 3000] [--batch-sizes 64]
GPU:   python benchmarks/embedding_throughput.py --device cuda --fp16 --batch-sizes 32,64,128,256,512 --texts 20000
"""
from __future__ import annotations

import argparse
import os
import pathlib
import re
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import apache_beam as beam  # noqa: E402
from apache_beam.options.pipeline_options import PipelineOptions  # noqa: E402
from apache_beam.runners.portability.fn_api_runner import FnApiRunner  # noqa: E402

from transforms.embed import EmbedConfig, EmbedStatements  # noqa: E402
from transforms.embed.encoder import DEFAULT_MODEL, resolve_model_path  # noqa: E402

CORPORA = pathlib.Path(__file__).resolve().parents[2] / "shared" / "corpora"
_ENV = re.compile(r"\\begin\{(theorem|lemma|proposition|corollary|definition)\*?\}(.*?)\\end\{\1\*?\}", re.S)


def corpus_texts(limit: int) -> list[str]:
    """Statement bodies from the shared corpora (whitespace collapsed), cycled up to `limit`."""
    texts: list[str] = []
    for path in sorted(CORPORA.glob("**/*.tex")) if CORPORA.is_dir() else []:
        source = path.read_text(encoding="utf-8", errors="replace")
        texts.extend(" ".join(m.group(2).split())[:2000] for m in _ENV.finditer(source))
    texts = [t for t in texts if len(t) > 20]
    if not texts:
        texts = [f"Every bounded sequence number {i} of real numbers has a convergent subsequence." for i in range(500)]
    return [texts[i % len(texts)] + ("" if i < len(texts) else f" ({i // len(texts)})") for i in range(limit)]


def load_baseline_model(model_name: str, device, fp16: bool):
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(resolve_model_path(model_name), device=device)
    if fp16 and model.device.type == "cuda":
        model.half()
    return model


def baseline_rate(model, texts: list[str], batch_size: int) -> float:
    model.encode(texts[:batch_size], batch_size=batch_size)          # warm-up
    began = time.perf_counter()
    model.encode(texts, batch_size=batch_size, normalize_embeddings=True, convert_to_numpy=True,
                 show_progress_bar=False)
    return len(texts) / (time.perf_counter() - began)


def pipeline_seconds(texts: list[str], config: EmbedConfig) -> float:
    rows = [{"theorem_id": str(i), "paper_id": "bench", "description": None, "statement_text": t}
            for i, t in enumerate(texts)]
    began = time.perf_counter()
    with beam.Pipeline(runner=FnApiRunner(), options=PipelineOptions([])) as pipeline:
        out, _ = pipeline | beam.Create(rows, reshuffle=False) | EmbedStatements(config)
        _ = out | beam.combiners.Count.Globally() | beam.Map(
            lambda n, expected=len(rows): None if n == expected else (_ for _ in ()).throw(RuntimeError(n)))
    return time.perf_counter() - began


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default=DEFAULT_MODEL)
    parser.add_argument("--texts", type=int, default=3000)
    parser.add_argument("--batch-sizes", default="64")
    parser.add_argument("--device", default=None)
    parser.add_argument("--fp16", action="store_true")
    parser.add_argument("--repeats", type=int, default=3,
                        help="alternate baseline and pipeline this often; the best of each is reported "
                             "(a shared machine's load hits both alike)")
    args = parser.parse_args(argv)
    texts = corpus_texts(args.texts)
    mean_chars = sum(map(len, texts)) / len(texts)
    print(f"model {args.model}; {len(texts)} texts (mean {mean_chars:.0f} chars); device {args.device or 'auto'}"
          f"{' fp16' if args.fp16 else ''}")
    print(f"{'batch':>6} {'encode/s':>9} {'pipeline/s':>11} {'steady/s':>9} {'pipeline %':>10} {'steady %':>9}")
    model = load_baseline_model(args.model, args.device, args.fp16)
    for batch_size in [int(b) for b in args.batch_sizes.split(",")]:
        config = EmbedConfig(model=args.model, batch_size=batch_size, device=args.device, fp16=args.fp16)
        base = rate = steady = 0.0
        for _ in range(args.repeats):
            base = max(base, baseline_rate(model, texts, batch_size))
            fixed = pipeline_seconds(texts[:batch_size], config)
            total = pipeline_seconds(texts, config)
            rate = max(rate, len(texts) / total)
            steady = max(steady, (len(texts) - batch_size) / max(1e-9, total - fixed))
        print(f"{batch_size:>6} {base:>9.1f} {rate:>11.1f} {steady:>9.1f} {100 * rate / base:>9.0f}% "
              f"{100 * steady / base:>8.0f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
