"""Peak memory and speed of reading one ~500 MB arXiv bundle (issue 2, acceptance (c): RSS < 1 GB).

    .venv/bin/python benchmarks/bundle_memory.py [--size-mb 500] [--keep DIR]
    .venv/bin/python benchmarks/bundle_memory.py --end-to-end 12 [--one-bundle] [--preset local] [-- BUILD-CORPUS ARGS]

Builds `arXiv_src_2101_001.tar` in a temporary directory by repeating the submissions of the
project's sample (and of ../shared/corpora/arxiv when present) under new ids, then reads it in a
fresh process the way the pipeline does: index the tar headers, fetch and unpack every member in
memory. Prints bundle MB/s, submissions/s and the reader's peak RSS next to the peak RSS of the
same process before reading (the baseline: interpreter plus imports).

--end-to-end N (issue 18): `thmforge build-corpus --embed-model none` over N copies of the shared
2101 bundle (each copy its own bundle, member ids renumbered so no paper is a duplicate; with
--one-bundle all N copies in one bundle), and over one copy. Start-up is what one copy costs beyond its share of the work, so the LaTeX speed after
start-up is (N - 1) copies of LaTeX / (CPU of N copies - CPU of one copy); peak RSS is the largest
of the run's processes. Targets: >= 3 MB of LaTeX per CPU-second, peak <= 500 MB.

--metadata-mb M (with --end-to-end): both runs also get --metadata, a snapshot of M MB: a record
for every paper of the copies (the shared snapshot's records under the copies' ids) and filler
records of other ids, as the real snapshot holds millions of papers a run does not read.
--duplicates (with --end-to-end): one copy in its own bundle listed first, then the N copies in
one bundle: the first copy's papers are kept, so the big bundle's files are rewritten without
them after the pipeline (`transforms.duplicates`). --outputs DIR keeps the two runs' outputs.

--hostile: build-corpus over the inputs of tests/hostile/test_hostile_pipeline.py (every hostile
case in one bundle, plus a truncated bundle), with that test's options. Target: peak < 1 GB.
"""
from __future__ import annotations

import argparse
import gzip
import io
import json
import os
import pathlib
import resource
import subprocess
import sys
import tarfile
import tempfile
import time
from typing import Optional

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


SHARED_2101 = REPO.parent / "shared" / "corpora" / "arxiv" / "arXiv_src_2101_001.tar"
TEX_SUFFIXES = (".tex", ".sty", ".cls", ".bbl")     # what TeX reads of a submission: counted as LaTeX


def build_copies(folder: pathlib.Path, copies: int, one_bundle: bool = False, first_bundle: int = 1) -> float:
    """`copies` copies of the shared 2101 submissions, ids renumbered, each its own bundle (or all in
    one bundle), bundles numbered from `first_bundle`; returns MB of LaTeX in one copy."""
    with tarfile.open(SHARED_2101) as bundle:
        members = [(m.name, bundle.extractfile(m).read()) for m in bundle.getmembers() if m.isfile()]
    for bundle_copies in ([range(copies)] if one_bundle else [[copy] for copy in range(copies)]):
        with tarfile.open(folder / f"arXiv_src_2101_{bundle_copies[0] + first_bundle:03d}.tar", "w",
                          format=tarfile.USTAR_FORMAT) as out:
            for copy in bundle_copies:
                for name, payload in members:
                    info = tarfile.TarInfo(copy_name(name, copy))
                    info.size = len(payload)
                    out.addfile(info, io.BytesIO(payload))
    return sum(len(b) for name, payload in members if name.endswith(".gz")
               for b in _tex_files(gzip.decompress(payload))) / 1e6


def copy_name(name: str, copy: int) -> str:
    """The name (or id) of a shared 2101 submission in copy number `copy`: 90 copies a month from
    2101.10xxx (copy 90 is 2102.10xxx), so every copy is a valid arXiv id (`YYMM.NNNNN`). Before,
    copies from 90 on were `2101.100xx`, rejected as bad member names, and 144 copies read 90."""
    month, number = divmod(copy, 90)
    return name.replace("2101.99", f"{2101 + month}.{number + 10:02d}")


def write_metadata(path: pathlib.Path, copies: int, size_mb: int) -> None:
    """A snapshot with a record for every paper of `copies` copies, then filler records of ids no
    copy holds, up to `size_mb` MB."""
    shared = (SHARED_2101.parent / "arxiv-metadata-oai-snapshot.json").read_text().splitlines()
    records = [json.loads(line) for line in shared if line.strip()]
    with tarfile.open(SHARED_2101) as bundle:
        ids = [m.name.split("/")[-1][:-len(".gz")] for m in bundle.getmembers() if m.name.endswith(".gz")]
    written = 0
    with path.open("w") as out:
        for copy in range(copies):
            for position, paper_id in enumerate(ids):
                line = json.dumps({**records[position % len(records)], "id": copy_name(paper_id, copy)}) + "\n"
                written += out.write(line)
        filler = 0
        while written < size_mb * 1_000_000:
            record = {**records[filler % len(records)], "id": f"1501.{filler:05d}", "abstract": "x" * 1500}
            written += out.write(json.dumps(record) + "\n")
            filler += 1


def _tex_files(raw: bytes) -> list[bytes]:
    try:
        with tarfile.open(fileobj=io.BytesIO(raw)) as inner:
            return [inner.extractfile(m).read() for m in inner if m.isfile() and m.name.endswith(TEX_SUFFIXES)]
    except tarfile.ReadError:
        return [raw]


def timed_build(inputs: list[pathlib.Path], extra: list[str],
                keep: Optional[pathlib.Path] = None) -> tuple[float, float, float]:
    """(CPU seconds, wall seconds, peak RSS MB) of build-corpus in a fresh process (and its workers);
    the output goes to `keep` when given."""
    thmforge = str(pathlib.Path(sys.executable).with_name("thmforge"))
    with tempfile.TemporaryDirectory(prefix="thmforge-e2e-") as scratch:
        out = str(keep or scratch)
        started = time.perf_counter()
        pid = subprocess.Popen([thmforge, "build-corpus", "--input", *map(str, inputs), "--output", out,
                                "--embed-model", "none", "--no-progress", *extra],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).pid
        _, status, usage = os.wait4(pid, 0)
        wall = time.perf_counter() - started
    if status:
        raise SystemExit(f"build-corpus failed (status {status}): rerun it by hand to see why")
    children = resource.getrusage(resource.RUSAGE_CHILDREN)   # the SDK workers of local-parallel too
    return usage.ru_utime + usage.ru_stime, wall, max(usage.ru_maxrss, children.ru_maxrss) / 1024


def hostile() -> int:
    sys.path.insert(0, str(REPO / "tests" / "hostile"))
    import hostile_cases
    from tests.hostile.test_hostile_pipeline import write_inputs

    with tempfile.TemporaryDirectory(prefix="thmforge-hostile-") as scratch:
        inputs = write_inputs(pathlib.Path(scratch))
        cpu, wall, rss = timed_build([pathlib.Path(inputs)],
                                     ["--max-submission-bytes", str(hostile_cases.BOMB_LIMIT)])
    print(f"hostile inputs: {cpu:.1f} CPU-s, {wall:.1f} s wall, peak RSS {rss:.0f} MB "
          f"(target < 1024 MB: {'met' if rss < 1024 else 'NOT met'})")
    return 0 if rss < 1024 else 1


def end_to_end(copies: int, extra: list[str], one_bundle: bool = False, metadata_mb: int = 0,
               duplicates: bool = False, outputs: Optional[pathlib.Path] = None) -> int:
    with tempfile.TemporaryDirectory(prefix="thmforge-copies-") as scratch:
        one, many = pathlib.Path(scratch, "one"), pathlib.Path(scratch, "many")
        one.mkdir(), many.mkdir()
        mb = build_copies(one, 1)
        if duplicates:
            build_copies(many, 1)
            one_bundle = True
        build_copies(many, copies, one_bundle, first_bundle=2 if duplicates else 1)
        if metadata_mb:
            write_metadata(pathlib.Path(scratch, "metadata.json"), copies, metadata_mb)
            extra = [*extra, "--metadata", str(pathlib.Path(scratch, "metadata.json"))]
        kept = {name: outputs / name if outputs else None for name in ("one", "many")}
        cpu_one, wall_one, rss_one = timed_build(sorted(one.glob("*.tar")), extra, kept["one"])
        cpu_many, wall_many, rss_many = timed_build(sorted(many.glob("*.tar")), extra, kept["many"])
    speed = (copies - 1) * mb / (cpu_many - cpu_one)
    print(f"one copy ({mb:.2f} MB of LaTeX): {cpu_one:.1f} CPU-s, {wall_one:.1f} s wall, peak RSS {rss_one:.0f} MB")
    print(f"{copies} copies ({copies * mb:.1f} MB{', one bundle' if one_bundle else ''}): {cpu_many:.1f} CPU-s, {wall_many:.1f} s wall, "
          f"peak RSS {rss_many:.0f} MB")
    print(f"after start-up ({cpu_one - (cpu_many - cpu_one) / (copies - 1):.1f} CPU-s): {speed:.2f} MB of LaTeX "
          f"per CPU-second (target >= 3: {'met' if speed >= 3 else 'NOT met'}); peak RSS target <= 500 MB: "
          f"{'met' if rss_many <= 500 else 'NOT met'}")
    return 0 if speed >= 3 and rss_many <= 500 else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size-mb", type=int, default=500)
    parser.add_argument("--keep", default=None, help="build the bundle in this directory and keep it")
    parser.add_argument("--read", default=None, help=argparse.SUPPRESS)   # the measuring child process
    parser.add_argument("--end-to-end", type=int, default=0, metavar="N",
                        help="build-corpus over N copies of the shared 2101 bundle (see above)")
    parser.add_argument("--hostile", action="store_true", help="build-corpus over the hostile test inputs")
    parser.add_argument("--one-bundle", action="store_true",
                        help="with --end-to-end: the N copies in one bundle instead of N bundles")
    parser.add_argument("--metadata-mb", type=int, default=0, metavar="M",
                        help="with --end-to-end: a metadata snapshot of M MB (see above)")
    parser.add_argument("--duplicates", action="store_true",
                        help="with --end-to-end: one copy first, then the N copies in one bundle (see above)")
    parser.add_argument("--outputs", type=pathlib.Path, default=None, help="with --end-to-end: keep the outputs here")
    parser.add_argument("--preset", default="local")
    parser.add_argument("build_args", nargs="*", help="more build-corpus arguments (after --)")
    args = parser.parse_args()
    if args.hostile:
        return hostile()
    if args.end_to_end:
        return end_to_end(args.end_to_end, ["--preset", args.preset, *args.build_args], args.one_bundle,
                          args.metadata_mb, args.duplicates, args.outputs)
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
