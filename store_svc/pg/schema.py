"""The PostgreSQL schema of the store: the same tables and columns as SQLite (claude-mem names),
versioned migrations with the same numbers, and PostgreSQL's own search structures.

The migrations are frozen SQL text (store_svc/migrations/postgres/). Their relational tables are
SQLite's DDL translated mechanically when each was written (every integer 64-bit, AUTOINCREMENT
keys as identities), so the two backends have the same columns. What differs:

- Full text: each record table has a generated `fts` tsvector, one weight per column
  (setweight A-D mirroring the bm25 field weights of store_svc.queries.KINDS), GIN-indexed,
  built with the `mnemo` configuration ('simple' plus the English Snowball stemmer, no stop
  words: FTS5 here is porter over unicode61) over the text with punctuation turned into
  spaces (`mnemo_words`), as FTS5's unicode61 splits it.
- Rows stay in the heap page, uncompressed, up to 8 KB (`toast_tuple_target`): ranking reads
  every matching row's tsvector, and with the default 2 KB target PostgreSQL compressed or moved
  parts of a typical observation's row out of line; search p50 over 10k observations went from
  148 ms to 33 ms (bench/store.py's queries, in process).
- The GIN index's pending list (fastupdate: new rows' entries wait there, unsorted, until
  merged) is capped at 1 MB instead of the server's 4 MB: every search scans the whole list,
  and after a 20k bulk load a full one made searches 32 ms instead of 11; ingest rate
  unchanged within noise (1,980 vs 1,920 observations/s; 256 kB cost 17%).
- Substrings (CJK runs): a pg_trgm GIN index over the row's text, only on rows with CJK.
- Context words of observations (migration 8): SQLite's `observation_context` table with a
  tsvector of its own, filled by a trigger when a row is inserted (`mnemo_context`).
- Change feed: one trigger function appends (kind, id, op) for every insert, update and
  delete, in the writer's transaction (see store_svc.pg.backend for why seq order is
  commit order).
"""

from __future__ import annotations

from typing import Any

import psycopg

from mnemo.logs import get_logger
from mnemo.timefmt import iso_from_ms, now_ms
from store_svc import migrations
from store_svc.migrations import Migration
from store_svc.schema import OBSERVATION_FTS_COLUMNS, PROMPT_FTS_COLUMNS, SUMMARY_FTS_COLUMNS

log = get_logger(__name__)

# The text search configuration: 'simple' (lowercase, every word kept, no stop words) with the
# Snowball English stemmer on words, as SQLite's FTS5 runs Porter on unicode61 tokens.
TS_CONFIG = "mnemo"

# Key of the transaction-scoped advisory lock every write transaction (and migration) takes.
WRITE_LOCK_KEY = 0x6D6E656D6F5F7731  # "mnemo_w1"

# The ts_rank weights {D, C, B, A} of each kind: migration 2 labels each full-text column A-D so
# that label ratios equal the bm25 weight ratios of store_svc.queries.KINDS
# (observations: title A, subtitle B, facts and concepts C, narrative and text D).
RANK_WEIGHTS: dict[str, str] = {  # observations 1:2:4:8 (narrative/text : facts/concepts : subtitle : title)
    "observations": "{0.125, 0.25, 0.5, 1.0}",
    "session_summaries": "{0.25, 0.25, 0.25, 1.0}",  # request 4, the rest 1
    "user_prompts": "{0.1, 0.2, 0.4, 1.0}",
}
TEXT_COLUMNS = {"observations": OBSERVATION_FTS_COLUMNS, "session_summaries": SUMMARY_FTS_COLUMNS,
                "user_prompts": PROMPT_FTS_COLUMNS}


def haystack(table: str, alias: str = "") -> str:
    """The row's text as one string (what the trigram index covers); alias-qualified for queries."""
    prefix = f"{alias}." if alias else ""
    return " || ' ' || ".join(f"coalesce({prefix}{c}, '')" for c in TEXT_COLUMNS[table])


# (version, name, SQL): the frozen text of store_svc/migrations/postgres/, numbered as SQLite's so
# schema_version means the same on both backends. Append only, as a new file.
MIGRATIONS: tuple[Migration, ...] = migrations.frozen("postgres")
LATEST_VERSION = MIGRATIONS[-1][0]


def migrate(conn: psycopg.Connection[Any]) -> int:
    """Apply every missing migration, each in its own transaction under the write lock (two
    replicas starting together: the second waits, then finds the work done). Returns the version."""
    version = 0
    for number, name, sql in MIGRATIONS:
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK_KEY,))
            conn.execute("CREATE TABLE IF NOT EXISTS schema_version (version BIGINT PRIMARY KEY, name TEXT NOT NULL, "
                         "applied_at TEXT NOT NULL)")
            row = conn.execute("SELECT coalesce(max(version), 0) FROM schema_version").fetchone()
            version = int(row[0]) if row else 0
            if number <= version:
                continue
            conn.execute(sql.encode())  # no parameters: several statements in one go
            conn.execute("INSERT INTO schema_version(version, name, applied_at) VALUES (%s, %s, %s)",
                         (number, name, iso_from_ms(now_ms())))
        log.info("migrated", backend="postgres", version=number, name=name)
        version = number
    return version
