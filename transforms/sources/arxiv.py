"""arXiv source bundles (`arXiv_src_YYMM_NNN.tar`), unpacked submission folders and the metadata snapshot.

Reading is split in two so that a ~500 MB bundle is never held in memory and papers spread across
workers: `index` scans a bundle's tar headers and yields one small `MemberRef` (bundle, offset, size)
per submission; `fetch` later reads just that member (a seek, or one ranged GET on S3) and unpacks it
in memory with the limits of `archive`. Member names and ids: `arxiv_ids`; folders: `folder`.
"""
from __future__ import annotations

import dataclasses
import email.utils
import functools
import json
import os
import re
import tarfile
from typing import BinaryIO, Iterator, Optional

from transforms.latex.model import Event, ExtractionResult, Limits, Submission
from transforms.sources import archive, base, folder
from transforms.sources.arxiv_ids import (SOURCE, MemberRef, empty_submission, member_ref,
                                          strip_archive_suffix)
from transforms.sources.base import (InputIndex, InvalidIdentifier, Source, checked_id, group_name,
                                     input_name, unique_refs)

BUNDLE_NAME = re.compile(r"^arXiv_src_(\d{4})_(\d{3})\.tar$")


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

def index_bundle(path: str, store: BundleStore = BundleStore()) -> InputIndex:
    """Scan a bundle's tar headers (seeking over the data when the file allows) into refs."""
    name = input_name(path)
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
                                            f"{exc}; indexed {len(refs)} members", name))
                        break
                    if info is None:
                        break
                    if info.isdir():
                        continue
                    where = f"{name}!{ascii(info.name)[1:-1]}"
                    if not info.isfile():
                        events.append(Event("read", "unsafe-member", "link or special file in bundle ignored",
                                            where))
                        continue
                    try:
                        refs.append(member_ref(info.name, path, info.offset_data, info.size))
                    except InvalidIdentifier as exc:
                        events.append(Event("read", "bad-member-name", str(exc), where))
    except (OSError, tarfile.TarError, EOFError) as exc:
        events.append(Event("read", "unreadable-bundle", f"{type(exc).__name__}: {exc}", name, fatal=True))
    return InputIndex(group_name(path), name, refs, events)


def expand_inputs(inputs: list[str], store: BundleStore = BundleStore()) -> list[str]:
    """Globs expanded, in input order, local paths made absolute; a folder holding bundles stands
    for its bundles.

    Raises FileNotFoundError naming the inputs that match nothing (bad input loses nothing
    silently).
    """
    paths: list[str] = []
    missing: list[str] = []
    for pattern in inputs:
        if os.path.isdir(pattern):
            pattern = os.path.abspath(pattern)
            bundles = sorted(n for n in os.listdir(pattern) if BUNDLE_NAME.match(n))
            paths.extend([os.path.join(pattern, n) for n in bundles] or [pattern])
            continue
        found = store.match(pattern if "://" in pattern else os.path.abspath(pattern))
        if not found:
            missing.append(pattern)
        paths.extend(found)
    if missing:
        raise FileNotFoundError(f"no input matches {', '.join(missing)}")
    return list(dict.fromkeys(paths))


# ---------------------------------------------------------------------------------------- fetch

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
        single_name = os.path.basename(strip_archive_suffix(ref.member)[0]) + ".tex"
        unpacked = archive.unpack_submission(data, single_name, limits, ref.location)
        sub.files = unpacked.files
        sub.events.extend(unpacked.events)
    return sub


# ---------------------------------------------------------------------------------------- metadata

def parse_metadata_line(line: str) -> Optional[tuple[str, dict]]:
    """One line of `arxiv-metadata-oai-snapshot.json` to (arXiv id, record); None for a blank line.

    Raises ValueError on a line that is not a JSON object with a valid id.
    """
    if not line.strip():
        return None
    record = json.loads(line)
    if not isinstance(record, dict) or not isinstance(record.get("id"), str):
        raise ValueError("metadata line is not a JSON object with an 'id'")
    return checked_id(record["id"], "metadata id"), record


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




# ---------------------------------------------------------------------------------------- the source

@dataclasses.dataclass(frozen=True)
class Arxiv(Source):
    """arXiv bundles and folders, joined with the metadata snapshot by id."""

    name = SOURCE
    takes_metadata = True
    requester_pays: bool = False
    s3: Optional[object] = dataclasses.field(default=None, compare=False)  # a RequesterPaysS3 (tests)

    @property
    def store(self) -> BundleStore:
        return BundleStore(requester_pays=self.requester_pays, s3=self.s3)

    def expand_inputs(self, inputs: list[str]) -> list[str]:
        return expand_inputs(inputs, self.store)

    def count_papers(self, inputs: list[str]) -> Optional[int]:
        """Local inputs only: a scan of the tar headers."""
        if any("://" in path for path in inputs):
            return None
        return sum(len(unique_refs(self.index(path, Limits())).refs) for path in inputs)

    def index(self, path: str, limits: Limits) -> InputIndex:
        return folder.index_folder(path) if os.path.isdir(path) else index_bundle(path, self.store)

    def fetch(self, ref: MemberRef, limits: Limits) -> Submission:
        if ref.in_folder:
            return folder.fetch_entry(ref, limits)
        needs_bytes = ref.kind == "member" and not _too_large(ref, limits)
        data = self.store.read_range(ref.bundle, ref.offset, ref.size) if needs_bytes else b""
        return submission_from_bytes(ref, data, limits)

    def failed_fetch(self, ref: MemberRef, event: Event) -> Submission:
        sub = empty_submission(ref)
        sub.events.append(event)
        return sub

    def extract(self, submission: Submission, limits: Limits) -> ExtractionResult:
        return extract(submission, limits)

    def parse_metadata_line(self, line: str) -> Optional[tuple[str, dict]]:
        return parse_metadata_line(line)

    def attach_metadata(self, submission: Submission, record: dict) -> Submission:
        """The record as papers columns; the year comes from the first version's date."""
        submission.metadata = paper_metadata(record)
        submission.year = submission.metadata.get("year") or submission.year
        return submission


def extract(submission: Submission, limits: Limits = Limits()) -> ExtractionResult:
    """Theorem-like statements of one submission (the shared LaTeX extractor; never raises)."""
    from transforms.latex.extract import extract_submission

    return extract_submission(submission.files, limits=limits)


def read(inputs: list[str], limits: Limits = Limits(), store: BundleStore = BundleStore()) -> Iterator[Submission]:
    """Every submission of the inputs, one at a time (bundles are read member by member)."""
    return base.read(Arxiv(requester_pays=store.requester_pays, s3=store.s3), inputs, limits)
