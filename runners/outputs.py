"""The output location of every command, checked before any work: one line and exit code 2 when it
cannot be written, instead of a traceback after the pipeline ran."""
from __future__ import annotations

from schemas.errors import UsageError


def require_writable(output: str, flag: str = "--output") -> None:
    from transforms.write.files import OutputNotWritable, check_writable

    try:
        check_writable(output)
    except OutputNotWritable as exc:
        raise UsageError(f"{flag} {exc}") from None
