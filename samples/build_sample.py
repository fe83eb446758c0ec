"""Build the sample corpus in arXiv's bulk format from the sources under samples/src/.

    python samples/build_sample.py            # writes samples/arxiv/

`src/YYMM/<id>/` (a folder) becomes the member `YYMM/<id>.gz`, a gzipped tar of the folder;
`src/YYMM/<id>.tex` becomes `YYMM/<id>.gz`, one gzipped .tex; `src/YYMM/<id>.pdf` is stored as is
(a PDF-only submission). Each month is one bundle `arXiv_src_YYMM_001.tar`. `src/metadata.jsonl`
becomes `arxiv-metadata-oai-snapshot.json`. Fixed mtimes, owners and member order make the output
byte-for-byte reproducible, so the committed tars can be checked against a rebuild.
"""
from __future__ import annotations

import gzip
import io
import pathlib
import sys
import tarfile

HERE = pathlib.Path(__file__).resolve().parent
SRC = HERE / "src"
OUT = HERE / "arxiv"
MTIME = 1_614_556_800  # 2021-03-01T00:00:00Z


def _tar_info(name: str, size: int) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.size, info.mtime, info.mode = size, MTIME, 0o644
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    return info


def tar_bytes(files: dict[str, bytes]) -> bytes:
    """An uncompressed ustar archive of `files`, members in sorted order."""
    sink = io.BytesIO()
    with tarfile.open(fileobj=sink, mode="w", format=tarfile.USTAR_FORMAT) as archive:
        for name in sorted(files):
            archive.addfile(_tar_info(name, len(files[name])), io.BytesIO(files[name]))
    return sink.getvalue()


def gzip_bytes(data: bytes) -> bytes:
    sink = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=sink, mtime=0, compresslevel=9) as stream:
        stream.write(data)
    return sink.getvalue()


def submission_member(path: pathlib.Path) -> tuple[str, bytes]:
    """(member name, bytes) of one source entry of a month folder."""
    month = path.parent.name
    if path.is_dir():
        files = {p.relative_to(path).as_posix(): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}
        return f"{month}/{path.name}.gz", gzip_bytes(tar_bytes(files))
    if path.suffix == ".tex":
        return f"{month}/{path.stem}.gz", gzip_bytes(path.read_bytes())
    if path.suffix == ".pdf":
        return f"{month}/{path.name}", path.read_bytes()
    raise ValueError(f"unexpected sample source {path}")


def build(out: pathlib.Path = OUT) -> list[pathlib.Path]:
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for month in sorted(p for p in SRC.iterdir() if p.is_dir()):
        members = dict(submission_member(entry) for entry in sorted(month.iterdir()))
        bundle = out / f"arXiv_src_{month.name}_001.tar"
        bundle.write_bytes(tar_bytes(members))
        written.append(bundle)
    snapshot = out / "arxiv-metadata-oai-snapshot.json"
    snapshot.write_bytes((SRC / "metadata.jsonl").read_bytes())
    written.append(snapshot)
    return written


if __name__ == "__main__":
    for path in build(pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else OUT):
        print(path)
