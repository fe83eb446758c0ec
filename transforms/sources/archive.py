"""Safe, bounded unpacking of one submission's archive in memory (never onto disk).

arXiv members are a gzipped tar, a gzipped single file, or (rarely) either of those uncompressed.
Everything here works on bytes and returns the files it could read plus `Event`s for what it
refused or could not read: unsafe member paths, links, devices, truncated or corrupt data, and the
size and count limits that guard against gzip and tar bombs.
"""
from __future__ import annotations

import dataclasses
import io
import os
import posixpath
import tarfile
import zlib
from typing import Optional

from transforms.latex.model import Event, Limits

GZIP_MAGIC = b"\x1f\x8b"
_CHUNK = 1 << 20


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


def limit_event(limits: Limits, kept: int, total: int, size: int, where: str, location: str) -> Optional[Event]:
    """Why a file of `size` bytes cannot join `kept` files of `total` bytes: too large alone (the
    file is ignored), or too many files or bytes (the submission fails); None when it fits."""
    if size > limits.max_file_bytes:
        return Event("read", "file-too-large", f"{size} bytes > {limits.max_file_bytes}; file ignored", where)
    if kept >= limits.max_files:
        return Event("read", "too-many-files", f"more than {limits.max_files} files", location, fatal=True)
    if total + size > limits.max_submission_bytes:
        return Event("read", "submission-too-large", f"files exceed {limits.max_submission_bytes} bytes",
                     location, fatal=True)
    return None


def untar_bounded(data: bytes, limits: Limits, location: str) -> Unpacked:
    """Regular files of an in-memory tar, refusing unsafe members and enforcing the limits."""
    files: dict[str, bytes] = {}
    events: list[Event] = []
    total = 0
    try:
        archive = tarfile.open(fileobj=io.BytesIO(data), mode="r:")
    except (tarfile.TarError, EOFError) as exc:
        return Unpacked({}, [Event("read", "corrupt-tar", str(exc), location, fatal=True)])
    with archive:
        while True:
            try:
                member = archive.next()
            except (tarfile.TarError, EOFError) as exc:
                events.append(Event("read", "truncated-tar", f"{exc}; kept {len(files)} files", location))
                break
            if member is None:
                break
            where = f"{location}/{member.name}"
            if member.isdir():
                continue
            if not member.isfile():
                what = "symlink" if member.issym() else "hardlink" if member.islnk() else "device or special file"
                events.append(Event("read", "unsafe-member", f"{what} ignored", where))
                continue
            path = safe_member_path(member.name)
            if path is None:
                events.append(Event("read", "unsafe-member", "path outside the submission ignored", where))
                continue
            refused = limit_event(limits, len(files), total, member.size, where, location)
            if refused:
                events.append(refused)
                if refused.fatal:
                    break
                continue
            total += member.size
            try:
                content = archive.extractfile(member).read()
            except (tarfile.TarError, EOFError, OSError) as exc:
                events.append(Event("read", "truncated-tar", f"{exc}; file ignored", where))
                break
            if len(content) < member.size:
                events.append(Event("read", "truncated-tar",
                                    f"{len(content)} of {member.size} bytes; file ignored", where))
                break
            files[path] = content
    return Unpacked(files, events)


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
    if data.startswith(GZIP_MAGIC):
        data, events = gunzip_bounded(data, limits.max_submission_bytes, location)
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
    events: list[Event] = []
    total = 0
    where = os.path.basename(root.rstrip(os.sep))   # stored locations never hold the path as typed
    for current, dirs, names in os.walk(root, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(names):
            if suffixes and not name.lower().endswith(suffixes):
                continue
            full = os.path.join(current, name)
            rel = os.path.relpath(full, root).replace(os.sep, "/")
            if os.path.islink(full) or not os.path.isfile(full):
                events.append(Event("read", "unsafe-member", "link or special file ignored", rel))
                continue
            size = os.path.getsize(full)
            refused = limit_event(limits, len(files), total, size, rel, where)
            if refused:
                events.append(refused)
                if refused.fatal:
                    return Unpacked(files, events)
                continue
            total += size
            with open(full, "rb") as handle:
                files[rel] = handle.read()
    return Unpacked(files, events)
