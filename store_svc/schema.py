"""The SQLite schema of the store: versioned migrations and connection setup.

Column names follow claude-mem where the concept is the same, so its databases and
exports import losslessly. The migrations are frozen SQL text (store_svc/migrations/sqlite/);
each runs in one transaction and records its version in `schema_version`; reopening a file
applies only what is missing.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from mnemo.logs import get_logger
from mnemo.timefmt import iso_from_ms, now_ms
from mnemo.v1 import store_pb2
from mnemo.vocab import KIND_OBSERVATION, KIND_PROMPT, KIND_SUMMARY, OBSERVATION_TEXT_FIELDS, SUMMARY_FIELDS
from store_svc import migrations, terms
from store_svc.fts_sqlite import SqliteConnection, enter_wal
from store_svc.migrations import Migration

log = get_logger(__name__)

# The record table of each DocKind, and the ChangeOp numbers of the change feed (the protos' enums).
KIND_TABLES = {KIND_OBSERVATION: "observations", KIND_SUMMARY: "session_summaries", KIND_PROMPT: "user_prompts"}
OP_UPSERT, OP_DELETE = store_pb2.CHANGE_OP_UPSERT, store_pb2.CHANGE_OP_DELETE

# The text columns of each record table's full-text index (migration 2; observations' index has a
# last `context` column since migration 8).
OBSERVATION_FTS_COLUMNS = OBSERVATION_TEXT_FIELDS
SUMMARY_FTS_COLUMNS = SUMMARY_FIELDS
PROMPT_FTS_COLUMNS = ("prompt_text",)

# (version, name, SQL): the frozen text of store_svc/migrations/sqlite/. Append only, as a new file.
MIGRATIONS: tuple[Migration, ...] = migrations.frozen("sqlite")
LATEST_VERSION = MIGRATIONS[-1][0]


BUSY_TIMEOUT_MS = 5000


def connect(path: Path | str, *, readonly: bool = False) -> SqliteConnection:
    """A connection with the store's pragmas; autocommit mode (transactions are explicit)."""
    conn = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False, timeout=5.0,
                           factory=SqliteConnection)
    conn.row_factory = sqlite3.Row
    # The term_stats triggers (migration 9) split a record into words with it.
    conn.create_function("mnemo_terms", 1, terms.terms_json, deterministic=True)
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("PRAGMA temp_store = MEMORY")
    if readonly:
        conn.execute("PRAGMA query_only = ON")
    else:
        enter_wal(conn, BUSY_TIMEOUT_MS / 1000)
        conn.execute("PRAGMA journal_size_limit = 4194304")
    return conn



def current_version(conn: sqlite3.Connection) -> int:
    conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, name TEXT NOT NULL, "
        "applied_at TEXT NOT NULL)"
    )
    return conn.execute("SELECT coalesce(max(version), 0) FROM schema_version").fetchone()[0]


# How long a store waits for another one's migration of the same file (an upgrade of a large
# store can take minutes); the usual busy timeout is restored afterwards.
MIGRATION_WAIT_MS = 10 * 60 * 1000


def migrate(conn: sqlite3.Connection) -> int:
    """Apply every missing migration, each in its own transaction. Returns the schema version.

    Stores that start together on one file (replicas) migrate it one at a time: each migration
    takes the write lock (BEGIN IMMEDIATE) and first records its version, so a store that read
    an older version before another applied this migration meets the version's primary key,
    rolls back before any DDL runs, and reads the version again."""
    conn.execute(f"PRAGMA busy_timeout = {MIGRATION_WAIT_MS}")
    # Foreign keys are off while migrations run (SQLite's way to rebuild a table: dropping a
    # parent with them on deletes its children through ON DELETE CASCADE, migration 15's
    # sdk_sessions); the pragma is a no-op inside a transaction, so it is set here, outside.
    conn.execute("PRAGMA foreign_keys = OFF")
    try:
        return _migrate(conn)
    finally:
        conn.execute("PRAGMA legacy_alter_table = OFF")  # a failed migration may have left it on
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")


def _migrate(conn: sqlite3.Connection) -> int:
    version = current_version(conn)
    for number, name, sql in MIGRATIONS:
        if number <= version:
            continue
        stamp = iso_from_ms(now_ms()).replace("'", "")
        script = (f"BEGIN IMMEDIATE;\nINSERT INTO schema_version(version, name, applied_at) "
                  f"VALUES ({number}, '{name}', '{stamp}');\n{sql}\nCOMMIT;")
        try:
            conn.executescript(script)
        except sqlite3.IntegrityError as err:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            if "schema_version" not in str(err):
                raise
            version = current_version(conn)  # another store applied it meanwhile
            continue
        except sqlite3.Error:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        log.info("migrated", version=number, name=name)
        version = number
    return version
