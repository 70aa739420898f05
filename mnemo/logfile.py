"""A log file that is private (0600) and rotated past a size cap, with the standard library
only: hooks (a fresh interpreter per event, no structlog) can append to one cheaply too.

It never follows a symbolic link (O_NOFOLLOW): a link planted where the log goes would make
the owner append to a file of the planter's choice. A planted link is removed (it lives in
the owner's own logs directory) and a fresh private file takes its place; anything else that
is not the user's own regular file is refused."""

from __future__ import annotations

import errno
import os
import stat
import threading
from pathlib import Path

from mnemo.vocab import LOG_BACKUPS_DEFAULT, LOG_MAX_BYTES_DEFAULT

_APPEND = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC


def open_private_append(path: Path) -> int:
    """A descriptor appending to `path`, the user's own regular file (created 0600): a symbolic
    link there is replaced by a fresh file, never followed; another user's file is refused."""
    try:
        fd = os.open(path, _APPEND, 0o600)
    except OSError as err:
        if err.errno != errno.ELOOP:
            raise
        os.unlink(path)  # the link itself, in our own logs directory; its target is untouched
        fd = os.open(path, _APPEND | os.O_EXCL, 0o600)
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid():
        os.close(fd)
        raise PermissionError(errno.EPERM, "not the user's own regular file; refusing to log into it", str(path))
    return fd


class RotatingFile:
    """An append-only text file that is rotated (file -> file.1 -> ... -> file.N, the oldest
    deleted) once it would grow past `max_bytes`. Several processes may share one log (every
    gateway writes gateway.log): a process that finds the file already rotated by another
    reopens it instead of rotating again."""

    def __init__(self, path: str | Path, max_bytes: int = LOG_MAX_BYTES_DEFAULT,
                 backups: int = LOG_BACKUPS_DEFAULT):
        self.path = Path(path)
        self.max_bytes = max(1024, max_bytes)
        self.backups = max(0, backups)
        self._lock = threading.Lock()
        self._fd = -1
        self._open()

    def _open(self) -> None:
        self._fd = open_private_append(self.path)
        self._size = os.fstat(self._fd).st_size

    def _rotated_elsewhere(self) -> bool:
        try:
            return os.stat(self.path).st_ino != os.fstat(self._fd).st_ino
        except FileNotFoundError:
            return True

    def _rotate(self) -> None:
        rotated_elsewhere = self._rotated_elsewhere()
        os.close(self._fd)
        if not rotated_elsewhere:
            for index in range(self.backups, 0, -1):
                older = self.path.with_name(f"{self.path.name}.{index}")
                newer = self.path.with_name(f"{self.path.name}.{index - 1}") if index > 1 else self.path
                if newer.exists():
                    os.replace(newer, older)
            if not self.backups:
                self.path.unlink(missing_ok=True)
        self._open()

    def write(self, text: str) -> int:
        data = text.encode("utf-8", "replace")
        with self._lock:
            if self._size + len(data) > self.max_bytes and self._size > 0:
                self._rotate()
            os.write(self._fd, data)
            self._size += len(data)
        return len(text)

    def flush(self) -> None:
        """Every write already went to the kernel (unbuffered)."""
