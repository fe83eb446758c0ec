"""arXiv source bundles (`arXiv_src_YYMM_NNN.tar`), unpacked submission folders and the metadata snapshot.

Reading is split in two so that a ~500 MB bundle is never held in memory and papers spread across
workers: `index` scans a bundle's tar headers and yields one small `MemberRef` (bundle, offset, size)
per submission; `fetch` later reads just that member (a seek, or one ranged GET on S3) and unpacks it
in memory with the limits of `archive`. `read` chains the two for use outside Beam.

Member names: `YYMM/<id>.gz` (gzipped tar or single gzipped file), `YYMM/<id>.pdf` (PDF only,
skipped). Old-style ids lose their slash: `math9901999` is `math/9901999`.
"""
from __future__ import annotations

import dataclasses
import email.utils
import functools
import json
import os
import posixpath
import re
import tarfile
from typing import BinaryIO, Iterator, Optional

from transforms.latex.model import Event, ExtractionResult, Limits, Submission
from transforms.sources import archive

SOURCE = "arxiv"
ABS_URL = "https://arxiv.org/abs/"
BUNDLE_NAME = re.compile(r"^arXiv_src_(\d{4})_(\d{3})\.tar$")
_NEW_ID = re.compile(r"^(\d{4}\.\d{4,5})(v\d+)?$")
_OLD_ID = re.compile(r"^([A-Za-z][A-Za-z.\-]*)(\d{7})(v\d+)?$")
_ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".tar", ".gz")


# ---------------------------------------------------------------------------------------- ids

def parse_stem(stem: str) -> tuple[str, Optional[str]]:
    """A member or folder name without extension to (arXiv id, version or None).

    `2101.99001` -> `2101.99001`; `math9901999` -> `math/9901999`; `hep-th9901001v2` ->
    (`hep-th/9901001`, `v2`). Names that are no arXiv id are kept as they are.
    """
    if match := _NEW_ID.match(stem):
        return match.group(1), match.group(2)
    if match := _OLD_ID.match(stem):
        return f"{match.group(1)}/{match.group(2)}", match.group(3)
    return stem, None


def year_from_id(source_id: str) -> Optional[int]:
    """The year encoded in an arXiv id's YYMM (1991 onwards), or None for other names."""
    digits = source_id.rsplit("/", 1)[-1]
    if not (_NEW_ID.match(digits) or (len(digits) >= 7 and digits[:7].isdigit())):
        return None
    yy = int(digits[:2])
    return 1900 + yy if yy >= 91 else 2000 + yy


def paper_id(source_id: str) -> str:
    return f"{SOURCE}:{source_id}"


def strip_archive_suffix(name: str) -> tuple[str, str]:
    """(`stem`, `suffix`) of a member or file name, `suffix` one of .tar.gz .tgz .tar .gz .pdf or ''."""
    lower = name.lower()
    for suffix in _ARCHIVE_SUFFIXES + (".pdf",):
        if lower.endswith(suffix):
            return name[: -len(suffix)], suffix
    return name, ""


def group_name(path: str) -> str:
    """A file-name-safe name of one input (bundle or folder): names the output files it owns."""
    base = posixpath.basename(path.rstrip("/")) or "input"
    for suffix in (".tar", ".tar.gz", ".tgz"):
        if base.endswith(suffix):
            base = base[: -len(suffix)]
    return re.sub(r"[^A-Za-z0-9._]+", "_", base)


# ---------------------------------------------------------------------------------------- storage

@functools.lru_cache(maxsize=1)
def _default_s3():
    """One requester-pays reader (one boto3 client) per worker process."""
    from transforms.sources.s3_requester_pays import RequesterPaysS3

    return RequesterPaysS3()


@dataclasses.dataclass(frozen=True)
class BundleStore:
    """Where bundles are read from: Beam's filesystems, or boto3 for requester-pays `s3://`."""

    requester_pays: bool = False
    s3: Optional[object] = dataclasses.field(default=None, compare=False)  # a RequesterPaysS3

    def _s3(self):
        return self.s3 if self.s3 is not None else _default_s3()

    def _uses_s3(self, path: str) -> bool:
        return self.requester_pays and path.startswith("s3://")

    def match(self, pattern: str) -> list[str]:
        if self._uses_s3(pattern):
            return self._s3().match(pattern)
        from apache_beam.io.filesystems import FileSystems

        if not any(ch in pattern for ch in "*?["):
            return [pattern] if FileSystems.exists(pattern) else []
        (result,) = FileSystems.match([pattern])
        return sorted(m.path for m in result.metadata_list)

    def open_stream(self, path: str) -> BinaryIO:
        if self._uses_s3(path):
            return self._s3().open_stream(path)
        from apache_beam.io.filesystem import CompressionTypes
        from apache_beam.io.filesystems import FileSystems

        return FileSystems.open(path, compression_type=CompressionTypes.UNCOMPRESSED)

    def read_range(self, path: str, offset: int, size: int) -> bytes:
        if self._uses_s3(path):
            return self._s3().read_range(path, offset, size)
        with self.open_stream(path) as handle:
            handle.seek(offset)
            return handle.read(size)


# ---------------------------------------------------------------------------------------- index

@dataclasses.dataclass(frozen=True)
class MemberRef:
    """One submission of an input, small enough to shuffle: where its bytes are, not the bytes."""

    source_id: str
    group: str                 # the input it came from (bundle or folder name)
    bundle: str                # path or URL of the bundle (or of the folder input)
    member: str                # member name inside the bundle, or path of the file/folder
    kind: str                  # "member" | "pdf" | "unsupported" | "folder" | "file"
    offset: int = 0
    size: int = 0
    version: Optional[str] = None

    @property
    def location(self) -> str:
        return f"{self.bundle}!{self.member}" if self.kind in ("member", "pdf", "unsupported") else self.member


@dataclasses.dataclass
class BundleIndex:
    """What indexing one input found: its submissions and any damage to the input itself."""

    group: str
    bundle: str
    refs: list[MemberRef]
    events: list[Event]


def member_ref(name: str, bundle: str, group: str, offset: int, size: int) -> MemberRef:
    """The ref of bundle member `name` (e.g. `2101/2101.99001.gz`, `9901/math9901999.pdf`)."""
    stem, suffix = strip_archive_suffix(posixpath.basename(name))
    source_id, version = parse_stem(stem)
    kind = {".gz": "member", ".pdf": "pdf", ".tar.gz": "member", ".tgz": "member", ".tar": "member"}.get(
        suffix, "unsupported")
    return MemberRef(source_id, group, bundle, name, kind, offset, size, version)


def index_bundle(path: str, store: BundleStore = BundleStore()) -> BundleIndex:
    """Scan a bundle's tar headers (seeking over the data when the file allows) into refs."""
    group = group_name(path)
    refs: list[MemberRef] = []
    events: list[Event] = []
    try:
        with store.open_stream(path) as handle:
            seekable = getattr(handle, "seekable", lambda: False)()
            with tarfile.open(fileobj=handle, mode="r:" if seekable else "r|") as bundle:
                while True:
                    try:
                        info = bundle.next()
                    except (tarfile.TarError, EOFError, OSError) as exc:
                        events.append(Event("read", "truncated-bundle",
                                            f"{exc}; indexed {len(refs)} members", path))
                        break
                    if info is None:
                        break
                    if info.isdir():
                        continue
                    if not info.isfile():
                        events.append(Event("read", "unsafe-member", "link or special file in bundle ignored",
                                            f"{path}!{info.name}"))
                        continue
                    refs.append(member_ref(info.name, path, group, info.offset_data, info.size))
    except (OSError, tarfile.TarError, EOFError) as exc:
        events.append(Event("read", "unreadable-bundle", f"{type(exc).__name__}: {exc}", path, fatal=True))
    return BundleIndex(group, path, refs, events)


def index(inputs: list[str], store: BundleStore = BundleStore()) -> Iterator[BundleIndex]:
    """Every input (bundle path, glob, URL, or local folder of submissions) as a `BundleIndex`."""
    from transforms.sources import folder

    for path in expand_inputs(inputs, store):
        if os.path.isdir(path):
            yield folder.index_folder(path)
        else:
            yield index_bundle(path, store)


def expand_inputs(inputs: list[str], store: BundleStore = BundleStore()) -> list[str]:
    """Globs expanded, in input order; a folder holding bundles stands for its bundles.

    Raises FileNotFoundError naming the inputs that match nothing (bad input loses nothing
    silently).
    """
    paths: list[str] = []
    missing: list[str] = []
    for pattern in inputs:
        if os.path.isdir(pattern):
            bundles = sorted(n for n in os.listdir(pattern) if BUNDLE_NAME.match(n))
            paths.extend([os.path.join(pattern, n) for n in bundles] or [pattern])
            continue
        found = store.match(pattern)
        if not found:
            missing.append(pattern)
        paths.extend(found)
    if missing:
        raise FileNotFoundError(f"no input matches {', '.join(missing)}")
    return list(dict.fromkeys(paths))


# ---------------------------------------------------------------------------------------- fetch

def empty_submission(ref: MemberRef) -> Submission:
    """The submission a ref names, with no files yet."""
    return Submission(paper_id=paper_id(ref.source_id), source=SOURCE, source_id=ref.source_id, files={},
                      version=ref.version, bundle=ref.bundle, member=ref.member,
                      year=year_from_id(ref.source_id), url=ABS_URL + ref.source_id)


def _too_large(ref: MemberRef, limits: Limits) -> bool:
    return ref.kind == "member" and ref.size > limits.max_submission_bytes


def submission_from_bytes(ref: MemberRef, data: bytes, limits: Limits) -> Submission:
    """A submission from its member's bytes (unpacked in memory with the limits)."""
    sub = empty_submission(ref)
    if ref.kind == "pdf":
        sub.skip_reason = "pdf-only"
    elif ref.kind == "unsupported":
        sub.skip_reason = "unsupported-member"
    elif _too_large(ref, limits):
        sub.events.append(Event("read", "submission-too-large",
                                f"{ref.size} compressed bytes > {limits.max_submission_bytes}",
                                ref.location, fatal=True))
    else:
        if len(data) < ref.size:
            sub.events.append(Event("read", "truncated-bundle",
                                    f"member has {len(data)} of {ref.size} bytes", ref.location))
        single_name = posixpath.basename(strip_archive_suffix(ref.member)[0]) + ".tex"
        unpacked = archive.unpack_submission(data, single_name, limits, ref.location)
        sub.files = unpacked.files
        sub.events.extend(unpacked.events)
    return sub


def fetch(ref: MemberRef, limits: Limits = Limits(), store: BundleStore = BundleStore()) -> Submission:
    """Read one indexed submission (bundle member, or folder entry) into memory."""
    if ref.kind in ("folder", "file"):
        from transforms.sources import folder

        return folder.fetch_entry(ref, limits)
    needs_bytes = ref.kind == "member" and not _too_large(ref, limits)
    data = store.read_range(ref.bundle, ref.offset, ref.size) if needs_bytes else b""
    return submission_from_bytes(ref, data, limits)


def read(inputs: list[str], limits: Limits = Limits(), store: BundleStore = BundleStore()) -> Iterator[Submission]:
    """Every submission of the inputs, one at a time (bundles are read member by member)."""
    for found in index(inputs, store):
        for ref in found.refs:
            yield fetch(ref, limits, store)


def extract(submission: Submission, limits: Limits = Limits()) -> ExtractionResult:
    """Theorem-like statements of one submission (the shared LaTeX extractor; never raises)."""
    from transforms.latex.extract import extract_submission

    return extract_submission(submission.files, limits=limits)


# ---------------------------------------------------------------------------------------- metadata

def parse_metadata_line(line: str) -> Optional[tuple[str, dict]]:
    """One line of `arxiv-metadata-oai-snapshot.json` to (arXiv id, record); None for a blank line.

    Raises ValueError on a line that is not a JSON object with an id.
    """
    if not line.strip():
        return None
    record = json.loads(line)
    if not isinstance(record, dict) or not isinstance(record.get("id"), str):
        raise ValueError("metadata line is not a JSON object with an 'id'")
    return record["id"].strip(), record


def _iso_date(value: Optional[str]) -> Optional[str]:
    if not value:
        return None
    try:
        return email.utils.parsedate_to_datetime(value).date().isoformat()
    except (TypeError, ValueError):
        return None


def _clean(text: Optional[str]) -> Optional[str]:
    return " ".join(text.split()) if isinstance(text, str) and text.strip() else None


def _author_name(parsed: list) -> str:
    last, first, suffix = (list(parsed) + ["", "", ""])[:3]
    return " ".join(part for part in (first, last, suffix) if part).strip()


def paper_metadata(record: Optional[dict]) -> dict:
    """The `papers` columns a metadata record fills (title, authors, categories, dates, ...)."""
    if not record:
        return {"has_metadata": False}
    categories = (record.get("categories") or "").split()
    authors = [_author_name(a) for a in record.get("authors_parsed") or [] if a]
    if not authors and record.get("authors"):
        authors = [a.strip() for a in re.split(r",| and ", record["authors"]) if a.strip()]
    versions = record.get("versions") or []
    created = _iso_date(versions[0].get("created")) if versions else None
    return {
        "has_metadata": True,
        "title": _clean(record.get("title")),
        "authors": authors,
        "categories": categories,
        "primary_category": categories[0] if categories else None,
        "abstract": _clean(record.get("abstract")),
        "license": record.get("license"),
        "doi": record.get("doi"),
        "journal_ref": _clean(record.get("journal-ref")),
        "version": versions[-1].get("version") if versions else None,
        "created": created,
        "updated": record.get("update_date"),
        "year": int(created[:4]) if created else None,
    }


def attach_metadata(submission: Submission, record: Optional[dict]) -> Submission:
    """The submission with its metadata record; the year comes from the first version's date."""
    submission.metadata = record
    year = paper_metadata(record).get("year")
    if year:
        submission.year = year
    return submission
