"""A local folder of already unpacked arXiv submissions: one sub-folder or one archive per paper.

`2101.99001/` (the paper's files), `math9901999.tar.gz`, `2101.99003.gz` (one gzipped .tex),
`2101.99004.tex` or `2101.99007.pdf` each become one submission named after the entry. Files are
read in memory with the same limits and safety rules as bundle members; symbolic links are never
followed.
"""
from __future__ import annotations

import os
import posixpath
from typing import Optional

from transforms.latex.model import Event, Limits, Submission
from transforms.sources import archive, arxiv


def index_folder(path: str) -> arxiv.BundleIndex:
    """One ref per entry of the folder (hidden entries and symbolic links are recorded, not read)."""
    group = arxiv.group_name(path)
    refs: list[arxiv.MemberRef] = []
    events: list[Event] = []
    for name in sorted(os.listdir(path)):
        full = os.path.join(path, name)
        if name.startswith("."):
            continue
        if os.path.islink(full):
            events.append(Event("read", "unsafe-member", "symbolic link ignored", full))
            continue
        if not (os.path.isdir(full) or os.path.isfile(full)):
            events.append(Event("read", "unsafe-member", "special file (pipe, device, socket) ignored", full))
            continue
        if os.path.isdir(full):
            stem, kind = name, "folder"
        else:
            stem, suffix = arxiv.strip_archive_suffix(name)
            if suffix == "" and name.endswith(".tex"):
                stem = name[: -len(".tex")]
            kind = "file"
        source_id, version = arxiv.parse_stem(stem)
        size = 0 if kind == "folder" else os.path.getsize(full)
        refs.append(arxiv.MemberRef(source_id, group, path, full, kind, 0, size, version))
    return arxiv.BundleIndex(group, path, refs, events)


def read_tree(root: str, limits: Limits, suffixes: Optional[tuple[str, ...]] = None) -> archive.Unpacked:
    """Regular files under `root` (only names ending in `suffixes`, when given) as relative POSIX
    paths, within the limits; links are never followed and hidden folders are skipped."""
    files: dict[str, bytes] = {}
    events: list[Event] = []
    total = 0
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
            if size > limits.max_file_bytes:
                events.append(Event("read", "file-too-large",
                                    f"{size} bytes > {limits.max_file_bytes}; file ignored", rel))
                continue
            if len(files) >= limits.max_files:
                events.append(Event("read", "too-many-files", f"more than {limits.max_files} files",
                                    root, fatal=True))
                return archive.Unpacked(files, events)
            total += size
            if total > limits.max_submission_bytes:
                events.append(Event("read", "submission-too-large",
                                    f"files exceed {limits.max_submission_bytes} bytes", root, fatal=True))
                return archive.Unpacked(files, events)
            with open(full, "rb") as handle:
                files[rel] = handle.read()
    return archive.Unpacked(files, events)


def fetch_entry(ref: arxiv.MemberRef, limits: Limits) -> Submission:
    """The submission of one folder entry."""
    sub = arxiv.empty_submission(ref)
    if ref.kind == "folder":
        unpacked = read_tree(ref.member, limits)
        if not unpacked.files:
            unpacked.events.append(Event("read", "empty-member", "folder holds no readable file",
                                         ref.member, fatal=True))
    elif ref.member.lower().endswith(".pdf"):
        sub.skip_reason = "pdf-only"
        return sub
    elif ref.size > limits.max_submission_bytes:
        unpacked = archive.Unpacked({}, [Event("read", "submission-too-large",
                                               f"{ref.size} bytes > {limits.max_submission_bytes}",
                                               ref.member, fatal=True)])
    else:
        with open(ref.member, "rb") as handle:
            data = handle.read()
        name = posixpath.basename(ref.member)
        single = name if name.endswith(".tex") else arxiv.strip_archive_suffix(name)[0] + ".tex"
        unpacked = archive.unpack_submission(data, single, limits, ref.member)
    sub.files = unpacked.files
    sub.events.extend(unpacked.events)
    return sub
