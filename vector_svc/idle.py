"""Idling out: vector_svc exits after `vector_idle_exit_s` without use, to give its memory back.

The local stack stays up between agent sessions, and vector_svc is most of its memory (Chroma's
segments and the embedding model). Use is a call that needs the index (a query, a corpus
call, Sync, Rebuild) or a change the follower applied; Status and Count are not use, since
search_svc and gateways ask them in the background. The follower must also be caught up:
a backlog is work to finish, not idleness. When both hold, the service marks itself idle
(mnemo/wake.py, so the supervisor does not take the exit for a crash) and stops as SIGTERM
would stop it. The supervisor starts it again on the next need.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from mnemo.logs import get_logger

log = get_logger(__name__)

CHECK_MAX_S = 30.0  # the idle check runs a few times per idle period, at most this far apart
CHECK_MIN_S = 0.05


class Activity:
    """When the service was last used; a call in progress (a rebuild takes minutes) is use throughout."""

    def __init__(self, clock: Callable[[], float] = time.monotonic):
        self._clock = clock
        self._last = clock()
        self._lock = threading.Lock()
        self._in_progress = 0

    def touch(self) -> None:
        self._last = self._clock()

    @contextmanager
    def using(self) -> Iterator[None]:
        with self._lock:
            self._in_progress += 1
        try:
            yield
        finally:
            with self._lock:
                self._in_progress -= 1
                self.touch()

    def idle_for(self) -> float:
        with self._lock:
            return 0.0 if self._in_progress else self._clock() - self._last


class IdleExit:
    """Calls `on_idle` once, when the service has been unused for `idle_s` and `may_rest()` (nothing
    left to follow, a supervisor to wake it)."""

    def __init__(self, activity: Activity, may_rest: Callable[[], bool], idle_s: float,
                 on_idle: Callable[[], None]):
        self.activity, self.may_rest, self.idle_s, self.on_idle = activity, may_rest, idle_s, on_idle
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def due(self) -> bool:
        return self.idle_s > 0 and self.activity.idle_for() >= self.idle_s and self.may_rest()

    def start(self) -> None:
        if self.idle_s <= 0:
            return  # 0: never idle out
        self._thread = threading.Thread(target=self._watch, name="vector-idle-exit", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()

    def _watch(self) -> None:
        every = max(CHECK_MIN_S, min(CHECK_MAX_S, self.idle_s / 4))
        while not self._stop.wait(every):
            if self.due():
                log.info("idle_exit", idle_s=round(self.activity.idle_for(), 1))
                self.on_idle()
                return
