"""What the `mnemo` CLI prints when a command fails: one line naming what is wrong and
what to do, never a traceback (mnemo.cli.main catches everything at its boundary).

mnemo's own errors already name the field and the rule; file-system errors are mostly
about $MNEMO_HOME (not ours, not a directory, not writable), so they say how to choose
another home.
"""

from __future__ import annotations

import errno
from pathlib import Path
from typing import TYPE_CHECKING

from mnemo.errors import MnemoError

if TYPE_CHECKING:
    from mnemo.config import Settings

DEBUG_HINT = "run again with --log-level debug to see where"
HOME_HINT = "choose a directory you own and can write with --home or MNEMO_HOME"


def one_line(err: BaseException, settings: Settings | None) -> str:
    """The message for `err`, one line, ending with what to do."""
    if isinstance(err, MnemoError):
        return _flat(_mnemo(err))
    if isinstance(err, OSError):
        return _flat(_os(err, settings))
    return _flat(f"unexpected {type(err).__name__}: {err} ({DEBUG_HINT})")


def _mnemo(err: MnemoError) -> str:
    text = f"{err.code}: {err}"  # the code too: scripts and tests match on it
    if err.code == "UNAVAILABLE":
        return f"{text}; is the stack running? `mnemo status` shows it, `mnemo up` starts it"
    return text


def _os(err: OSError, settings: Settings | None) -> str:
    path = err.filename if isinstance(err.filename, str) else ""
    hint = _home_hint(path, settings)
    if err.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return f"cannot write {path or 'a file'}: {(err.strerror or 'permission denied').lower()}; {hint}"
    if err.errno in (errno.ENOTDIR, errno.EEXIST):
        return f"{path} or a folder above it is a file, not a directory; {hint}"
    if err.errno == errno.ENOSPC:
        return f"no space left on the device holding {path or 'the home'}; free some space"
    what = err.strerror or str(err)
    return f"{what}{': ' + path if path else ''}; {hint if path else DEBUG_HINT}"


def _home_hint(path: str, settings: Settings | None) -> str:
    if settings is None or not path:
        return HOME_HINT
    try:
        inside = Path(path).resolve().is_relative_to(settings.home) or settings.home.is_relative_to(path)
    except (OSError, ValueError):
        inside = False
    return f"MNEMO_HOME is {settings.home}: {HOME_HINT}" if inside else "check that path's permissions"


def _flat(text: str) -> str:
    return " ".join(text.split())
