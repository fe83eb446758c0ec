"""arXiv identifiers and member refs: the one place an arXiv name becomes a paper id.

A member or entry name is `<id>[vN]<suffix>` (in a bundle under its `YYMM/` folder): new-style ids
`YYMM.NNNN[N]`, old-style `archive/YYMMNNN` written without the slash (`math9901999`). Anything
else (`2201/.gz`, Arabic-Indic or fullwidth digits, a newline or a bidi override in the name) is
no arXiv id and raises `InvalidIdentifier` with the reason; the reader records it as a failure of
the input instead of inventing a paper.
"""
from __future__ import annotations

import dataclasses
import posixpath
import re
from typing import Optional

from transforms.latex.model import Submission
from transforms.sources.base import InvalidIdentifier, checked_id, input_name

SOURCE = "arxiv"
ABS_URL = "https://arxiv.org/abs/"
_NEW_ID = re.compile(r"([0-9]{2}(?:0[1-9]|1[0-2])\.[0-9]{4,5})(v[0-9]+)?", re.ASCII)
_OLD_ID = re.compile(r"([a-z]+(?:-[a-z]+)*)([0-9]{7})(v[0-9]+)?", re.ASCII)
_ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".tar", ".gz")
MEMBER_KINDS = {".gz": "member", ".tar.gz": "member", ".tgz": "member", ".tar": "member", ".pdf": "pdf"}


def parse_stem(stem: str) -> tuple[str, Optional[str]]:
    """A member or folder name without extension to (arXiv id, version or None).

    `2101.99001` -> `2101.99001`; `math9901999` -> `math/9901999`; `hep-th9901001v2` ->
    (`hep-th/9901001`, `v2`). Raises InvalidIdentifier for anything else.
    """
    stem = checked_id(stem, "arXiv member name")
    if match := _NEW_ID.fullmatch(stem):
        return match.group(1), match.group(2)
    if match := _OLD_ID.fullmatch(stem):
        return f"{match.group(1)}/{match.group(2)}", match.group(3)
    raise InvalidIdentifier(f"{ascii(stem)} is no arXiv id (YYMM.NNNNN or archiveYYMMNNN, ASCII digits)")


def year_from_id(source_id: str) -> int:
    """The year encoded in a (valid) arXiv id's YYMM: 1991 onwards."""
    yy = int(source_id.rsplit("/", 1)[-1][:2])
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


@dataclasses.dataclass(frozen=True)
class MemberRef:
    """One submission of an input, small enough to shuffle: where its bytes are, not the bytes."""

    source_id: str
    bundle: str                # path or URL of the bundle or folder it is read from
    member: str                # member name inside the bundle, or entry name inside the folder
    kind: str                  # "member" | "pdf" | "unsupported" | "folder" | "file"
    offset: int = 0
    size: int = 0
    version: Optional[str] = None

    @property
    def paper_id(self) -> str:
        return paper_id(self.source_id)

    @property
    def in_folder(self) -> bool:
        return self.kind in ("folder", "file")

    @property
    def location(self) -> str:
        """Where the paper is, as stored: relative to the input's name, never the path as typed."""
        return f"{input_name(self.bundle)}{'/' if self.in_folder else '!'}{self.member}"


def member_ref(name: str, bundle: str, offset: int, size: int) -> MemberRef:
    """The ref of bundle member `name` (e.g. `2101/2101.99001.gz`, `9901/math9901999.pdf`);
    raises InvalidIdentifier when its name holds no arXiv id."""
    stem, suffix = strip_archive_suffix(posixpath.basename(name))
    if not suffix:   # another format (`.ps`, `.html`): skipped as unsupported, its id still checked
        stem = posixpath.splitext(stem)[0]
    source_id, version = parse_stem(stem)
    return MemberRef(source_id, bundle, name, MEMBER_KINDS.get(suffix, "unsupported"), offset, size, version)


def empty_submission(ref: MemberRef) -> Submission:
    """The submission a ref names, with no files yet."""
    return Submission(paper_id=ref.paper_id, source=SOURCE, source_id=ref.source_id, files={},
                      version=ref.version, bundle=input_name(ref.bundle), member=ref.member,
                      year=year_from_id(ref.source_id), url=ABS_URL + ref.source_id)
