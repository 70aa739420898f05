"""Migration 15 (session ids per project) on a database of version 14 with sessions, prompts,
observations, summaries and tool uses: every row stays as it was, records get the session row
their memory id named (none for a memory id without a session), the change feed and the context
words are untouched, foreign keys still hold, and one id may then name a session in each project;
on both backends."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from store_svc import schema

pytestmark = pytest.mark.unit

_SEED = [
    "INSERT INTO sdk_sessions(id, content_session_id, memory_session_id, project, platform_source, started_at, "
    "started_at_epoch) VALUES (1, 'c1', 'm1', 'alpha', 'claude', 't', 1), (2, 'c2', 'm2', 'beta', 'codex', 't', 2), "
    "(3, 'c3', 'm3', 'alpha', 'claude', 't', 3)",
    "DELETE FROM sdk_sessions WHERE id = 3",  # its id is never given out again
    "INSERT INTO user_prompts(id, session_db_id, content_session_id, prompt_number, prompt_text, created_at, "
    "created_at_epoch) VALUES (1, 1, 'c1', 1, 'plan the museum trip', 't', 1), (2, 2, 'c2', 1, 'beta prompt', 't', 2)",
    "INSERT INTO observations(id, memory_session_id, project, type, title, narrative, created_at, created_at_epoch, "
    "content_hash) VALUES (1, 'm1', 'alpha', 'discovery', 'Planning', 'museum trip', 't', 10, 'h1'), "
    "(2, 'm1', 'alpha', 'discovery', 'Answer', 'on saturday', 't', 20, 'h2'), "
    "(3, 'm2', 'beta', 'change', 'Beta', 'beta words', 't', 30, 'h3'), "
    "(4, 'm-none', 'alpha', 'change', 'Orphan', 'no session', 't', 40, 'h4')",
    "INSERT INTO session_summaries(id, memory_session_id, project, request, created_at, created_at_epoch) "
    "VALUES (1, 'm1', 'alpha', 'the trip', 't', 50), (2, 'm2', 'beta', 'beta summary', 't', 60)",
    "INSERT INTO tool_uses(id, session_db_id, content_session_id, tool_use_id, tool_name, created_at, "
    "created_at_epoch) VALUES (1, 1, 'c1', 'tu-1', 'Read', 't', 5), (2, 2, 'c2', 'tu-1', 'Read', 't', 6)",
]
_KEPT = {  # the rows as written, read back the same way before and after
    "sdk_sessions": "SELECT id, content_session_id, memory_session_id, project, platform_source FROM sdk_sessions",
    "user_prompts": "SELECT id, session_db_id, prompt_text FROM user_prompts",
    "observations": "SELECT id, memory_session_id, project, title, content_hash FROM observations",
    "session_summaries": "SELECT id, memory_session_id, project, request FROM session_summaries",
    "tool_uses": "SELECT id, session_db_id, tool_use_id FROM tool_uses",
    "observation_context": "SELECT id, context FROM observation_context",
    "change_feed": "SELECT max(seq), count(*) FROM change_feed",
}
_LINKS = ("SELECT 'o', id, session_db_id FROM observations UNION ALL "
          "SELECT 's', id, session_db_id FROM session_summaries ORDER BY 1, 2")
EXPECTED_LINKS = [["o", 1, 1], ["o", 2, 1], ["o", 3, 2], ["o", 4, None], ["s", 1, 1], ["s", 2, 2]]
# Another project's session with the very same ids, and its own copy of a call id.
_TWIN = ["INSERT INTO sdk_sessions(id, content_session_id, memory_session_id, project, platform_source, started_at, "
         "started_at_epoch) VALUES (10, 'c1', 'm1', 'beta', 'claude', 't', 7)",
         "INSERT INTO tool_uses(id, session_db_id, content_session_id, tool_use_id, tool_name, created_at, "
         "created_at_epoch) VALUES (10, 10, 'c1', 'tu-1', 'Read', 't', 8)"]
_SAME_PROJECT = ("INSERT INTO sdk_sessions(id, content_session_id, memory_session_id, project, platform_source, "
                 "started_at, started_at_epoch) VALUES (11, 'c1', 'm9', 'alpha', 'claude', 't', 9)")


def _snapshot(query: Callable[[str], list[Any]]) -> dict[str, list[list[Any]]]:
    return {name: sorted([list(r) for r in query(sql)], key=repr) for name, sql in _KEPT.items()}


def test_sqlite_sessions_become_each_projects_own_and_nothing_is_lost(tmp_path, monkeypatch):
    every = schema.MIGRATIONS
    monkeypatch.setattr(schema, "MIGRATIONS", every[:14])
    conn = schema.connect(tmp_path / "m.db")
    try:
        assert schema.migrate(conn) == 14
        with conn:
            for sql in _SEED:
                conn.execute(sql)
        before = _snapshot(lambda sql: conn.execute(sql).fetchall())
        monkeypatch.setattr(schema, "MIGRATIONS", every[:15])
        assert schema.migrate(conn) == 15
        assert _snapshot(lambda sql: conn.execute(sql).fetchall()) == before
        assert [list(r) for r in conn.execute(_LINKS)] == EXPECTED_LINKS
        assert conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'sdk_sessions'").fetchone()[0] == 3
        assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
        for index in ("observations_fts", "session_summaries_fts"):  # the trigram ones hold only CJK rows
            conn.execute(f"INSERT INTO {index}({index}, rank) VALUES ('integrity-check', 1)")
        with conn:
            for sql in _TWIN:
                conn.execute(sql)
        with pytest.raises(schema.sqlite3.IntegrityError), conn:
            conn.execute(_SAME_PROJECT)
        with conn:  # a session's prompts and tool uses still go with it
            conn.execute("DELETE FROM sdk_sessions WHERE id = 1")
        assert conn.execute("SELECT count(*) FROM user_prompts").fetchone()[0] == 1
        assert [r[0] for r in conn.execute("SELECT id FROM tool_uses ORDER BY id")] == [2, 10]
    finally:
        conn.close()


def test_postgres_sessions_become_each_projects_own_and_nothing_is_lost(postgres_database, monkeypatch):
    import psycopg

    from store_svc.pg import schema as pg_schema

    every = pg_schema.MIGRATIONS
    monkeypatch.setattr(pg_schema, "MIGRATIONS", every[:14])
    with psycopg.connect(postgres_database, autocommit=True) as conn:
        assert pg_schema.migrate(conn) == 14
        for sql in _SEED:
            conn.execute(sql.encode())
        before = _snapshot(lambda sql: conn.execute(sql.encode()).fetchall())
        monkeypatch.setattr(pg_schema, "MIGRATIONS", every[:15])
        assert pg_schema.migrate(conn) == 15
        assert _snapshot(lambda sql: conn.execute(sql.encode()).fetchall()) == before
        assert [list(r) for r in conn.execute(_LINKS.encode())] == EXPECTED_LINKS
        for sql in _TWIN:
            conn.execute(sql.encode())
        with pytest.raises(psycopg.errors.UniqueViolation):
            conn.execute(_SAME_PROJECT.encode())
        conn.execute(b"DELETE FROM sdk_sessions WHERE id = 1")
        assert conn.execute(b"SELECT count(*) FROM user_prompts").fetchone()[0] == 1
        assert [r[0] for r in conn.execute(b"SELECT id FROM tool_uses ORDER BY id")] == [2, 10]
