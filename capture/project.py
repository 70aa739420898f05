"""The project a session belongs to: an explicit override, else the basename of the git
root above the working directory, else the working directory's basename.

No subprocess (`git rev-parse` would cost a fork per hook): walk up looking for `.git`,
which is a directory in a clone and a file in a worktree or submodule.
"""

from __future__ import annotations

import os
from pathlib import Path

from mnemo.vocab import DEFAULT_PROJECT


def git_root(start: str | os.PathLike[str]) -> Path | None:
    """The nearest directory at or above `start` that holds a `.git` entry."""
    try:
        current = Path(start).expanduser().resolve()
    except (OSError, RuntimeError):
        return None
    for candidate in (current, *current.parents):
        if (candidate / ".git").exists():
            return candidate
    return None


def project_name(cwd: str | None, override: str = "") -> str:
    """Project name for a hook event (at most 256 bytes, never empty)."""
    if override and override.strip():
        return _bounded(override.strip())
    if not cwd:
        return DEFAULT_PROJECT
    root = git_root(cwd)
    name = (root or Path(cwd)).name
    return _bounded(name) if name else DEFAULT_PROJECT


def _bounded(name: str) -> str:
    encoded = name.encode("utf-8")[:256]
    return encoded.decode("utf-8", errors="ignore") or DEFAULT_PROJECT
