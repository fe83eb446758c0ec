"""Progress of a long loop: done / total, rate and ETA, printed at most every few seconds.

A minimal hook for run-bench (one line to stderr per interval); the clock is injectable so the
arithmetic is tested without waiting.
"""
from __future__ import annotations

import sys
import time
from typing import Callable, Optional, TextIO


class Progress:
    def __init__(self, total: int, label: str, every_s: float = 10.0,
                 clock: Callable[[], float] = time.monotonic, out: Optional[TextIO] = None):
        self.total, self.label, self.every_s, self.clock = total, label, every_s, clock
        self.out = out
        self.done = 0
        self.started = clock()
        self.printed_at = self.started

    def update(self, count: int = 1) -> Optional[str]:
        """Count `count` more done; returns (and prints) the line when an interval has passed or all are done."""
        self.done += count
        now = self.clock()
        if now - self.printed_at < self.every_s and self.done < self.total:
            return None
        self.printed_at = now
        line = self.line(now)
        print(line, file=self.out or sys.stderr, flush=True)
        return line

    def line(self, now: Optional[float] = None) -> str:
        elapsed = (self.clock() if now is None else now) - self.started
        rate = self.done / elapsed if elapsed > 0 else 0.0
        left = max(self.total - self.done, 0)
        eta = f"ETA {_duration(left / rate)}" if rate > 0 and left else ("done" if not left else "ETA unknown")
        return f"{self.label}: {self.done}/{self.total} ({rate:.1f}/s, {eta})"


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"
