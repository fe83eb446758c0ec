"""A local folder of already unpacked arXiv submissions: one sub-folder or one archive per paper.

`2101.99001/` (the paper's files), `math9901999.tar.gz`, `2101.99003.gz` (one gzipped .tex),
`2101.99004.tex` or `2101.99007.pdf` each become one submission named after the entry, whose
name must hold an arXiv id (`arxiv_ids`). Files are read in memory with the same limits and
safety rules as bundle members; symbolic links are never followed.
"""
from __future__ import annotations

import os
import posixpath

from transforms.latex.model import Event, Limits, Submission
from transforms.sources import archive
from transforms.sources.arxiv_ids import MemberRef, empty_submission, parse_stem, strip_archive_suffix
from transforms.sources.base import InputIndex, InvalidIdentifier, group_name, input_name


def _entry_ref(path: str, name: str) -> MemberRef:
    full = os.path.join(path, name)
    if os.path.isdir(full):
        stem, kind, size = name, "folder", 0
    else:
        stem, suffix = strip_archive_suffix(name)
        if suffix == "" and name.endswith(".tex"):
            stem = name[: -len(".tex")]
        kind, size = "file", os.path.getsize(full)
    source_id, version = parse_stem(stem)
    return MemberRef(source_id, path, name, kind, 0, size, version)


def index_folder(path: str) -> InputIndex:
    """One ref per entry of the folder (hidden entries are left out; links, special files and
    names without an arXiv id are recorded, not read)."""
    refs: list[MemberRef] = []
    events: list[Event] = []
    where = input_name(path)
    for name in sorted(os.listdir(path)):
        full = os.path.join(path, name)
        if name.startswith("."):
            continue
        if os.path.islink(full):
            events.append(Event("read", "unsafe-member", "symbolic link ignored", f"{where}/{ascii(name)[1:-1]}"))
            continue
        if not (os.path.isdir(full) or os.path.isfile(full)):
            events.append(Event("read", "unsafe-member", "special file (pipe, device, socket) ignored",
                                f"{where}/{ascii(name)[1:-1]}"))
            continue
        try:
            refs.append(_entry_ref(path, name))
        except InvalidIdentifier as exc:
            events.append(Event("read", "bad-member-name", str(exc), f"{where}/{ascii(name)[1:-1]}"))
    return InputIndex(group_name(path), where, refs, events)


def fetch_entry(ref: MemberRef, limits: Limits) -> Submission:
    """The submission of one folder entry."""
    sub = empty_submission(ref)
    full = os.path.join(ref.bundle, ref.member)
    if ref.kind == "folder":
        unpacked = archive.read_tree(full, limits)
        if not unpacked.files:
            unpacked.events.append(Event("read", "empty-member", "folder holds no readable file",
                                         ref.location, fatal=True))
    elif ref.member.lower().endswith(".pdf"):
        sub.skip_reason = "pdf-only"
        return sub
    elif ref.size > limits.max_submission_bytes:
        unpacked = archive.Unpacked({}, [Event("read", "submission-too-large",
                                               f"{ref.size} bytes > {limits.max_submission_bytes}",
                                               ref.location, fatal=True)])
    else:
        with open(full, "rb") as handle:
            data = handle.read()
        name = posixpath.basename(ref.member)
        single = name if name.endswith(".tex") else strip_archive_suffix(name)[0] + ".tex"
        unpacked = archive.unpack_submission(data, single, limits, ref.location)
    sub.files = unpacked.files
    sub.events.extend(unpacked.events)
    return sub
