"""`local-parallel` against `local` on the shared corpora: wall time of the same build-corpus job.

Prints one line per (corpus, preset) and the speed-up. Embeddings are included unless
--no-embed (the embedding stage dominates on CPU; extraction alone shows the fan-out better).

    .venv/bin/python benchmarks/runner_speedup.py [--shared ../shared/corpora] [--no-embed]
"""
from __future__ import annotations

import argparse
import pathlib
import subprocess
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parents[1]
THMFORGE = str(pathlib.Path(sys.executable).with_name("thmforge"))


def corpora(shared: pathlib.Path) -> dict[str, list[str]]:
    books = sorted(str(p) for p in (shared / "books").iterdir() if p.is_dir())
    return {
        "arxiv bundles": ["--input", *sorted(str(p) for p in (shared / "arxiv").glob("*.tar")),
                          "--metadata", str(shared / "arxiv" / "arxiv-metadata-oai-snapshot.json")],
        "books (latex-project)": ["--source", "latex-project", "--input", *books],
    }


def timed_build(args: list[str], preset: str, embed: bool) -> float:
    with tempfile.TemporaryDirectory() as out:
        cmd = [THMFORGE, "build-corpus", *args, "--output", out, "--preset", preset, "--no-progress"]
        if not embed:
            cmd += ["--embed-model", "none"]
        started = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shared", type=pathlib.Path, default=REPO.parent / "shared" / "corpora")
    parser.add_argument("--no-embed", action="store_true")
    args = parser.parse_args()
    print(f"{'corpus':24} {'local s':>9} {'local-parallel s':>17} {'speed-up':>9}")
    for name, corpus_args in corpora(args.shared).items():
        local = timed_build(corpus_args, "local", not args.no_embed)
        parallel = timed_build(corpus_args, "local-parallel", not args.no_embed)
        print(f"{name:24} {local:9.1f} {parallel:17.1f} {local / parallel:8.2f}x")


if __name__ == "__main__":
    main()
