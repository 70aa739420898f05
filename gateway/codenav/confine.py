"""Paths from a model, confined to the project root.

Code navigation reads the user's files, so every path argument is checked twice: as
written (lexically normalised, it must stay inside the root, so `..` cannot climb out
and an absolute path must point inside), and as resolved (every symlink followed, the
target must still be inside). Only regular files are read, opened without following a
last-moment symlink and without blocking on a FIFO, and never more than a size cap.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from mnemo.errors import FailedPrecondition, InvalidArgument, NotFound

PATH_MAX_CHARS = 4096
BINARY_PROBE_BYTES = 8192
_SPECIAL_FILES = ((stat.S_ISSOCK, "a socket"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                  (stat.S_ISBLK, "a block device"))


@dataclass(frozen=True)
class Confined:
    """A path inside the root: `real` to open, `shown` (relative to the root) to print."""

    real: Path
    shown: str


def project_root(root: Path) -> Path:
    """The root itself, resolved; it must be a directory."""
    try:
        resolved = root.resolve(strict=True)
    except OSError as exc:
        raise FailedPrecondition(f"the project root {root} cannot be read: {exc.strerror}") from exc
    if not resolved.is_dir():
        raise FailedPrecondition(f"the project root {root} is not a directory")
    return resolved


class MissingPath(NotFound):
    """A path the caller named does not exist: there is no record id to search for, so the next
    step is about the path (NotFound's own says "search first")."""

    next_step = "Check the path (relative to the project root); smart_search finds code by name."


def confine(root: Path, value: str, field: str) -> Confined:
    """Resolve a path argument (relative to the root, or absolute inside it)."""
    if not value or "\x00" in value or len(value) > PATH_MAX_CHARS:
        raise InvalidArgument(field, f"must be a non-empty path of at most {PATH_MAX_CHARS} characters")
    written = Path(os.path.normpath(root / value))  # absolute `value` replaces root here
    if not _inside(written, root):
        escapes = ".." in Path(value).parts
        rule = "'..' must not leave the project root" if escapes else "must be inside the project root"
        raise InvalidArgument(field, f"{rule} ({root}); give a path relative to it")
    try:
        real = written.resolve(strict=True)
    except FileNotFoundError as exc:
        raise MissingPath(f"{field}: {_shown(written, root)} does not exist under the project root") from exc
    except OSError as exc:
        raise InvalidArgument(field, f"cannot be resolved: {exc.strerror}") from exc
    if not _inside(real, root):
        raise InvalidArgument(field, "is a symlink (or passes through one) that leads outside the project root")
    return Confined(real, _shown(written, root))


# Never follow a symlink swapped in after the checks, never block opening a FIFO.
OPEN_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)


def read_file(path: Confined, field: str, max_bytes: int) -> bytes:
    """The bytes of a regular text file, refusing special files, huge files and binaries."""
    try:
        check_regular(os.stat(path.real).st_mode, path.shown, field)  # before open: a socket cannot be opened
        descriptor = os.open(path.real, OPEN_FLAGS)
    except OSError as exc:
        raise InvalidArgument(field, f"{path.shown} cannot be opened: {exc.strerror}") from exc
    with os.fdopen(descriptor, "rb") as handle:
        info = os.fstat(handle.fileno())
        check_regular(info.st_mode, path.shown, field)
        if info.st_size > max_bytes:
            raise InvalidArgument(field, f"{path.shown} is {info.st_size:,} bytes, over the {max_bytes:,}-byte cap")
        data = handle.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise InvalidArgument(field, f"{path.shown} is over the {max_bytes:,}-byte cap")
    if is_binary(data):
        raise InvalidArgument(field, f"{path.shown} is a binary file (it contains NUL bytes)")
    return data


def check_regular(mode: int, shown: str, field: str) -> None:
    for test, what in _SPECIAL_FILES:
        if test(mode):
            raise InvalidArgument(field, f"{shown} is {what}; only regular files are read")
    if stat.S_ISDIR(mode):
        raise InvalidArgument(field, f"{shown} is a directory; give a file")
    if not stat.S_ISREG(mode):
        raise InvalidArgument(field, f"{shown} is not a regular file")


def is_binary(data: bytes) -> bool:
    return b"\x00" in data[:BINARY_PROBE_BYTES]


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def _shown(path: Path, root: Path) -> str:
    return path.relative_to(root).as_posix() if path != root else "."
