"""$MNEMO_HOME is private to its user: directories 0700, files 0600, whatever the umask.

Two halves, because either alone leaves a gap:
- the `mnemo` CLI sets the umask PRIVATE_UMASK first thing (hooks included), so
  every file created later (SQLite's -wal/-shm, Chroma's segments, logs and rotated logs,
  the capture journal) is born private;
- `tighten(settings)` runs when a service starts: it walks the home (and a database or
  Chroma directory configured outside it) and removes group/other bits from what an
  older version, or a process started with a permissive umask, left behind, with one log
  line naming what it changed.

`confine_caches(settings)` points the libraries a service loads at a cache and a temporary
directory inside the home (XDG_CACHE_HOME, TMPDIR, SQLITE_TMPDIR): onnxruntime writes a device
id and a telemetry queue under ~/.cache as soon as it is imported, whatever its telemetry switch
says, and a session file in TMPDIR; SQLite spills temporary tables to TMPDIR. Nothing of a
session is written outside the home (tests/e2e/test_files_written.py traces every process).
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

from mnemo.config import Settings
from mnemo.logs import get_logger
from mnemo.vocab import PRIVATE_UMASK

log = get_logger(__name__)

DIR_MODE = 0o700
# A log line names at most this many tightened paths (a huge old home must not flood it).
LOGGED_PATHS_MAX = 20


def library_cache(settings: Settings) -> Path:
    return settings.home / "cache" / "libraries"


def scratch_dir(settings: Settings) -> Path:
    return settings.home / "tmp"


def confine_caches(settings: Settings) -> None:
    """Before any library is imported: XDG_CACHE_HOME under the home, private, and the
    temporary directory too (TMPDIR, SQLITE_TMPDIR): onnxruntime leaves a telemetry session
    file (`.ses`) in TMPDIR and SQLite (Chroma's, the store's) spills temporary tables there,
    with what they hold. Services and their children read these; a user's own are not ours to
    write into either (tests/e2e/test_files_written.py traces every file a session writes)."""
    cache = library_cache(settings)
    cache.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
    os.environ["XDG_CACHE_HOME"] = str(cache)
    scratch = scratch_dir(settings)
    scratch.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
    os.environ["TMPDIR"] = os.environ["SQLITE_TMPDIR"] = str(scratch)
    tempfile.tempdir = None  # Python's own temporary files follow on their next use


def _walk(root: Path) -> Iterator[Path]:
    """`root` and everything below it, symlinks not followed (lstat only)."""
    if not root.exists():
        return
    yield root
    if root.is_symlink() or not root.is_dir():
        return
    for parent, dirs, files in os.walk(root, followlinks=False):
        for name in (*dirs, *files):
            yield Path(parent) / name


def _tighten_one(path: Path) -> bool:
    """Drop group/other bits of one path (sockets and symlinks left alone). True if changed."""
    try:
        info = path.lstat()
    except FileNotFoundError:  # removed meanwhile (a rotated log, a SQLite -shm)
        return False
    if stat.S_ISDIR(info.st_mode):
        wanted = DIR_MODE
    elif stat.S_ISREG(info.st_mode):
        wanted = stat.S_IMODE(info.st_mode) & ~PRIVATE_UMASK
    else:  # sockets live in run/ (0700); symlinks have no mode of their own
        return False
    if stat.S_IMODE(info.st_mode) == wanted:
        return False
    try:
        os.chmod(path, wanted, follow_symlinks=False)
    except FileNotFoundError:
        return False
    return True


def private_roots(settings: Settings) -> list[Path]:
    """The home, plus the database's files and the Chroma directory when configured elsewhere."""
    home = settings.home
    roots = [home]
    database = settings.database
    for path in (database, Path(f"{database}-wal"), Path(f"{database}-shm"), settings.chroma_dir):
        if not path.is_relative_to(home):
            roots.append(path)
    return roots


def tighten(settings: Settings) -> list[str]:
    """Make every path under the private roots 0700/0600; return (and log) what changed."""
    changed = [str(path) for root in private_roots(settings) for path in _walk(root) if _tighten_one(path)]
    if changed:
        log.warning("home_tightened", count=len(changed), paths=changed[:LOGGED_PATHS_MAX],
                    reason="group or other users could read these; now only the owner can")
    return changed
