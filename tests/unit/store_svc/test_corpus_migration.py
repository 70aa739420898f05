"""Migration 12 (corpus names per project) on a database of version 11 with corpora and their
history: each corpus lands in its filter's project ('' without one), its history follows it,
and the key is (project, name) afterwards, on both backends."""

from __future__ import annotations

import json

import pytest

from store_svc import schema

pytestmark = pytest.mark.unit

_CORPUS = ("INSERT INTO corpora(name, filter_json, created_at_epoch, updated_at_epoch) VALUES (%s, %s, 1, 1)")
_TURN = ("INSERT INTO corpus_history(corpus_name, question, answer, created_at_epoch) VALUES (%s, %s, 'a', 1)")
_AFTER = ("SELECT c.project, c.name, count(h.id) FROM corpora c LEFT JOIN corpus_history h "
          "ON h.corpus_project = c.project AND h.corpus_name = c.name GROUP BY c.project, c.name ORDER BY c.name")
_SECOND = ("INSERT INTO corpora(project, name, filter_json, created_at_epoch, updated_at_epoch) "
           "VALUES ('beta', 'docs', '{}', 1, 1)")
EXPECTED = [["alpha", "docs", 2], ["", "everything", 1]]


def _seed(execute) -> None:
    execute(_CORPUS, ("docs", json.dumps({"project": "alpha", "limit": 5})))
    execute(_CORPUS, ("everything", "{}"))
    for name, question in (("docs", "q1"), ("docs", "q2"), ("everything", "q3")):
        execute(_TURN, (name, question))


def test_sqlite_corpora_move_into_their_filters_project(tmp_path, monkeypatch):
    every = schema.MIGRATIONS
    monkeypatch.setattr(schema, "MIGRATIONS", every[:11])
    conn = schema.connect(tmp_path / "m.db")
    try:
        assert schema.migrate(conn) == 11
        with conn:
            _seed(lambda sql, args: conn.execute(sql.replace("%s", "?"), args))
        monkeypatch.setattr(schema, "MIGRATIONS", every[:12])
        assert schema.migrate(conn) == 12
        assert [list(r) for r in conn.execute(_AFTER)] == EXPECTED
        with conn:
            conn.execute(_SECOND)  # the same name in another project
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
        with conn:  # the history still goes with its corpus
            conn.execute("DELETE FROM corpora WHERE project = 'alpha'")
        assert conn.execute("SELECT count(*) FROM corpus_history").fetchone()[0] == 1
    finally:
        conn.close()


def test_postgres_corpora_move_into_their_filters_project(postgres_database, monkeypatch):
    import psycopg

    from store_svc.pg import schema as pg_schema

    every = pg_schema.MIGRATIONS
    monkeypatch.setattr(pg_schema, "MIGRATIONS", every[:11])
    with psycopg.connect(postgres_database, autocommit=True) as conn:
        assert pg_schema.migrate(conn) == 11
        _seed(conn.execute)
        monkeypatch.setattr(pg_schema, "MIGRATIONS", every[:12])
        assert pg_schema.migrate(conn) == 12
        assert [list(r) for r in conn.execute(_AFTER)] == EXPECTED
        conn.execute(_SECOND)
        conn.execute("DELETE FROM corpora WHERE project = 'alpha'")
        assert conn.execute("SELECT count(*) FROM corpus_history").fetchone()[0] == 1


def test_sqlite_project_corpora_primed_before_are_unprimed_after(tmp_path, monkeypatch):
    """Their passage index moved (vector_svc: one collection per project and name), so a primed
    project corpus asks to be primed again; a corpus over all projects keeps its index."""
    every = schema.MIGRATIONS
    monkeypatch.setattr(schema, "MIGRATIONS", every[:11])
    conn = schema.connect(tmp_path / "m.db")
    try:
        schema.migrate(conn)
        with conn:
            _seed(lambda sql, args: conn.execute(sql.replace("%s", "?"), args))
            conn.execute("UPDATE corpora SET priming_state = 'primed', digest_json = '{}'")
        monkeypatch.setattr(schema, "MIGRATIONS", every)
        schema.migrate(conn)
        states = conn.execute("SELECT project, priming_state, digest_json FROM corpora ORDER BY name").fetchall()
        assert [tuple(r) for r in states] == [("alpha", "unprimed", ""), ("", "primed", "{}")]
    finally:
        conn.close()
