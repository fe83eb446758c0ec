"""The progress helper: plain lines on a schedule when not on a terminal, a tqdm bar on one."""
import io

from transforms.progress import Progress, format_duration


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_plain_lines_every_few_seconds_with_rate_and_eta():
    stream, clock = io.StringIO(), Clock()
    progress = Progress("embedding", total=100, unit="statements", stream=stream, every_s=5, clock=clock)
    clock.now = 1.0
    progress.advance(10)                     # within 5 s of the start: no line yet
    assert stream.getvalue() == ""
    clock.now = 5.0
    progress.advance(40, note="2 failed")
    clock.now = 10.0
    progress.advance(50)                     # the total: a last line at once
    progress.close()
    lines = stream.getvalue().splitlines()
    assert lines == ["thmforge: embedding: 50/100 statements (50%), 10.0/s, ETA 5s, 2 failed",
                     "thmforge: embedding: 100/100 statements (100%), 10.0/s, took 10s, 2 failed"]


def test_unknown_total_counts_and_close_prints_what_is_left():
    stream, clock = io.StringIO(), Clock()
    with Progress("describing", unit="statements", stream=stream, clock=clock) as progress:
        clock.now = 2.0
        progress.advance(3)
    assert stream.getvalue() == "thmforge: describing: 3 statements, 1.5/s\n"


def test_disabled_progress_prints_nothing_but_counts():
    stream = io.StringIO()
    with Progress("scoring", total=2, stream=stream, enabled=False) as progress:
        progress.advance(2)
    assert stream.getvalue() == "" and progress.done == 2


def test_terminal_gets_a_bar():
    stream = Terminal()
    with Progress("run-bench", total=4, unit="requests", stream=stream) as progress:
        for _ in range(4):
            progress.advance()
    assert "run-bench: 100%" in stream.getvalue() and "4/4" in stream.getvalue()


def test_durations():
    assert [format_duration(s) for s in (5, 65, 3725)] == ["5s", "1m05s", "1h02m"]
