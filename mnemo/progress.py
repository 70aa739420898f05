"""Progress of long work for a person at a terminal, in the style of uv and gh: one line
on stderr, redrawn in place while the work runs, replaced by a summary when it ends.

Only on a terminal, or when asked (MNEMO_PROGRESS=1; MNEMO_PROGRESS=0 silences it): a
script reading stderr, a host or a test log gets no carriage returns. stdout is never
touched (it carries tables, JSON, or a protocol).
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

ENV_FLAG = "MNEMO_PROGRESS"
SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
CLEAR_LINE = "\r\033[2K"


def wanted(stream: TextIO) -> bool:
    """Whether progress is shown on `stream`: asked for, or a terminal."""
    flag = os.environ.get(ENV_FLAG, "")
    if flag in ("0", "1"):
        return flag == "1"
    return stream.isatty()


class Progress:
    """One status line; `update` redraws it, `done` or `fail` ends it with a summary."""

    def __init__(self, stream: TextIO | None = None, enabled: bool | None = None):
        self.stream = stream or sys.stderr
        self.enabled = wanted(self.stream) if enabled is None else enabled
        self.started = time.monotonic()
        self._ticks = 0
        # On a terminal the line is redrawn; asked for elsewhere (a pipe), each change is a line.
        self._redraw = self.enabled and self.stream.isatty()
        self._last = ""

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def update(self, text: str) -> None:
        if not self.enabled:
            return
        if self._redraw:
            self._ticks += 1
            spin = SPINNER[self._ticks % len(SPINNER)]
            self.stream.write(f"{CLEAR_LINE}{spin} {text} ({self.elapsed:.1f}s)")
        elif text != self._last:
            self.stream.write(f"… {text}\n")
        self._last = text
        self.stream.flush()

    def clear(self) -> None:
        """Take the status line off the terminal (before other output, or at the end)."""
        if self._redraw:
            self.stream.write(CLEAR_LINE)
            self.stream.flush()

    def done(self, text: str) -> None:
        self._end("✓", text)

    def fail(self, text: str) -> None:
        self._end("✗", text)

    def _end(self, mark: str, text: str) -> None:
        if not self.enabled:
            return
        self.stream.write(f"{CLEAR_LINE if self._redraw else ''}{mark} {text} ({self.elapsed:.1f}s)\n")
        self.stream.flush()


class _Clearing:
    """stdout while a spinner runs: each write first takes the spinner's line away, so what
    the command prints never lands in the middle of it."""

    def __init__(self, stream: TextIO, progress: Progress, lock: threading.Lock):
        self._stream, self._progress, self._lock = stream, progress, lock

    def write(self, text: str) -> int:
        with self._lock:
            self._progress.clear()
            return self._stream.write(text)

    def __getattr__(self, name: str) -> object:
        return getattr(self._stream, name)


@contextmanager
def spinning(text: str, interval: float = 0.1) -> Iterator[None]:
    """A spinner with the elapsed time while the body runs (work that reports no progress
    of its own, such as one long RPC); nothing at all when progress is not wanted."""
    progress = Progress()
    if not progress.enabled:
        yield
        return
    stop, lock = threading.Event(), threading.Lock()

    def spin() -> None:
        while not stop.wait(interval):
            with lock:
                progress.update(text)

    original = sys.stdout
    sys.stdout = _Clearing(original, progress, lock)
    thread = threading.Thread(target=spin, name="mnemo-spinner", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
        sys.stdout = original
        progress.clear()


def rate_and_eta(done: int, total: int, seconds: float) -> str:
    """`1,204/5,120 · 395/s · ETA 10s`: how far, how fast, how long still (when known)."""
    rate = done / seconds if seconds > 0 else 0.0
    text = f"{done:,}/{total:,}" if total else f"{done:,}"
    if rate > 0:
        text += f" · {rate:,.0f}/s"
        if total > done:
            text += f" · ETA {_duration((total - done) / rate)}"
    return text


def _duration(seconds: float) -> str:
    seconds = int(seconds + 0.5)
    minutes, secs = divmod(seconds, 60)
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"
