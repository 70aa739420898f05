"""File locks that die with their owner: the spawn lock and the supervisor's lock.

A lock is an exclusive `flock` on a file under $MNEMO_HOME/run/, held open by its owner.
The kernel releases it when the owner exits, however it exits (kill -9 included), so a
dead starter never blocks the next one, and a pid in the file (reused by an unrelated
process or not) is only there for a human to read. The owner unlinks the file when it
releases the lock; a process that locked a file meanwhile unlinked (it opened the old
inode) notices that the path names another file now and tries again.
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from pathlib import Path

# path -> the open descriptor holding the lock, for the locks this process owns
_HELD: dict[Path, int] = {}


def _same_file(fd: int, path: Path) -> bool:
    try:
        return os.stat(path).st_ino == os.fstat(fd).st_ino
    except FileNotFoundError:
        return False


def acquire(path: Path, patience_s: float = 0.0) -> bool:
    """Take the lock at `path`, trying for up to `patience_s`. False when another holds it."""
    deadline = time.monotonic() + patience_s
    while not _try_acquire(path):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.01)
    return True


def _try_acquire(path: Path) -> bool:
    if path in _HELD:
        return False  # held by this very process: exclusive even to its owner
    for _attempt in range(5):
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        if not _same_file(fd, path):  # its owner released (unlinked) it while we opened it
            os.close(fd)
            continue
        os.ftruncate(fd, 0)
        os.write(fd, json.dumps({"pid": os.getpid(), "started_at": time.time()}).encode())
        _HELD[path] = fd
        return True
    return False


def release(path: Path) -> None:
    """Release a lock this process holds (a lock held by another process is left alone)."""
    fd = _HELD.pop(path, None)
    if fd is None:
        return
    if _same_file(fd, path):
        path.unlink(missing_ok=True)
    os.close(fd)


def is_held(path: Path) -> bool:
    """True while some live process holds the lock at `path`."""
    if path in _HELD:
        return True
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False
