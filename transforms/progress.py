"""Progress of a long stage for whoever waits on it: done/total, rate and time left.

On a terminal a tqdm bar; anywhere else (a log file, CI, a Dataflow worker's log) a plain line
every `every_s` seconds and one when the stage ends. The one helper for extraction, describing,
embedding, indexing, run-bench and eval-bench:

    with Progress("embedding", total=n, unit="statements") as progress:
        for batch in batches:
            ...
            progress.advance(len(batch))
"""
from __future__ import annotations

import sys
import threading
import time
from typing import Callable, Optional, TextIO

PLAIN_EVERY_S = 5.0


def format_duration(seconds: float) -> str:
    seconds = int(round(seconds))
    if seconds >= 3600:
        return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
    if seconds >= 60:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds}s"


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


class Progress:
    """Counts what a stage has done; thread-safe; `total=None` when the total is not known."""

    def __init__(self, label: str, total: Optional[int] = None, *, unit: str = "items",
                 stream: Optional[TextIO] = None, every_s: float = PLAIN_EVERY_S, enabled: bool = True,
                 clock: Callable[[], float] = time.monotonic):
        self.label, self.total, self.unit = label, total, unit
        self.stream = stream if stream is not None else sys.stderr
        self.every_s, self.enabled, self.clock = every_s, enabled, clock
        self.done = 0
        self.note = ""
        self.started = self._last_line = clock()
        self._printed = 0            # `done` at the last plain line
        self._closed = False
        self._lock = threading.Lock()
        self._bar = None
        if enabled and _is_terminal(self.stream):
            from tqdm import tqdm

            self._bar = tqdm(total=total, desc=label, unit=f" {unit}", file=self.stream, dynamic_ncols=True,
                             leave=True)

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def advance(self, n: int = 1, note: str = "") -> None:
        """`n` more done; `note` (e.g. "812 statements found") is shown beside the count."""
        with self._lock:
            self.done += n
            if note:
                self.note = note
            if not self.enabled or self._closed:
                return
            if self._bar is not None:
                self._bar.update(n)
                if note:
                    self._bar.set_postfix_str(note, refresh=False)
                return
            now = self.clock()
            finished = self.total is not None and self.done >= self.total
            if finished or now - self._last_line >= self.every_s:
                self._last_line = now
                self._print(self.line(now))

    def line(self, now: Optional[float] = None) -> str:
        """The plain progress line: `label: done/total unit (pct), rate/s, ETA t[, note]`."""
        elapsed = max((self.clock() if now is None else now) - self.started, 1e-9)
        rate = self.done / elapsed
        parts = [f"{self.done}/{self.total} {self.unit} ({100 * self.done / self.total:.0f}%)"
                 if self.total else f"{self.done} {self.unit}", f"{rate:.1f}/s"]
        if self.total and self.done < self.total and rate > 0:
            parts.append(f"ETA {format_duration((self.total - self.done) / rate)}")
        elif self.total and self.done >= self.total:
            parts.append(f"took {format_duration(elapsed)}")
        if self.note:
            parts.append(self.note)
        return f"thmforge: {self.label}: " + ", ".join(parts)

    def close(self) -> None:
        """Ends the bar, or prints the last plain line when the count moved since the previous one."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            if not self.enabled:
                return
            if self._bar is not None:
                self._bar.close()
            elif self.done != self._printed:
                self._print(self.line())

    def _print(self, text: str) -> None:
        self._printed = self.done
        print(text, file=self.stream, flush=True)
