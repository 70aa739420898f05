"""Giving back what a burst of reads left behind once the store has been quiet for a while.

Each reader thread has its own SQLite connection (store_svc.backend), and each connection keeps
a page cache of up to 2 MB that is never returned: after a burst served by several gRPC
threads (an import, a search beside the vector follower's reads), the process keeps the sum.
After QUIET_S without a burst (reads and writes slower than BUSY_PER_S), if anything ran since
the last time, `PRAGMA shrink_memory` empties every connection's cache and `malloc_trim(0)` hands
the freed heap to the system. Measured in one process on bench/peer's 10,000-observation store:
six reader threads after 40 searches each, 43 MiB RSS; malloc_trim alone 42.6; with
shrink_memory first, 32.3. The stack stays up between agent sessions, so the idle store is what
it costs most of the time. A search right after a release costs the same CPU as one before it
(6.05 against 6.06 ms p50, 120 searches each: SQLite reads its pages back from the system's
file cache).
"""

from __future__ import annotations

import threading
from typing import Protocol

from mnemo.heap import trim_heap
from mnemo.logs import get_logger

log = get_logger(__name__)

QUIET_S = 15.0  # this long without a burst: release (checked every QUIET_S / 3)
# Fewer reads and writes a second than this is no burst: vector_svc's follower reads the change
# feed twice a second (vector_poll_ms) for as long as it runs, and that must not keep the caches.
BUSY_PER_S = 4.0


class Releasable(Protocol):
    def activity(self) -> int:
        """Reads and writes started so far (a counter that only grows)."""
        ...

    def release_memory(self) -> bool:
        """Empty the connections' page caches when nothing runs; True when it did."""
        ...


class IdleRelease:
    """A daemon thread: once per quiet period after activity, release the backend's memory."""

    def __init__(self, backend: Releasable, quiet_s: float = QUIET_S):
        self.backend, self.quiet_s = backend, quiet_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="store-idle-release", daemon=True)
        self.releases = 0  # for tests

    def start(self) -> IdleRelease:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()

    def _watch(self) -> None:
        step = self.quiet_s / 3
        seen = released = self.backend.activity()
        quiet = 0.0
        while not self._stop.wait(step):
            now = self.backend.activity()
            started, seen = now - seen, now
            if started > BUSY_PER_S * step:  # a burst: wait for a quiet stretch after it
                quiet = 0.0
                continue
            quiet += step
            if now != released and quiet >= self.quiet_s and self.backend.release_memory():
                released, quiet = now, 0.0
                self.releases += 1
                trim_heap()
                log.debug("store_memory_released", activity=now)
