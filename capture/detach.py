"""Finish a hook's work after the host has its reply.

Claude Code runs `"async": true` hooks in the background, but cancels the ones still
running when it exits (`claude -p` exits right after the last answer), which would drop
the last tool use and the Stop summary. So a hook installed with MNEMO_HOOK_DETACH=1
reads its payload, forks a child in a session of its own (no terminal, stdin/stdout/
stderr on /dev/null, so the host sees end-of-output at once), replies `{}` and exits;
the child does the work.

The child leaves an in-flight marker in the session's journal folder while it works, so
a Stop or SessionEnd that comes next waits (bounded) for the tool uses before it
summarises them.
"""

from __future__ import annotations

import os
import sys
from typing import Any

ENV_FLAG = "MNEMO_HOOK_DETACH"
DETACHED_EVENTS = frozenset({"PostToolUse", "PostToolUseFailure", "SubagentStop", "PreCompact", "Stop"})


def wanted(event: str, environ: Any = None) -> bool:
    environ = os.environ if environ is None else environ
    return event in DETACHED_EVENTS and environ.get(ENV_FLAG) == "1" and hasattr(os, "fork")


def fork_worker() -> int:
    """0 in the worker (detached from the host), the worker's pid in the parent."""
    sys.stdout.flush()
    pid = os.fork()
    if pid:
        return pid
    os.setsid()  # out of the host's process group: its cancel does not reach us
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    os.close(devnull)
    return 0


def await_marker(journal: Any, pid: int, timeout_s: float = 2.0) -> None:
    """In the worker: wait (bounded) until the parent has written this worker's marker,
    which fixes its turn among the session's workers."""
    import time

    deadline = time.monotonic() + timeout_s
    while not any(p == pid for _, p in journal.markers()) and time.monotonic() < deadline:
        time.sleep(0.005)  # the parent writes it right after fork returns
