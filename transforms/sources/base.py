"""The source contract: what every source implements and what the corpus pipeline calls.

A source is a `Source` subclass in its own module of this package (see `__init__.py`). The
pipeline calls, in this order and nothing else:

    source.expand_inputs(inputs)         launcher: the inputs as stable paths (globs expanded)
    check_metadata_file(source, file)    launcher, with --metadata: refuse a file that holds no records
    source.index(path, limits)           per input: small refs, one per paper, and input problems
    source.parse_metadata_line(line)     per line of the metadata file (`metadata_lines`, length-capped)
    source.fetch(ref, limits)            per paper, after the shuffle: the paper's bytes in memory
    source.attach_metadata(sub, record)  when a record's key equals the ref's `metadata_key`
    source.extract(sub, limits)          the statements (usually the shared LaTeX extractor)

and takes the papers columns a submission's `metadata` fills from its keys named as the columns
(title, authors, year, ...; `None`: the source knows none). Identifiers are checked by the source
that reads them (`checked_id`), and each input's refs are made unique (`unique_refs`) before any
paper is fetched; copies in different inputs, or already in the corpus, are settled before the
commit (`transforms.duplicates`), so the tables never hold two rows of one paper.
"""
from __future__ import annotations

import dataclasses
import glob
import os
import posixpath
import unicodedata
from typing import Iterator, Optional

from transforms.latex.model import Event, ExtractionResult, Limits, Submission

# A metadata line longer than this is refused without being held whole (arXiv's longest record is
# about 40 KB; a line of 50 MB is damage, not metadata).
MAX_METADATA_LINE_BYTES = 1 << 20


class InvalidIdentifier(ValueError):
    """An identifier that cannot name a paper (the message says why)."""


_UNSEEN = {"Cc": "a control character", "Cf": "a format character (bidi control, zero width)",
           "Cs": "a lone surrogate", "Co": "a private-use character", "Cn": "an unassigned code point",
           "Zl": "a line separator", "Zp": "a paragraph separator"}


def checked_id(text: str, what: str = "identifier") -> str:
    """`text` in NFC without surrounding spaces; raises InvalidIdentifier for an empty one or one
    holding control characters (newlines, anywhere), format characters (bidi overrides such as
    U+202E, zero-width spaces) or lone surrogates, which would reach URLs and terminals unseen."""
    text = unicodedata.normalize("NFC", text.strip(" ")) if isinstance(text, str) else ""
    if not text:
        raise InvalidIdentifier(f"empty {what}")
    for char in text:
        unseen = _UNSEEN.get(unicodedata.category(char))
        if unseen:
            name = unicodedata.name(char, "")
            raise InvalidIdentifier(f"{what} {ascii(text)} holds {unseen}: U+{ord(char):04X}"
                                    + (f" {name}" if name else ""))
    return text


def input_name(path: str) -> str:
    """The name an input is stored under in every table: its last path component, so relative
    and absolute spellings of one input (and the machine it was read on) give the same bytes."""
    return posixpath.basename(path.replace(os.sep, "/").rstrip("/")) or "input"


def group_name(path: str) -> str:
    """The storage layer's name of one input (it names the output files the input owns)."""
    from transforms.write.files import input_group   # Beam's filesystems: not at argument parsing

    return input_group(input_name(path))


def version_rank(version: Optional[str]) -> int:
    """`v3` -> 3; no version -> 0 (older than any numbered version)."""
    digits = (version or "").lstrip("vV")
    return int(digits) if digits.isascii() and digits.isdigit() else 0


@dataclasses.dataclass(frozen=True)
class Loaded:
    """The ref of a paper read whole while indexing (an XML dump cannot be split without parsing
    it): the submission itself, which `fetch` hands back."""

    submission: Submission

    @property
    def paper_id(self) -> str:
        return self.submission.paper_id

    @property
    def source_id(self) -> str:
        return self.submission.source_id

    @property
    def version(self) -> Optional[str]:
        return self.submission.version

    @property
    def location(self) -> str:
        return self.submission.member or self.submission.bundle


@dataclasses.dataclass
class InputIndex:
    """What indexing one input found: one ref per paper, and damage to the input as a whole.

    Refs carry `paper_id`, `source_id`, `version` and `location`; `bundle` is the input's stored
    name (`input_name`), `group` names its output files.
    """

    group: str
    bundle: str
    refs: list
    events: list[Event]
    duplicates: list[tuple[object, object]] = dataclasses.field(default_factory=list)  # (dropped, kept)


def unique_refs(found: InputIndex) -> InputIndex:
    """One ref per paper id: the newest version wins (highest `vN`; no version is oldest), and of
    equal versions the later one in the input (as unpacking the archive would leave it). The
    others are kept in `duplicates`, to be recorded as skipped copies, not fetched."""
    best: dict[str, tuple[tuple[int, int], object]] = {}
    for position, ref in enumerate(found.refs):
        key = (version_rank(ref.version), position)
        held = best.get(ref.paper_id)
        if held is None or key > held[0]:
            best[ref.paper_id] = (key, ref)
    kept = {id(ref) for _, ref in best.values()}
    duplicates = [(ref, best[ref.paper_id][1]) for ref in found.refs if id(ref) not in kept]
    refs = [ref for ref in found.refs if id(ref) in kept]
    return dataclasses.replace(found, refs=refs, duplicates=found.duplicates + duplicates)


class Source:
    """The contract. Subclasses set `name` and implement `index` and `extract`; the rest has
    defaults that fit a source with local inputs, no metadata file and `Loaded` refs."""

    name: str = ""
    takes_metadata: bool = False      # True: `--metadata FILE` is joined onto the papers

    def expand_inputs(self, inputs: list[str]) -> list[str]:
        """The inputs as stable paths (local ones absolute); raises FileNotFoundError naming those
        that match nothing."""
        missing = [p for p in inputs if "://" not in p and not glob.glob(p)]
        if missing:
            raise FileNotFoundError(f"no input matches {', '.join(missing)}")
        return list(dict.fromkeys(p if "://" in p else os.path.abspath(p) for p in inputs))

    def count_papers(self, inputs: list[str]) -> Optional[int]:
        """How many papers the inputs hold, when that is cheap to know before the run (progress)."""
        return None

    def index(self, path: str, limits: Limits) -> InputIndex:
        """One input's refs (`Loaded` ones when the input must be read whole to be split)."""
        raise NotImplementedError

    def fetch(self, ref, limits: Limits) -> Submission:
        """The paper's submission with its files in memory; never raises for a bad paper."""
        return ref.submission

    def failed_fetch(self, ref, event: Event) -> Submission:
        """The submission of a ref whose `fetch` raised: no files, the event fatal."""
        sub = Submission(paper_id=ref.paper_id, source=self.name, source_id=ref.source_id, files={},
                         version=ref.version, member=ref.location)
        sub.events.append(event)
        return sub

    def extract(self, submission: Submission, limits: Limits) -> ExtractionResult:
        raise NotImplementedError

    # ------------------------------------------------------------------------------ metadata

    def metadata_key(self, ref) -> str:
        """The id a metadata record of this paper carries."""
        return ref.source_id

    def parse_metadata_line(self, line: str) -> Optional[tuple[str, dict]]:
        """One line of the metadata file to (key, record); None for a blank line; ValueError for a
        line that is no record. Only sources with `takes_metadata` are asked."""
        raise ValueError(f"source {self.name} takes no metadata file")

    def attach_metadata(self, submission: Submission, record: dict) -> Submission:
        """The submission with a matching record as its `metadata` (keys named as papers columns)."""
        submission.metadata = record
        return submission


class WholeInputSource(Source):
    """A source whose inputs are read whole while indexing (small, or unsplittable unparsed)."""

    def read_input(self, path: str, limits: Limits) -> Iterator[Submission]:
        raise NotImplementedError

    def index(self, path: str, limits: Limits) -> InputIndex:
        return InputIndex(group_name(path), input_name(path), [Loaded(s) for s in self.read_input(path, limits)], [])


def read(source: Source, inputs: list[str], limits: Limits = Limits()) -> Iterator[Submission]:
    """Every paper of the inputs, one at a time, as the pipeline would fetch them (outside Beam)."""
    for path in source.expand_inputs(inputs):
        for ref in unique_refs(source.index(path, limits)).refs:
            yield source.fetch(ref, limits)


# ---------------------------------------------------------------------------------- metadata files

METADATA_RANGE_BYTES = 64 << 20   # one metadata reading task: lines starting in 64 MiB of the file
GZIP_MAGIC = b"\x1f\x8b"


def _open_raw(path: str):
    from apache_beam.io.filesystem import CompressionTypes
    from apache_beam.io.filesystems import FileSystems

    return FileSystems.open(path, compression_type=CompressionTypes.UNCOMPRESSED)


def _next_line(handle, cap: int) -> tuple[Optional[bytes], int]:
    """(the next line, bytes consumed); the line is None when longer than `cap` bytes, which are
    then skipped in bounded reads, so a 50 MB line costs one pass and no 50 MB buffer."""
    line = handle.readline(cap + 1)
    consumed = len(line)
    if len(line) <= cap or line.endswith(b"\n"):
        return line, consumed
    while line and not line.endswith(b"\n"):
        line = handle.readline(1 << 20)
        consumed += len(line)
    return None, consumed


def metadata_ranges(path: str, range_bytes: int = METADATA_RANGE_BYTES) -> list[tuple[str, int, int]]:
    """(path, start, end) byte ranges covering the file, read in parallel by `metadata_lines`."""
    from apache_beam.io.filesystems import FileSystems

    (match,) = FileSystems.match([path])
    size = match.metadata_list[0].size_in_bytes if match.metadata_list else 0
    return [(path, start, min(start + range_bytes, size)) for start in range(0, max(size, 1), range_bytes)]


def metadata_lines(span: tuple[str, int, int], cap: int = MAX_METADATA_LINE_BYTES
                   ) -> Iterator[tuple[int, Optional[bytes]]]:
    """(offset, line or None when over `cap`) of every line that starts inside the span."""
    path, start, end = span
    with _open_raw(path) as handle:
        position = start
        if start > 0:   # the line under way at `start` belongs to the span before
            handle.seek(start - 1)
            _, consumed = _next_line(handle, 0)
            position = start - 1 + consumed
        while position < end:
            line, consumed = _next_line(handle, cap)
            if not consumed:
                return
            yield position, line
            position += consumed


METADATA_PROBE_LINES = 1000


def check_metadata_file(source: Source, path: str) -> None:
    """Raises ValueError (one line) when none of the file's first lines is a record: a JSON array,
    a gzip file or binary data is refused before the run instead of leaving every paper without
    metadata. A damaged line among records is not refused here: it becomes a failure row."""
    first_error = "holds no metadata record"
    with _open_raw(path) as handle:
        if handle.read(2) == GZIP_MAGIC:
            raise ValueError("is gzip-compressed; decompress it (JSON lines expected)")
        handle.seek(0)
        for _ in range(METADATA_PROBE_LINES):
            line, consumed = _next_line(handle, MAX_METADATA_LINE_BYTES)
            if not consumed:
                break
            if line is not None and line.lstrip().startswith(b"[") and first_error == "holds no metadata record":
                raise ValueError("is a JSON array, not JSON lines (one record per line)")
            try:
                if line is None:
                    raise ValueError(f"line longer than {MAX_METADATA_LINE_BYTES} bytes")
                if source.parse_metadata_line(line.decode("utf-8")):
                    return
            except ValueError as exc:
                if first_error == "holds no metadata record":
                    first_error = f"is not JSON lines ({type(exc).__name__}: {str(exc)[:200]})"
    raise ValueError(first_error)
