"""The viewer already serving a home, so `mnemo ui` run again prints a fresh link into it
instead of starting a second server (a one-time link opens one browser only).

A viewer records itself in $MNEMO_HOME/run/viewer.json (pid, port, and the secret that
lets its owner ask for new links), private like everything under run/ (0700). Run again,
`mnemo ui` asks that viewer for a new one-time token over loopback; a record left by a
viewer that died, or that does not answer, is ignored and replaced.
"""

from __future__ import annotations

import json
import os
import urllib.request
from pathlib import Path
from typing import Any

from mnemo.config import Settings
from mnemo.processes import pid_alive
from viewer.auth import LINK_HEADER, LINK_PATH, TOKEN_PARAM

LOOPBACK = "127.0.0.1"
RECORD = "viewer.json"
ASK_TIMEOUT_S = 3.0


def _path(settings: Settings) -> Path:
    return settings.run_dir / RECORD


def fresh_link(settings: Settings) -> str:
    """A new one-time URL into the viewer running for this home; "" when none answers."""
    try:
        known = json.loads(_path(settings).read_text(encoding="utf-8"))
        pid, port, secret = int(known["pid"]), int(known["port"]), str(known["secret"])
    except (OSError, ValueError, KeyError, TypeError):
        return ""
    if not pid_alive(pid):
        return ""
    request = urllib.request.Request(f"http://{LOOPBACK}:{port}{LINK_PATH}", method="POST", data=b"",
                                     headers={LINK_HEADER: secret})
    try:
        with urllib.request.urlopen(request, timeout=ASK_TIMEOUT_S) as reply:  # noqa: S310 - loopback only
            token = json.loads(reply.read())["token"]
    except (OSError, ValueError, KeyError):
        return ""
    return f"http://{LOOPBACK}:{port}/?{TOKEN_PARAM}={token}"


def record(settings: Settings, port: int, secret: str) -> dict[str, Any] | None:
    """Write this viewer's record (0600); None when the home has no run/ to hold it."""
    mine = {"pid": os.getpid(), "port": port, "secret": secret}
    path = _path(settings)
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(path.with_suffix(".tmp"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(mine, out)
        os.replace(path.with_suffix(".tmp"), path)
    except OSError:
        return None
    return {**mine, "path": str(path)}


def forget(mine: dict[str, Any] | None) -> None:
    """Remove the record at exit, unless another viewer has replaced it since."""
    if mine is None:
        return
    path = Path(mine["path"])
    try:
        if int(json.loads(path.read_text(encoding="utf-8"))["pid"]) == mine["pid"]:
            path.unlink()
    except (OSError, ValueError, KeyError, TypeError):
        return
