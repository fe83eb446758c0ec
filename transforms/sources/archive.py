"""Safe, bounded unpacking of one submission's archive in memory (never onto disk).

arXiv members are a gzipped tar, a gzipped single file, or (rarely) either of those uncompressed.
Everything here works on bytes and returns the files it could read plus `Event`s for what it
refused or could not read: unsafe member paths, links, devices, truncated or corrupt data, and the
size and count limits that guard against gzip and tar bombs.
"""
from __future__ import annotations

import dataclasses
import gzip
import io
import os
import posixpath
import tarfile
import zlib
from typing import Optional

from transforms.latex.mainfile import is_source_name
from transforms.latex.model import Event, Limits

GZIP_MAGIC = b"\x1f\x8b"
_CHUNK = 1 << 20
ENTRIES_PER_FILE_LIMIT = 4     # entries (and bytes) read, as a multiple of the file (and size) limit, before reading stops
RECORDED_PER_CLASS = 20        # events of one class recorded one by one; the rest are counted


@dataclasses.dataclass
class Unpacked:
    """The files of one submission and the problems met while reading them."""

    files: dict[str, bytes]
    events: list[Event]

    @property
    def fatal(self) -> bool:
        return any(e.fatal for e in self.events)


def gunzip_bounded(data: bytes, limit: int, location: str) -> tuple[bytes, list[Event]]:
    """Decompress (possibly multi-member) gzip data, stopping at `limit` bytes of output.

    Output is produced chunk by chunk, so a bomb never costs more than `limit` bytes of memory.
    Truncated or corrupt input keeps what was decompressed before the damage.
    """
    out = bytearray()
    events: list[Event] = []
    decoder = zlib.decompressobj(wbits=31)
    pending = data
    while pending:
        try:
            out += decoder.decompress(pending, limit + 1 - len(out))
        except zlib.error as exc:
            events.append(Event("read", "corrupt-gzip", str(exc), location))
            return bytes(out), events
        if len(out) > limit:
            events.append(Event("read", "submission-too-large",
                                f"more than {limit} bytes after decompression", location, fatal=True))
            return bytes(out[:limit]), events
        pending = decoder.unconsumed_tail
        if decoder.eof:
            pending = decoder.unused_data
            if not pending.strip(b"\0"):
                return bytes(out), events
            if not pending.startswith(GZIP_MAGIC):
                events.append(Event("read", "trailing-garbage",
                                    f"{len(pending)} bytes after the gzip stream ignored", location))
                return bytes(out), events
            decoder = zlib.decompressobj(wbits=31)
    if not decoder.eof:
        events.append(Event("read", "truncated-gzip",
                            f"gzip stream ends early; kept {len(out)} bytes", location))
    return bytes(out), events


def _gunzip_head(data: bytes) -> bytes:
    """The first tar block of gzip data (empty when it does not decompress)."""
    try:
        return zlib.decompressobj(wbits=31).decompress(data, 512)
    except zlib.error:
        return b""


def safe_member_path(name: str) -> str | None:
    """The member's path relative to the submission, or None when it points outside it."""
    if name.startswith(("/", "\\")) or (len(name) > 1 and name[1] == ":"):
        return None
    parts = [p for p in name.replace("\\", "/").split("/") if p not in ("", ".")]
    if not parts or ".." in parts:
        return None
    return posixpath.join(*parts)


def looks_like_tar(data: bytes) -> bool:
    """True when `data` starts with a tar header (ustar magic, or a valid old-style checksum)."""
    if len(data) < 512:
        return False
    if data[257:262] == b"ustar":
        return True
    try:
        tarfile.TarInfo.frombuf(data[:512], "utf-8", "surrogateescape")
    except tarfile.HeaderError:
        return False
    return True


class FileBudget:
    """The limits of one submission, applied as its entries arrive (tar members, folder files).

    Every entry counts, directories and links too. Past `max_files` entries only TeX sources are
    kept (figures and data are left unread and counted); more than `max_files` TeX sources, or
    more bytes than `max_submission_bytes`, fail the submission. Reading stops (keeping what was
    read) after `ENTRIES_PER_FILE_LIMIT * max_files` entries. Repeated refusals of one class are
    recorded `RECORDED_PER_CLASS` times, then counted in one event, so a member of 200,000 links
    writes a few failure rows, not 200,000.
    """

    def __init__(self, limits: Limits, location: str):
        self.limits, self.location = limits, location
        self.events: list[Event] = []
        self.entries = self.sources = self.total = self.left_unread = 0
        self.repeated: dict[str, int] = {}

    def record(self, event: Event) -> None:
        seen = self.repeated[event.error_class] = self.repeated.get(event.error_class, 0) + 1
        if event.fatal or seen <= RECORDED_PER_CLASS:
            self.events.append(event)

    def stop_reading(self, bytes_read: int = 0) -> bool:
        """Count one entry; True once too many entries (or bytes, files left out included) were read."""
        self.entries += 1
        if self.entries > ENTRIES_PER_FILE_LIMIT * self.limits.max_files:
            self.events.append(Event("read", "too-many-entries",
                                     f"more than {self.entries - 1} entries; the rest is not read", self.location))
            return True
        if bytes_read > ENTRIES_PER_FILE_LIMIT * self.limits.max_submission_bytes:
            self.events.append(Event("read", "submission-too-large",
                                     f"{bytes_read} bytes read, files left out included; the rest is not read",
                                     self.location))
            return True
        return False

    def admit(self, path: str, size: int, where: str) -> Optional[bool]:
        """Keep this file? None: the submission fails (the event is recorded)."""
        if size > self.limits.max_file_bytes:
            self.record(Event("read", "file-too-large", f"{size} bytes > {self.limits.max_file_bytes}; file ignored",
                              where))
            return False
        source = is_source_name(path)
        self.sources += source
        if self.sources > self.limits.max_files:
            self.record(Event("read", "too-many-files", f"more than {self.limits.max_files} TeX files",
                              self.location, fatal=True))
            return None
        if self.entries > self.limits.max_files and not source:
            self.left_unread += 1
            return False
        self.total += size
        if self.total > self.limits.max_submission_bytes:
            self.record(Event("read", "submission-too-large",
                              f"files exceed {self.limits.max_submission_bytes} bytes", self.location, fatal=True))
            return None
        return True

    def finish(self) -> list[Event]:
        """The events, with one for what the limits left out in bulk."""
        events = list(self.events)
        if self.left_unread:
            events.append(Event("read", "too-many-files",
                                f"{self.entries} entries, more than {self.limits.max_files}: {self.left_unread} files "
                                "other than TeX sources left unread", self.location))
        for error_class, seen in sorted(self.repeated.items()):
            if seen > RECORDED_PER_CLASS:
                events.append(Event("read", error_class,
                                    f"{seen - RECORDED_PER_CLASS} more of these not recorded one by one", self.location))
        return events


_READ_ERRORS = (tarfile.TarError, EOFError, OSError, zlib.error)   # OSError: gzip.BadGzipFile


def untar_bounded(data: bytes, limits: Limits, location: str) -> Unpacked:
    """Regular files of an in-memory tar, refusing unsafe members and enforcing the limits."""
    return _untar(io.BytesIO(data), "r:", limits, location)


class _GzipStream:
    """Gzip data decompressed as it is read; truncation or corruption ends the stream, recorded as an
    event, so the tar reader keeps the members that came before the damage."""

    def __init__(self, data: bytes, location: str):
        self.gzip = gzip.GzipFile(fileobj=io.BytesIO(data), mode="rb")
        self.location = location
        self.position = 0
        self.events: list[Event] = []

    def read(self, size: int = -1) -> bytes:
        if self.events:
            return b""
        try:
            chunk = self.gzip.read(size)
        except EOFError:
            self.events.append(Event("read", "truncated-gzip", f"gzip stream ends early; kept {self.position} bytes",
                                     self.location))
            return b""
        except (OSError, zlib.error) as exc:
            self.events.append(Event("read", "corrupt-gzip", f"{exc}; kept {self.position} bytes", self.location))
            return b""
        self.position += len(chunk)
        return chunk

    def tell(self) -> int:
        return self.position


def untar_gzip_stream(data: bytes, limits: Limits, location: str) -> Unpacked:
    """Regular files of a gzipped tar, decompressed as they are read: only the files kept are ever
    in memory, however large the members left out (a 1 MB bomb of seven 60 MiB files costs little)."""
    stream = _GzipStream(data, location)
    unpacked = _untar(stream, "r|", limits, location)
    unpacked.events[:0] = stream.events
    return unpacked


def _untar(fileobj, mode: str, limits: Limits, location: str) -> Unpacked:
    files: dict[str, bytes] = {}
    budget = FileBudget(limits, location)
    try:
        archive = tarfile.open(fileobj=fileobj, mode=mode)
    except _READ_ERRORS as exc:
        return Unpacked({}, [Event("read", "corrupt-tar", str(exc), location, fatal=True)])
    with archive:
        while True:
            try:
                member = archive.next()
            except _READ_ERRORS as exc:
                budget.record(Event("read", "truncated-tar", f"{exc}; kept {len(files)} files", location))
                break
            if member is None or budget.stop_reading(fileobj.tell()):
                break
            where = f"{location}/{member.name}"
            if member.isdir():
                continue
            if not member.isfile():
                what = "symlink" if member.issym() else "hardlink" if member.islnk() else "device or special file"
                budget.record(Event("read", "unsafe-member", f"{what} ignored", where))
                continue
            path = safe_member_path(member.name)
            if path is None:
                budget.record(Event("read", "unsafe-member", "path outside the submission ignored", where))
                continue
            keep = budget.admit(path, member.size, where)
            if keep is None:
                break
            if not keep:
                continue
            try:
                content = archive.extractfile(member).read()
            except _READ_ERRORS as exc:
                budget.record(Event("read", "truncated-tar", f"{exc}; file ignored", where))
                break
            if len(content) < member.size:
                budget.record(Event("read", "truncated-tar",
                                    f"{len(content)} of {member.size} bytes; file ignored", where))
                break
            files[path] = content
    return Unpacked(files, budget.finish())


def unpack_submission(data: bytes, single_name: str, limits: Limits, location: str) -> Unpacked:
    """One arXiv member (`<id>.gz`, or an uncompressed tar or file) to its files.

    The format is decided by content, not by name: gzip magic, then a tar header, else one file
    named `single_name`.
    """
    events: list[Event] = []
    if not data:
        return Unpacked({}, [Event("read", "empty-member", "zero-byte member", location, fatal=True)])
    if len(data) > limits.max_submission_bytes:
        return Unpacked({}, [Event("read", "submission-too-large",
                                   f"{len(data)} compressed bytes > {limits.max_submission_bytes}",
                                   location, fatal=True)])
    if data.startswith(GZIP_MAGIC) and looks_like_tar(_gunzip_head(data)):
        unpacked = untar_gzip_stream(data, limits, location)
        if not unpacked.files and not unpacked.fatal:
            unpacked.events.append(Event("read", "empty-member", "archive holds no readable file",
                                         location, fatal=True))
        return unpacked
    if data.startswith(GZIP_MAGIC):
        data, events = gunzip_bounded(data, min(limits.max_file_bytes, limits.max_submission_bytes), location)
        if any(e.fatal for e in events):
            return Unpacked({}, events)
        if not data:   # the corruption, when there was one, is the reason nothing came out
            corrupt = next((e for e in events if e.error_class == "corrupt-gzip"), None)
            if corrupt is not None:
                corrupt.fatal = True
            else:
                events.append(Event("read", "empty-member", "nothing could be decompressed", location, fatal=True))
            return Unpacked({}, events)
    if looks_like_tar(data):
        unpacked = untar_bounded(data, limits, location)
        unpacked.events[:0] = events
        if not unpacked.files and not unpacked.fatal:
            unpacked.events.append(Event("read", "empty-member", "archive holds no readable file",
                                         location, fatal=True))
        return unpacked
    if len(data) > limits.max_file_bytes:
        events.append(Event("read", "file-too-large", f"{len(data)} bytes > {limits.max_file_bytes}",
                            location, fatal=True))
        return Unpacked({}, events)
    return Unpacked({single_name: data}, events)


def read_tree(root: str, limits: Limits, suffixes: Optional[tuple[str, ...]] = None) -> Unpacked:
    """Regular files under `root` (only names ending in `suffixes`, when given) as relative POSIX
    paths, within the limits; links are never followed and hidden folders are skipped."""
    files: dict[str, bytes] = {}
    where = os.path.basename(root.rstrip(os.sep))   # stored locations never hold the path as typed
    budget = FileBudget(limits, where)
    for current, dirs, names in os.walk(root, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        if current != root and budget.stop_reading():          # a folder is an entry too
            return Unpacked(files, budget.finish())
        for name in sorted(names):
            if suffixes and not name.lower().endswith(suffixes):
                continue
            if budget.stop_reading():
                return Unpacked(files, budget.finish())
            full = os.path.join(current, name)
            rel = os.path.relpath(full, root).replace(os.sep, "/")
            if os.path.islink(full) or not os.path.isfile(full):
                budget.record(Event("read", "unsafe-member", "link or special file ignored", rel))
                continue
            keep = budget.admit(rel, os.path.getsize(full), rel)
            if keep is None:
                return Unpacked(files, budget.finish())
            if keep:
                with open(full, "rb") as handle:
                    files[rel] = handle.read()
    return Unpacked(files, budget.finish())
