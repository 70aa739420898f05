"""A quiet SQLite store empties its connections' page caches; a busy or closed one is left alone."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from store_svc.backend import SqliteBackend
from store_svc.idle_memory import IdleRelease

pytestmark = pytest.mark.unit


def test_release_runs_only_when_no_read_is_in_flight_and_not_after_close(tmp_path: Path):
    backend = SqliteBackend(tmp_path / "s.db")
    with backend.reading() as conn:
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        assert backend.release_memory() is False  # a read in flight
    assert backend.activity() == 1
    assert backend.release_memory() is True
    backend.close()
    assert backend.release_memory() is False


def test_the_watcher_releases_once_per_quiet_stretch_after_activity(tmp_path: Path):
    backend = SqliteBackend(tmp_path / "s.db")
    released = threading.Event()
    calls: list[int] = []

    class Spy:
        def activity(self) -> int:
            return backend.activity()

        def release_memory(self) -> bool:
            calls.append(backend.activity())
            released.set()
            return backend.release_memory()

    watcher = IdleRelease(Spy(), quiet_s=0.03).start()
    try:
        with backend.reading() as conn:
            conn.execute("SELECT 1").fetchone()
        assert released.wait(10)
        settled = len(calls)
        released.clear()
        assert not released.wait(0.2)  # no new activity: no second release
        assert len(calls) == settled == 1
    finally:
        watcher.stop()
        backend.close()


def test_a_slow_trickle_of_reads_is_no_burst_and_does_not_hold_the_caches(tmp_path: Path):
    """vector_svc's follower reads the feed twice a second for as long as it runs: the store
    still releases, once per quiet period, while reads trickle in below BUSY_PER_S."""
    backend = SqliteBackend(tmp_path / "s.db")
    released = threading.Event()

    class Spy:
        def activity(self) -> int:
            return backend.activity()

        def release_memory(self) -> bool:
            released.set()
            return backend.release_memory()

    watcher = IdleRelease(Spy(), quiet_s=0.9).start()  # a window of 0.3 s: a burst is more than 1.2 reads
    try:
        stop = threading.Event()

        def trickle() -> None:
            while not stop.wait(0.5):
                with backend.reading() as conn:
                    conn.execute("SELECT 1").fetchone()

        reader = threading.Thread(target=trickle, daemon=True)
        reader.start()
        assert released.wait(20)
        stop.set()
        reader.join(5)
    finally:
        watcher.stop()
        backend.close()
