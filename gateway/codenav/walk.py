"""The files smart_search looks at: a walk that stays inside the project and its rules.

It honours `.gitignore` files (each for its own directory and below), skips dot
directories and the usual vendored and build output, never follows a symlink (a linked
directory or file may lead outside the root), and yields only regular files under the
size cap. A deadline and a file cap stop it early; `Walk.stopped` then says which.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pathspec

from gateway.codenav.confine import OPEN_FLAGS

SKIPPED_DIRS = frozenset({"node_modules", "vendor", "build", "dist", "target", "__pycache__", "venv", "env",
                          "coverage", "bower_components"})
IGNORE_FILE_MAX_BYTES = 256 * 1024
MAX_DEPTH = 20


@dataclass(frozen=True)
class Entry:
    """One candidate file: absolute path, path relative to the root, and its cache key."""

    path: str
    shown: str
    size: int
    mtime_ns: int


@dataclass(frozen=True)
class _Ignore:
    base: str  # the directory of the .gitignore, relative to the root ("" for the root)
    spec: pathspec.GitIgnoreSpec


class Walk:
    """Iterate the files under `start`; paths are shown relative to `root`."""

    def __init__(self, root: str, start: str, *, max_file_bytes: int, max_files: int, deadline: float,
                 accept: Callable[[str], bool] = lambda name: True):
        self.root = root
        self.accept = accept  # a test of the file name, before any system call for the file
        self.start = start
        self.max_file_bytes = max_file_bytes
        self.max_files = max_files
        self.deadline = deadline
        self.stopped = ""  # the cap that ended the walk early, "" when it saw everything
        self.seen = 0

    def __iter__(self) -> Iterator[Entry]:
        ignores = self._inherited_ignores()
        yield from self._directory(self.start, ignores, 0)

    def _inherited_ignores(self) -> list[_Ignore]:
        """The .gitignore files of the directories between the root and the start."""
        ignores: list[_Ignore] = []
        relative = os.path.relpath(self.start, self.root)
        parts = [] if relative == "." else relative.split(os.sep)
        for depth in range(len(parts)):
            ignores.extend(_read_ignore(self.root, "/".join(parts[:depth])))
        return ignores

    def _directory(self, directory: str, ignores: list[_Ignore], depth: int) -> Iterator[Entry]:
        shown_dir = os.path.relpath(directory, self.root).replace(os.sep, "/")
        shown_dir = "" if shown_dir == "." else shown_dir
        ignores = ignores + _read_ignore(self.root, shown_dir)
        try:
            with os.scandir(directory) as scan:
                entries = sorted(scan, key=lambda entry: entry.name)
        except OSError:
            return
        for entry in entries:
            if self._out_of_budget():
                return
            shown = f"{shown_dir}/{entry.name}" if shown_dir else entry.name
            yield from self._entry(entry, shown, ignores, depth)

    def _entry(self, entry: os.DirEntry[str], shown: str, ignores: list[_Ignore], depth: int) -> Iterator[Entry]:
        # is_dir/is_file without following links read the directory entry's type: no stat, and a
        # symlink (to a directory or a file, inside or outside the root) is neither.
        if entry.is_dir(follow_symlinks=False):
            if depth < MAX_DEPTH and not _skipped_dir(entry.name) and not _ignored(shown + "/", ignores):
                yield from self._directory(entry.path, ignores, depth + 1)
            return
        if not entry.is_file(follow_symlinks=False) or entry.name.startswith(".") or not self.accept(entry.name):
            return
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError:
            return
        if stat.S_ISREG(info.st_mode) and info.st_size <= self.max_file_bytes and not _ignored(shown, ignores):
            self.seen += 1
            yield Entry(entry.path, shown, info.st_size, info.st_mtime_ns)

    def _out_of_budget(self) -> bool:
        if not self.stopped and time.monotonic() > self.deadline:
            self.stopped = "time cap reached"
        elif not self.stopped and self.seen >= self.max_files:
            self.stopped = f"file cap reached ({self.max_files:,} files)"
        return bool(self.stopped)


def _skipped_dir(name: str) -> bool:
    return name.startswith(".") or name in SKIPPED_DIRS or name.endswith(".egg-info")


def _read_ignore(root: str, shown_dir: str) -> list[_Ignore]:
    path = os.path.join(root, shown_dir, ".gitignore")
    try:  # never follow a link nor block on a FIFO named .gitignore
        descriptor = os.open(path, OPEN_FLAGS)
    except OSError:
        return []
    with os.fdopen(descriptor, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            return []
        lines = handle.read(IGNORE_FILE_MAX_BYTES).decode("utf-8", "replace").splitlines()
    return [_Ignore(shown_dir, pathspec.GitIgnoreSpec.from_lines(lines))]


def _ignored(shown: str, ignores: list[_Ignore]) -> bool:
    for ignore in ignores:
        if ignore.base and not shown.startswith(ignore.base + "/"):
            continue
        relative = shown[len(ignore.base) + 1:] if ignore.base else shown
        if ignore.spec.match_file(relative):
            return True
    return False
