"""The SQLite schema of the store: versioned migrations and connection setup.

Column names follow claude-mem where the concept is the same, so its databases and
exports import losslessly. Each migration runs in one transaction and records its
version in `schema_version`; reopening a file applies only what is missing.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from mnemo.logs import get_logger
from mnemo.query import CJK_CLASS
from mnemo.timefmt import iso_from_ms, now_ms
from store_svc import terms
from store_svc.access import ACCESS_SQL
from store_svc.fts_sqlite import SqliteConnection, enter_wal
from store_svc.lease import LEASES_SQL

log = get_logger(__name__)

# Epoch milliseconds computed inside SQLite 3.40 (no unixepoch('subsec') yet).
_NOW_MS = "CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)"

# DocKind / ChangeOp numbers of the protos, used in the change feed.
KIND_OBSERVATION, KIND_SUMMARY, KIND_PROMPT = 1, 2, 3
KIND_TABLES = {KIND_OBSERVATION: "observations", KIND_SUMMARY: "session_summaries", KIND_PROMPT: "user_prompts"}
OP_UPSERT, OP_DELETE = 1, 2

OBSERVATION_FTS_COLUMNS = ("title", "subtitle", "narrative", "text", "facts", "concepts")
SUMMARY_FTS_COLUMNS = ("request", "investigated", "learned", "completed", "next_steps", "notes")
PROMPT_FTS_COLUMNS = ("prompt_text",)

# The last columns of every record table (prompts, observations, summaries): the time as
# claude-mem keeps it (ISO text and epoch ms), then mnemo's own import key and CJK flag.
_RECORD_COLUMNS_END = """  created_at TEXT NOT NULL,
  created_at_epoch INTEGER NOT NULL,
  external_id TEXT,
  has_cjk INTEGER
);"""

_CORE = f"""
CREATE TABLE sdk_sessions (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  content_session_id TEXT NOT NULL,
  memory_session_id TEXT UNIQUE,
  project TEXT NOT NULL,
  platform_source TEXT NOT NULL DEFAULT 'claude',
  user_prompt TEXT,
  started_at TEXT NOT NULL,
  started_at_epoch INTEGER NOT NULL,
  completed_at TEXT,
  completed_at_epoch INTEGER,
  status TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'completed', 'failed')),
  prompt_counter INTEGER NOT NULL DEFAULT 0,
  custom_title TEXT,
  external_id TEXT
);
CREATE UNIQUE INDEX ux_sdk_sessions_platform_content ON sdk_sessions(platform_source, content_session_id);
CREATE UNIQUE INDEX ux_sdk_sessions_external ON sdk_sessions(external_id) WHERE external_id IS NOT NULL;
CREATE INDEX idx_sdk_sessions_content ON sdk_sessions(content_session_id);
CREATE INDEX idx_sdk_sessions_project ON sdk_sessions(project);
CREATE INDEX idx_sdk_sessions_started ON sdk_sessions(started_at_epoch DESC);

CREATE TABLE user_prompts (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  session_db_id INTEGER REFERENCES sdk_sessions(id) ON DELETE CASCADE,
  content_session_id TEXT NOT NULL,
  prompt_number INTEGER NOT NULL,
  prompt_text TEXT NOT NULL,
{_RECORD_COLUMNS_END}
CREATE INDEX idx_user_prompts_session ON user_prompts(session_db_id, prompt_number);
CREATE INDEX idx_user_prompts_content ON user_prompts(content_session_id, prompt_number);
CREATE INDEX idx_user_prompts_created ON user_prompts(created_at_epoch);
CREATE UNIQUE INDEX ux_user_prompts_external ON user_prompts(external_id) WHERE external_id IS NOT NULL;

CREATE TABLE observations (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  memory_session_id TEXT NOT NULL,
  project TEXT NOT NULL,
  text TEXT,
  type TEXT NOT NULL,
  title TEXT,
  subtitle TEXT,
  facts TEXT,
  narrative TEXT,
  concepts TEXT,
  files_read TEXT,
  files_modified TEXT,
  prompt_number INTEGER,
  discovery_tokens INTEGER DEFAULT 0,
  created_at TEXT NOT NULL,
  created_at_epoch INTEGER NOT NULL,
  content_hash TEXT,
  external_id TEXT,
  has_cjk INTEGER
);
CREATE UNIQUE INDEX ux_observations_session_hash ON observations(memory_session_id, content_hash);
CREATE UNIQUE INDEX ux_observations_external ON observations(external_id) WHERE external_id IS NOT NULL;
CREATE INDEX idx_observations_project_created ON observations(project, created_at_epoch);
CREATE INDEX idx_observations_created ON observations(created_at_epoch);

CREATE TABLE session_summaries (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  memory_session_id TEXT NOT NULL,
  project TEXT NOT NULL,
  request TEXT,
  investigated TEXT,
  learned TEXT,
  completed TEXT,
  next_steps TEXT,
  files_read TEXT,
  files_edited TEXT,
  notes TEXT,
  prompt_number INTEGER,
  discovery_tokens INTEGER DEFAULT 0,
{_RECORD_COLUMNS_END}
CREATE INDEX idx_session_summaries_session ON session_summaries(memory_session_id, created_at_epoch);
CREATE INDEX idx_session_summaries_project_created ON session_summaries(project, created_at_epoch);
CREATE INDEX idx_session_summaries_created ON session_summaries(created_at_epoch);
CREATE UNIQUE INDEX ux_session_summaries_external ON session_summaries(external_id) WHERE external_id IS NOT NULL;
"""


def _has_cjk(prefix: str, columns: tuple[str, ...]) -> str:
    """`has_cjk` is set by the store when it writes a row (a cheap Python check); rows written
    by other tools leave it NULL and get the (slower) GLOB test. coalesce() short-circuits."""
    joined = " || ' ' || ".join(f"coalesce({prefix}.{c}, '')" for c in columns)
    return f"coalesce({prefix}.has_cjk, ({joined}) GLOB '*[{CJK_CLASS}]*')"


def _fts_and_feed(table: str, kind: int, columns: tuple[str, ...]) -> str:
    """FTS5 (porter), trigram FTS5 (only rows with CJK text) and change-feed triggers of one table.

    One trigger per event keeps inserts cheap; in updates the old index entries are
    removed before the new ones are added (external-content FTS5 requires that order).
    """
    cols = ", ".join(columns)
    new_vals = ", ".join(f"new.{c}" for c in columns)
    old_vals = ", ".join(f"old.{c}" for c in columns)
    fts, tri = f"{table}_fts", f"{table}_tri"
    add = (
        f"INSERT INTO {fts}(rowid, {cols}) VALUES (new.id, {new_vals});\n"
        f"  INSERT INTO {tri}(rowid, {cols}) SELECT new.id, {new_vals} WHERE {_has_cjk('new', columns)};"
    )
    remove = (
        f"INSERT INTO {fts}({fts}, rowid, {cols}) VALUES ('delete', old.id, {old_vals});\n"
        f"  INSERT INTO {tri}({tri}, rowid, {cols}) SELECT 'delete', old.id, {old_vals} "
        f"WHERE {_has_cjk('old', columns)};"
    )

    def feed(op: int, ref: str) -> str:
        return (f"INSERT INTO change_feed(kind, record_id, op, created_at_epoch) "
                f"VALUES ({kind}, {ref}.id, {op}, {_NOW_MS});")

    return f"""
CREATE VIRTUAL TABLE {fts} USING fts5({cols}, content='{table}', content_rowid='id',
  tokenize='porter unicode61');
CREATE VIRTUAL TABLE {tri} USING fts5({cols}, content='{table}', content_rowid='id', tokenize='trigram');
CREATE TRIGGER {table}_ai AFTER INSERT ON {table} BEGIN
  {add}
  {feed(OP_UPSERT, 'new')}
END;
CREATE TRIGGER {table}_ad AFTER DELETE ON {table} BEGIN
  {remove}
  {feed(OP_DELETE, 'old')}
END;
CREATE TRIGGER {table}_au AFTER UPDATE ON {table} BEGIN
  {remove}
  {add}
  {feed(OP_UPSERT, 'new')}
END;
"""


_SEARCH = (
    """
CREATE TABLE change_feed (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  kind INTEGER NOT NULL,
  record_id INTEGER NOT NULL,
  op INTEGER NOT NULL,
  created_at_epoch INTEGER NOT NULL
);
"""
    + _fts_and_feed("observations", KIND_OBSERVATION, OBSERVATION_FTS_COLUMNS)
    + _fts_and_feed("session_summaries", KIND_SUMMARY, SUMMARY_FTS_COLUMNS)
    + _fts_and_feed("user_prompts", KIND_PROMPT, PROMPT_FTS_COLUMNS)
)

_TOOL_USES = """
CREATE TABLE tool_uses (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  session_db_id INTEGER REFERENCES sdk_sessions(id) ON DELETE CASCADE,
  content_session_id TEXT NOT NULL,
  tool_use_id TEXT,
  tool_name TEXT NOT NULL,
  tool_input TEXT,
  tool_response TEXT,
  input_truncated INTEGER NOT NULL DEFAULT 0,
  response_truncated INTEGER NOT NULL DEFAULT 0,
  input_size INTEGER NOT NULL DEFAULT 0,
  response_size INTEGER NOT NULL DEFAULT 0,
  cwd TEXT,
  prompt_number INTEGER,
  created_at TEXT NOT NULL,
  created_at_epoch INTEGER NOT NULL
);
CREATE UNIQUE INDEX ux_tool_uses_session_call ON tool_uses(content_session_id, tool_use_id)
  WHERE tool_use_id IS NOT NULL;
CREATE INDEX idx_tool_uses_session ON tool_uses(session_db_id, created_at_epoch);
CREATE INDEX idx_tool_uses_tool_use_id ON tool_uses(tool_use_id);

CREATE TABLE observation_tool_uses (
  observation_id INTEGER NOT NULL REFERENCES observations(id) ON DELETE CASCADE,
  tool_use_id INTEGER NOT NULL REFERENCES tool_uses(id) ON DELETE CASCADE,
  PRIMARY KEY (observation_id, tool_use_id)
) WITHOUT ROWID;
CREATE INDEX idx_observation_tool_uses_tool ON observation_tool_uses(tool_use_id);
"""

# A version of a work-state entry: the current one, and each one kept in the history.
_WORK_STATE_COLUMNS = """  project TEXT NOT NULL,
  key TEXT NOT NULL,
  content TEXT NOT NULL,
  version INTEGER NOT NULL,
  updated_at TEXT NOT NULL,
  updated_at_epoch INTEGER NOT NULL,"""

_STATE = f"""
CREATE TABLE cursors (
  token TEXT PRIMARY KEY,
  state_json TEXT NOT NULL,
  created_at_epoch INTEGER NOT NULL,
  expires_at_epoch INTEGER NOT NULL
);
CREATE INDEX idx_cursors_expires ON cursors(expires_at_epoch);

CREATE TABLE work_state (
{_WORK_STATE_COLUMNS}
  PRIMARY KEY (project, key)
);
CREATE TABLE work_state_history (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
{_WORK_STATE_COLUMNS}
  UNIQUE (project, key, version)
);

CREATE TABLE corpora (
  name TEXT PRIMARY KEY,
  description TEXT NOT NULL DEFAULT '',
  filter_json TEXT NOT NULL DEFAULT '{{}}',
  observation_ids TEXT NOT NULL DEFAULT '[]',
  stats_json TEXT NOT NULL DEFAULT '{{}}',
  priming_state TEXT NOT NULL DEFAULT 'unprimed',
  last_job_json TEXT NOT NULL DEFAULT '{{}}',
  digest_json TEXT NOT NULL DEFAULT '',
  session_id TEXT NOT NULL DEFAULT '',
  created_at_epoch INTEGER NOT NULL,
  updated_at_epoch INTEGER NOT NULL
);
CREATE TABLE corpus_history (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  corpus_name TEXT NOT NULL REFERENCES corpora(name) ON DELETE CASCADE,
  question TEXT NOT NULL,
  answer TEXT NOT NULL,
  citations TEXT NOT NULL DEFAULT '[]',
  created_at_epoch INTEGER NOT NULL
);
CREATE INDEX idx_corpus_history_name ON corpus_history(corpus_name, id);
"""


def _forget_marks_with(table: str, kind: int) -> str:
    """A mark (and its reason, the owner's text) goes when its record is deleted."""
    return (f"CREATE TRIGGER {table}_ad_marked_wrong AFTER DELETE ON {table} BEGIN\n"
            f"  DELETE FROM marked_wrong WHERE kind = {kind} AND record_id = old.id;\nEND;\n")


# Records the owner marked wrong. A table of its own rather than a column: marking touches
# no record row, so the update triggers neither rewrite the FTS entries nor feed vector_svc
# a change, and the read paths skip marks with one primary-key probe.
_MARKED_WRONG = """
CREATE TABLE marked_wrong (
  kind INTEGER NOT NULL,
  record_id INTEGER NOT NULL,
  reason TEXT NOT NULL DEFAULT '',
  marked_at_epoch INTEGER NOT NULL,
  PRIMARY KEY (kind, record_id)
) WITHOUT ROWID;
""" + "".join(_forget_marks_with(table, kind) for kind, table in KIND_TABLES.items())

# Lexical context of an observation (docs/search.md, "Context words"): the text of the
# CONTEXT_BEFORE observations written just before it in the same memory session, indexed as a
# low-weight seventh column of observations_fts (its bm25 weight: fts_sqlite.CONTEXT_WEIGHT), so
# a record is also found through the words of the turn it answers. Computed once, when the row
# is inserted (from rows already there; a later row never changes an earlier row's context), and
# kept in a table of its own: the observation row, its change feed and its vector are untouched.
CONTEXT_BEFORE = 3
CONTEXT_CHARS = 1000  # of each earlier observation's text (a long narrative must not swell the index)
CONTEXT_TEXT = ("substr(coalesce({p}.title, '') || ' ' || coalesce({p}.subtitle, '') || ' ' || "
                 "coalesce({p}.narrative, '') || ' ' || coalesce({p}.text, ''), 1, " + str(CONTEXT_CHARS) + ")")


def context_of(row: str, aggregate: str = "group_concat") -> str:
    """The context of the observation `row` (an alias): the rows written just before it.
    `aggregate`: SQLite's group_concat, PostgreSQL's string_agg (store_svc.pg.schema shares this)."""
    return f"""coalesce((SELECT {aggregate}(t, ' ') FROM (
    SELECT {CONTEXT_TEXT.format(p='p')} AS t FROM observations p
    WHERE p.memory_session_id = {row}.memory_session_id AND p.id <> {row}.id
      AND (p.created_at_epoch, p.id) < ({row}.created_at_epoch, {row}.id)
    ORDER BY p.created_at_epoch DESC, p.id DESC LIMIT {CONTEXT_BEFORE}) earlier), '')"""


def context_holders(row: str) -> str:
    """The observations whose context holds `row`: the CONTEXT_BEFORE rows after it in its session."""
    return f"""(SELECT n.id FROM observations n WHERE n.memory_session_id = {row}.memory_session_id
    AND (n.created_at_epoch, n.id) > ({row}.created_at_epoch, {row}.id)
    ORDER BY n.created_at_epoch, n.id LIMIT {CONTEXT_BEFORE})"""


_LAGGED = " || ' ' || ".join(f"coalesce(lag(t, {n}) OVER w, '')" for n in range(1, CONTEXT_BEFORE + 1))
# Fills observation_context for the rows already there when the migration runs (both backends).
CONTEXT_BACKFILL = f"""INSERT INTO observation_context(id, context)
  SELECT id, trim({_LAGGED}) FROM (SELECT id, memory_session_id, created_at_epoch, {CONTEXT_TEXT.format(p='o')} AS t
    FROM observations o) s
  WINDOW w AS (PARTITION BY memory_session_id ORDER BY created_at_epoch, id);"""
_FTS_COLUMNS = ", ".join(OBSERVATION_FTS_COLUMNS)
_CONTEXT_OF = "(SELECT coalesce((SELECT context FROM observation_context WHERE id = {r}.id), ''))"


def _observation_fts_row(ref: str, delete: bool = False) -> str:
    values = ", ".join(f"{ref}.{c}" for c in OBSERVATION_FTS_COLUMNS)
    head = "observations_fts(observations_fts, rowid, " if delete else "observations_fts(rowid, "
    first = f"'delete', {ref}.id" if delete else f"{ref}.id"
    return (f"INSERT INTO {head}{_FTS_COLUMNS}, context) "
            f"VALUES ({first}, {values}, {_CONTEXT_OF.format(r=ref)});")


def _forget_from_context() -> str:
    """A deleted observation's words leave the context of the rows after it (a forgotten record
    must not stay findable, nor readable in observation_context): their context is recomputed
    from the rows still there and they are reindexed."""
    source = f"SELECT id, {_FTS_COLUMNS}, context FROM observations_fts_source WHERE id IN {context_holders('old')}"
    return f"""INSERT INTO observations_fts(observations_fts, rowid, {_FTS_COLUMNS}, context)
    SELECT 'delete', * FROM ({source});
  UPDATE observation_context SET context = (SELECT {context_of('me')} FROM observations me
    WHERE me.id = observation_context.id) WHERE id IN {context_holders('old')};
  INSERT INTO observations_fts(rowid, {_FTS_COLUMNS}, context) {source};"""


def _context_migration() -> str:
    tri_cols = _FTS_COLUMNS
    tri_new = ", ".join(f"new.{c}" for c in OBSERVATION_FTS_COLUMNS)
    tri_old = ", ".join(f"old.{c}" for c in OBSERVATION_FTS_COLUMNS)
    feed_new = (f"INSERT INTO change_feed(kind, record_id, op, created_at_epoch) "
                f"VALUES ({KIND_OBSERVATION}, new.id, {OP_UPSERT}, {_NOW_MS});")
    feed_old = (f"INSERT INTO change_feed(kind, record_id, op, created_at_epoch) "
                f"VALUES ({KIND_OBSERVATION}, old.id, {OP_DELETE}, {_NOW_MS});")
    tri_add = (f"INSERT INTO observations_tri(rowid, {tri_cols}) SELECT new.id, {tri_new} "
               f"WHERE {_has_cjk('new', OBSERVATION_FTS_COLUMNS)};")
    tri_remove = (f"INSERT INTO observations_tri(observations_tri, rowid, {tri_cols}) SELECT 'delete', old.id, "
                  f"{tri_old} WHERE {_has_cjk('old', OBSERVATION_FTS_COLUMNS)};")
    return f"""
DROP TRIGGER observations_ai;
DROP TRIGGER observations_ad;
DROP TRIGGER observations_au;
DROP TABLE observations_fts;
CREATE INDEX idx_observations_session_created ON observations(memory_session_id, created_at_epoch, id);
CREATE TABLE observation_context (
  id INTEGER PRIMARY KEY,
  context TEXT NOT NULL
);
{CONTEXT_BACKFILL}
CREATE VIEW observations_fts_source AS
  SELECT o.id AS id, {", ".join(f"o.{c} AS {c}" for c in OBSERVATION_FTS_COLUMNS)}, coalesce(c.context, '') AS context
  FROM observations o LEFT JOIN observation_context c ON c.id = o.id;
CREATE VIRTUAL TABLE observations_fts USING fts5({_FTS_COLUMNS}, context, content='observations_fts_source',
  content_rowid='id', tokenize='porter unicode61');
INSERT INTO observations_fts(observations_fts) VALUES ('rebuild');
CREATE TRIGGER observations_ai AFTER INSERT ON observations BEGIN
  INSERT INTO observation_context(id, context) VALUES (new.id, {context_of('new')});
  {_observation_fts_row('new')}
  {tri_add}
  {feed_new}
END;
CREATE TRIGGER observations_ad AFTER DELETE ON observations BEGIN
  {_observation_fts_row('old', delete=True)}
  DELETE FROM observation_context WHERE id = old.id;
  {_forget_from_context()}
  {tri_remove}
  {feed_old}
END;
CREATE TRIGGER observations_au AFTER UPDATE ON observations BEGIN
  {_observation_fts_row('old', delete=True)}
  {tri_remove}
  {_observation_fts_row('new')}
  {tri_add}
  {feed_new}
END;
"""


# (version, name, SQL). Append only: a released migration is never edited.
MIGRATIONS: tuple[tuple[int, str, str], ...] = (
    (1, "sessions, prompts, observations, summaries", _CORE),
    (2, "full-text indexes and change feed", _SEARCH),
    (3, "raw tool uses", _TOOL_USES),
    (4, "cursors, work state, corpora", _STATE),
    (5, "records marked wrong", _MARKED_WRONG),
    (6, "leases", LEASES_SQL),
    (7, "access tokens, writers, cursor owners", ACCESS_SQL),
    (8, "lexical context of observations", _context_migration()),
    (9, "word counts for specificity", terms.sqlite_migration()),
)
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
    try:
        return _migrate(conn)
    finally:
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
