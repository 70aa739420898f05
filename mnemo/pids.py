"""Whether a process still runs, with the standard library only: hooks (a fresh
interpreter per event) wait on their detached workers with it, and cannot pay for
mnemo.processes' imports (structlog)."""

from __future__ import annotations

import os


def pid_alive(pid: int) -> bool:
    """True while `pid` is a running process (ours or another user's); a zombie not yet
    reaped counts as dead."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True  # no /proc (macOS): kill(0) said it exists
