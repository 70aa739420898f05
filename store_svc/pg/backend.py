"""The PostgreSQL backend of the store: a connection pool over one database that several
store_svc replicas may share.

Writes: every write transaction first takes one transaction-scoped advisory lock
(`pg_advisory_xact_lock(WRITE_LOCK_KEY)`), across processes and replicas: the semantics of
SQLite's BEGIN IMMEDIATE. Content-hash dedupe and external-id idempotency read, then insert;
serialized, two replicas cannot both insert the same row.

Change feed order: seq comes from an identity sequence, drawn by the feed trigger inside the
writer's transaction. Writers hold the lock from before their first nextval() until after
their commit is visible (PostgreSQL makes a commit visible, ProcArrayEndTransaction, before it
releases the transaction's locks), so the next writer draws higher numbers only after every
lower number is committed or rolled back. Hence a reader that sees seq N sees every committed
seq below N: a follower reading `seq > after` never skips a row that commits later. Rolled
back transactions leave gaps, which followers simply never see.

Reads: one REPEATABLE READ READ ONLY transaction per request (one snapshot for counts and
pages), concurrent with each other and with the writer.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg import pq
from psycopg_pool import ConnectionPool, PoolClosed, PoolTimeout

from mnemo.errors import Unavailable
from mnemo.logs import get_logger
from store_svc.dialect import Conn
from store_svc.pg import schema as pg_schema
from store_svc.pg.conn import PgConnection
from store_svc.schema import KIND_TABLES

log = get_logger(__name__)

# One snapshot for all the statements of a read (counts and pages agree).
_BEGIN_READ = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"
# Tables whose dead tuples may still hold forgotten text until vacuumed.
_TEXT_TABLES = ("observations", "session_summaries", "user_prompts", "sdk_sessions", "tool_uses", "corpora",
                "corpus_history", "work_state", "work_state_history", "cursors", "marked_wrong")


class PgBackend:
    name = "postgres"
    path = None

    def __init__(self, dsn: str, *, pool_size: int = 8, connect_timeout_s: float = 10.0):
        self._pool = ConnectionPool(dsn, min_size=1, max_size=max(pool_size, 1), open=False,
                                    kwargs={"autocommit": True}, name="mnemo-store", timeout=connect_timeout_s)
        try:
            self._pool.open(wait=True, timeout=connect_timeout_s)
        except PoolTimeout:
            self._pool.close()
            raise Unavailable("cannot connect to PostgreSQL (store_dsn); is the database up and reachable?") from None
        try:
            with self._pool.connection() as raw:
                self.schema_version = pg_schema.migrate(raw)
        except BaseException:
            self._pool.close()
            raise

    def close(self, drain_s: float = 5.0) -> None:
        self._pool.close(timeout=drain_s)

    @contextmanager
    def _transaction(self, begin: str, lock: bool) -> Iterator[Conn]:
        try:
            with self._pool.connection() as raw:
                raw.execute(begin)
                try:
                    if lock:
                        raw.execute("SELECT pg_advisory_xact_lock(%s)", (pg_schema.WRITE_LOCK_KEY,))
                    yield PgConnection(raw)
                    raw.execute("COMMIT")
                    if lock:
                        _analyze_grown_tables(raw)
                except BaseException:
                    _rollback(raw)
                    raise
        except (PoolClosed, PoolTimeout):
            raise Unavailable("the store's database connections are busy or closed; retry in a moment") from None
        except psycopg.OperationalError as err:
            log.warning("postgres unavailable", error=type(err).__name__)
            raise Unavailable("the store's database is unreachable; retry in a moment") from None

    def writing(self) -> Any:
        """One write transaction, serialized with every other writer of the database."""
        return self._transaction("BEGIN", lock=True)

    def reading(self) -> Any:
        """A consistent snapshot for the duration of one read RPC."""
        return self._transaction(_BEGIN_READ, lock=False)

    def snapshot(self) -> Any:
        """One snapshot for a long stream (Export), on a pooled connection of its own."""
        return self._transaction(_BEGIN_READ, lock=False)

    @staticmethod
    def size_bytes(conn: Conn) -> int:
        return int(conn.execute("SELECT pg_database_size(current_database())").fetchone()[0])

    @staticmethod
    def before_forget(conn: Conn) -> None:
        """Nothing to switch on: PostgreSQL keeps deleted tuples until VACUUM (after_forget)."""

    def after_forget(self) -> None:
        """Vacuum the tables so the forgotten rows' dead tuples are reclaimed now rather than
        whenever autovacuum comes by (VACUUM cannot run inside the Forget's transaction)."""
        try:
            with self._pool.connection() as raw:
                raw.execute(f"VACUUM {', '.join(_TEXT_TABLES)}".encode())
        except psycopg.Error as err:  # the forget itself is committed; autovacuum will follow
            log.warning("vacuum after forget failed", error=type(err).__name__)


# Record tables re-analyzed by the writer once they have grown past their statistics.
_SEARCHED_TABLES = tuple(KIND_TABLES.values())
ANALYZE_MIN_CHANGES = 1000


def _analyze_grown_tables(raw: psycopg.Connection[Any]) -> None:
    """ANALYZE a record table that changed more rows than it held at its last ANALYZE (never
    analyzed: reltuples -1). Without statistics after a bulk load the planner scans the whole
    table for a full-text match instead of using the GIN index (20k fresh observations: 43 ms
    searches instead of 10) until autovacuum comes by, up to a minute later. Doubling steps keep
    it rare (log2 of the growth); SKIP_LOCKED leaves a table autovacuum is analyzing alone."""
    try:
        rows = raw.execute(
            "SELECT c.relname FROM pg_class c JOIN pg_stat_user_tables s ON s.relid = c.oid "
            "WHERE c.relname = ANY(%s) AND c.relnamespace = 'public'::regnamespace "
            "AND s.n_mod_since_analyze >= %s AND s.n_mod_since_analyze > greatest(c.reltuples, 0)",
            (list(_SEARCHED_TABLES), ANALYZE_MIN_CHANGES)).fetchall()
        for (table,) in rows:
            if table in _SEARCHED_TABLES:  # our own names only, never text from the catalogue
                raw.execute(f"ANALYZE (SKIP_LOCKED) {table}".encode())
    except psycopg.Error as err:  # the write is committed; autovacuum will analyze later
        log.warning("analyze after write failed", error=type(err).__name__)


def _rollback(raw: psycopg.Connection[Any]) -> None:
    if raw.closed or raw.info.transaction_status == pq.TransactionStatus.IDLE:
        return
    with contextlib.suppress(psycopg.Error):  # the pool discards a broken connection when it comes back
        raw.execute("ROLLBACK")
