"""Peak memory and speed of reading one ~500 MB arXiv bundle (issue 2, acceptance (c): RSS < 1 GB).

    .venv/bin/python benchmarks/bundle_memory.py [--size-mb 500] [--keep DIR]

Builds `arXiv_src_2101_001.tar` in a temporary directory by repeating the submissions of the
project's sample (and of ../shared/corpora/arxiv when present) under new ids, then reads it in a
fresh process the way the pipeline does: index the tar headers, fetch and unpack every member in
memory. Prints bundle MB/s, submissions/s and the reader's peak RSS next to the peak RSS of the
same process before reading (the baseline: interpreter plus imports).
"""
from __future__ import annotations

import argparse
import io
import json
import pathlib
import resource
import subprocess
import sys
import tarfile
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def _template_members() -> list[bytes]:
    """Member payloads (gzipped submissions) of the sample and the shared corpora, PDFs left out."""
    bundles = sorted((REPO / "samples" / "arxiv").glob("arXiv_src_*.tar"))
    bundles += sorted((REPO.parent / "shared" / "corpora" / "arxiv").glob("arXiv_src_*.tar"))
    payloads = []
    for path in bundles:
        with tarfile.open(path) as bundle:
            for info in bundle.getmembers():
                if info.isfile() and info.name.endswith(".gz"):
                    payloads.append(bundle.extractfile(info).read())
    return payloads


def build_bundle(path: pathlib.Path, size_bytes: int) -> int:
    """Write a bundle of at least `size_bytes` by cycling the template members; returns the count."""
    templates = _template_members()
    written = count = 0
    with tarfile.open(path, "w", format=tarfile.USTAR_FORMAT) as bundle:
        while written < size_bytes:
            payload = templates[count % len(templates)]
            info = tarfile.TarInfo(f"2101/2101.{count:05d}.gz" if count < 100_000 else f"2101/2101.{count:06d}.gz")
            info.size = len(payload)
            bundle.addfile(info, io.BytesIO(payload))
            written += len(payload) + 512
            count += 1
    return count


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def read_bundle(path: str) -> dict:
    """Index and fetch every member (the pipeline's read path) in this process."""
    from transforms.sources import arxiv

    baseline = peak_rss_mb()
    started = time.perf_counter()
    submissions = files = unpacked = 0
    for sub in arxiv.read([path]):
        submissions += 1
        files += len(sub.files)
        unpacked += sum(len(b) for b in sub.files.values())
    seconds = time.perf_counter() - started
    return {"submissions": submissions, "files": files, "unpacked_mb": unpacked / 1e6, "seconds": seconds,
            "baseline_rss_mb": baseline, "peak_rss_mb": peak_rss_mb()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size-mb", type=int, default=500)
    parser.add_argument("--keep", default=None, help="build the bundle in this directory and keep it")
    parser.add_argument("--read", default=None, help=argparse.SUPPRESS)   # the measuring child process
    args = parser.parse_args()
    if args.read:
        print(json.dumps(read_bundle(args.read)))
        return 0
    with tempfile.TemporaryDirectory(prefix="thmforge-bundle-") as scratch:
        folder = pathlib.Path(args.keep or scratch)
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / "arXiv_src_2101_001.tar"
        members = build_bundle(path, args.size_mb * 1_000_000)
        size_mb = path.stat().st_size / 1e6
        child = subprocess.run([sys.executable, __file__, "--read", str(path)], check=True,
                               capture_output=True, text=True)
        result = json.loads(child.stdout.strip().splitlines()[-1])
    print(f"bundle: {size_mb:.0f} MB, {members} members")
    print(f"read: {result['submissions']} submissions, {result['files']} files, "
          f"{result['unpacked_mb']:.0f} MB unpacked in {result['seconds']:.1f} s "
          f"= {size_mb / result['seconds']:.0f} MB/s of bundle, {result['submissions'] / result['seconds']:.0f} submissions/s")
    print(f"peak RSS: {result['peak_rss_mb']:.0f} MB (baseline before reading: {result['baseline_rss_mb']:.0f} MB; "
          f"bundle/peak = {size_mb / result['peak_rss_mb']:.1f}x); target < 1024 MB: "
          f"{'met' if result['peak_rss_mb'] < 1024 else 'NOT met'}")
    return 0 if result["submissions"] == members and result["peak_rss_mb"] < 1024 else 1


if __name__ == "__main__":
    sys.exit(main())
