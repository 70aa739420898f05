"""The SQLite backend of the store: one file, one writer connection, a reader per thread.

Concurrency: every write runs in one `BEGIN IMMEDIATE` transaction on the single writer
connection, behind one lock, so a failed request leaves nothing behind. Reads use a
connection per thread (WAL lets them run beside the writer) inside a read transaction,
so counts and pages of one request see the same snapshot.

store_svc.pg.backend is the PostgreSQL twin; Store (store_svc.core) talks to either through
the same five calls: writing(), reading(), snapshot(), size_bytes(), close(), plus the
two Forget hooks.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from mnemo.errors import Unavailable
from store_svc import schema
from store_svc.dialect import Conn
from store_svc.fts_sqlite import SqliteConnection


class SqliteBackend:
    name = "sqlite"

    def __init__(self, path: Path | str):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._writer = schema.connect(self.path)
        self.schema_version = schema.migrate(self._writer)
        self._write_lock = threading.Lock()
        self._local = threading.local()
        self._readers: list[SqliteConnection] = []
        self._readers_lock = threading.Lock()
        # Reads in flight, so close() never pulls a connection from under a handler thread
        # that gRPC's stop() left running (closing it then can crash the sqlite module).
        self._in_flight = 0
        self._idle = threading.Condition(self._readers_lock)
        self._closed = False
        self._started = 0  # reads and writes started, for store_svc.idle_memory

    def close(self, drain_s: float = 5.0) -> None:
        with self._idle:
            self._closed = True
            self._idle.wait_for(lambda: self._in_flight == 0, timeout=drain_s)
            for conn in self._readers:
                conn.close()
            self._readers.clear()
        with self._write_lock:
            self._writer.close()

    def activity(self) -> int:
        return self._started

    def release_memory(self) -> bool:
        """Empty every connection's page cache (store_svc.idle_memory), when no read is in flight
        (a read waits for this lock to start) and the writer is free; False when something runs."""
        with self._idle:  # close() marks the store closed under this lock before it closes the writer
            if self._closed or self._in_flight or not self._write_lock.acquire(blocking=False):
                return False
            try:
                for conn in [*self._readers, self._writer]:
                    conn.execute("PRAGMA shrink_memory")
            finally:
                self._write_lock.release()
        return True

    @contextmanager
    def writing(self) -> Iterator[Conn]:
        """One write transaction: committed when the block succeeds, rolled back otherwise."""
        self._started += 1
        with self._write_lock:
            self._writer.execute("BEGIN IMMEDIATE")
            try:
                yield self._writer
                self._writer.execute("COMMIT")
            except BaseException:
                if self._writer.in_transaction:
                    self._writer.execute("ROLLBACK")
                raise

    def _reader(self) -> SqliteConnection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = schema.connect(self.path, readonly=True)
            self._local.conn = conn
            with self._readers_lock:
                self._readers.append(conn)
        return conn

    @contextmanager
    def reading(self) -> Iterator[Conn]:
        """A consistent snapshot for the duration of one read RPC."""
        with self._idle:
            if self._closed:
                raise Unavailable("the store is shutting down; retry in a moment")
            self._in_flight += 1
            self._started += 1
        try:
            conn = self._reader()
            conn.execute("BEGIN")
            try:
                yield conn
            finally:
                conn.execute("COMMIT")
        finally:
            with self._idle:
                self._in_flight -= 1
                self._idle.notify_all()

    @contextmanager
    def snapshot(self) -> Iterator[Conn]:
        """A connection of its own with one read transaction for a long stream (Export)."""
        conn = schema.connect(self.path, readonly=True)
        try:
            conn.execute("BEGIN")
            yield conn
            conn.execute("COMMIT")
        finally:
            conn.close()

    def size_bytes(self, conn: Conn) -> int:
        return sum(p.stat().st_size for p in (self.path, Path(f"{self.path}-wal")) if p.exists())

    @staticmethod
    def before_forget(conn: Conn) -> None:
        # Per connection and sticky: the writer zeroes what it frees from now on.
        conn.execute("PRAGMA secure_delete = ON")

    def after_forget(self) -> None:
        """Copy the WAL into the database and truncate it, so no old page image keeps the text."""
        scrubber = schema.connect(self.path)
        try:
            scrubber.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        finally:
            scrubber.close()
