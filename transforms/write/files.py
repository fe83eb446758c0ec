"""File primitives over Beam's `FileSystems` (local, gs://, s3://, any registered scheme).

Object stores have no directories and no atomic rename of a tree: a "tree" is the objects below a
prefix, and the only atomic step is putting (or renaming onto) one object. Every protocol of the
storage layer is built from these primitives so that it holds on both kinds of filesystem.
"""
from __future__ import annotations

import hashlib
import os
import posixpath
import re
import shutil
import urllib.parse
import uuid
from typing import Any, Iterable, Mapping, Sequence

from apache_beam.io.filesystem import CompressionTypes
from apache_beam.io.filesystems import FileSystems

HIVE_NULL = "__HIVE_DEFAULT_PARTITION__"


class OutputNotWritable(OSError):
    """The output location cannot be written (checked before any work is done)."""


def is_local(path: str) -> bool:
    return "://" not in path


def join(root: str, *parts: str) -> str:
    return FileSystems.join(root, *parts) if parts else root


def exists(path: str) -> bool:
    return FileSystems.exists(path)


def is_file(path: str) -> bool:
    """A file (locally) or an object (object stores, where a "directory" is only a prefix)."""
    return os.path.isfile(path) if is_local(path) else FileSystems.exists(path)


def read_bytes(path: str) -> bytes:
    with FileSystems.open(path, compression_type=CompressionTypes.UNCOMPRESSED) as handle:
        return handle.read()


def sha256_hex(path: str, chunk: int = 8 << 20) -> str:
    """The SHA-256 of a file, read in chunks: hashing a file never holds it whole."""
    digest = hashlib.sha256()
    with FileSystems.open(path, compression_type=CompressionTypes.UNCOMPRESSED) as handle:
        for block in iter(lambda: handle.read(chunk), b""):
            digest.update(block)
    return digest.hexdigest()


def copy_file(source: str, target: str, chunk: int = 8 << 20) -> None:
    """Copy `source` to `target` in chunks, replacing it as `replace_bytes` does."""
    temporary = f"{target}.tmp-{uuid.uuid4().hex}" if is_local(target) else target
    with FileSystems.open(source, compression_type=CompressionTypes.UNCOMPRESSED) as src, \
            FileSystems.create(temporary, compression_type=CompressionTypes.UNCOMPRESSED) as dst:
        shutil.copyfileobj(src, dst, chunk)
    if temporary != target:
        FileSystems.rename([temporary], [target])


def write_bytes(path: str, data: bytes) -> None:
    """Create (or overwrite) `path`; local parent directories are created as needed."""
    with FileSystems.create(path, compression_type=CompressionTypes.UNCOMPRESSED) as handle:
        handle.write(data)


def replace_bytes(path: str, data: bytes) -> None:
    """Write `path` so that a reader sees the old content or the new, never a part.

    Locally: a sibling temporary file renamed over the target (rename is atomic on POSIX). On an
    object store a put becomes visible whole when it completes, so the object is written directly.
    """
    if not is_local(path):
        write_bytes(path, data)
        return
    temporary = f"{path}.tmp-{uuid.uuid4().hex}"
    write_bytes(temporary, data)
    FileSystems.rename([temporary], [path])


def list_files(root: str, suffix: str = "") -> list[str]:
    """Files below `root` (recursively) ending in `suffix`, sorted; none when `root` is absent."""
    pattern = join(root, "**")
    (result,) = FileSystems.match([pattern])
    prefix = root.rstrip("/") + "/"
    return sorted(m.path for m in result.metadata_list if m.path.endswith(suffix) and m.path.startswith(prefix))


def relative(path: str, root: str) -> str:
    return path[len(root.rstrip("/")) + 1:]


def delete(paths: Iterable[str]) -> None:
    present = [p for p in paths if FileSystems.exists(p)]
    if present:
        FileSystems.delete(present)


def delete_tree(path: str) -> None:
    """Remove a file or everything below a directory/prefix, if present."""
    files = list_files(path)
    if files:
        FileSystems.delete(files)
    if FileSystems.exists(path):
        FileSystems.delete([path])


def move(source: str, target: str) -> None:
    """Rename one file onto `target` (replacing it), creating local parents."""
    if is_local(target):
        os.makedirs(os.path.dirname(target) or ".", exist_ok=True)
    elif FileSystems.exists(target):
        FileSystems.delete([target])
    FileSystems.rename([source], [target])


def move_tree(source: str, target: str) -> None:
    """Replace whatever is at `target` by the file or the files below `source`."""
    delete_tree(target)
    files = list_files(source)
    if files:
        for path in files:
            move(path, target + path[len(source.rstrip("/")):])
    elif FileSystems.exists(source):
        move(source, target)


def check_writable(output: str) -> None:
    """Raise OutputNotWritable (one line) unless a file can be created and removed in `output`.

    Run before a pipeline starts, so an unwritable location fails before any work and leaves
    nothing behind (the probe is removed; no staging directory is created).
    """
    if is_local(output) and os.path.exists(output) and not os.path.isdir(output):
        raise OutputNotWritable(f"{output}: exists and is not a directory")
    probe = join(output, f".thmforge-write-check-{uuid.uuid4().hex}")
    try:
        write_bytes(probe, b"")
        FileSystems.delete([probe])
    except Exception as exc:   # each filesystem raises its own class (OSError, BeamIOError, HttpError)
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise OutputNotWritable(f"{output}: cannot write there ({reason})") from None


# ------------------------------------------------------------------------------------- naming

def hive_dir(columns: Sequence[str], row: Mapping[str, Any]) -> str:
    """`source=arxiv/year=2021` for the partition columns of a row ('' when there are none)."""
    parts = []
    for column in columns:
        value = row.get(column)
        text = HIVE_NULL if value is None else urllib.parse.quote(str(value), safe="")
        parts.append(f"{column}={text}")
    return "/".join(parts)


def hive_values(path: str, columns: Sequence[str]) -> dict[str, str]:
    """The raw (unquoted) values of `key=value` path segments for the given columns."""
    found = {}
    for part in path.split("/"):
        key, sep, value = part.partition("=")
        if sep and key in columns:
            found[key] = None if value == HIVE_NULL else urllib.parse.unquote(value)
    return found


def input_group(path: str) -> str:
    """A file-name-safe name of one input (bundle, folder, file): names the output files it owns.

    Letters, digits, `.` and `_` only (never `-`, which separates the parts of a file name).
    """
    base = posixpath.basename(path.rstrip("/")) or "input"
    for suffix in (".tar", ".tar.gz", ".tgz"):
        if base.endswith(suffix):
            base = base[: -len(suffix)]
    return re.sub(r"[^A-Za-z0-9._]+", "_", base)
