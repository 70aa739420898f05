"""Writing a store as an older release left it, to test what a migration does to existing rows."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import pytest

from mnemo.config import Settings
from mnemo.v1 import common_pb2
from store_svc import schema
from store_svc.core import Store

T = TypeVar("T")


def write_before(settings: Settings, monkeypatch: pytest.MonkeyPatch, version: int, write: Callable[[Store], T]) -> T:
    """Open a store migrated only up to `version` (on the settings' backend), run `write` on it and
    close it; the next Store.from_settings applies the later migrations. Returns what `write` returns."""
    if settings.store_backend == "postgres":
        from store_svc.pg import schema as pg_schema

        monkeypatch.setattr(pg_schema, "MIGRATIONS", pg_schema.MIGRATIONS[:version])
    else:
        monkeypatch.setattr(schema, "MIGRATIONS", schema.MIGRATIONS[:version])
    old = Store.from_settings(settings)
    try:
        return write(old)
    finally:
        old.close()
        monkeypatch.undo()


def old_observations(store: Store, *observations: common_pb2.Observation) -> list[int]:
    """Write observations (and the sessions they name) with the columns every release had: what a
    store of an older schema holds, whatever the current code's writes need. Their new ids."""
    ids = []
    with store.writing() as conn:
        for o in observations:
            epoch = o.created_at_epoch or 1
            if not conn.execute("SELECT 1 FROM sdk_sessions WHERE memory_session_id = ?",
                                (o.memory_session_id,)).fetchone():
                conn.execute("INSERT INTO sdk_sessions(content_session_id, memory_session_id, project, started_at, "
                             "started_at_epoch) VALUES (?, ?, ?, 'old', ?)",
                             (o.memory_session_id, o.memory_session_id, o.project, epoch))
            row = conn.execute(
                "INSERT INTO observations(memory_session_id, project, type, title, narrative, created_at, "
                "created_at_epoch, content_hash) VALUES (?, ?, ?, ?, ?, 'old', ?, ?) RETURNING id",
                (o.memory_session_id, o.project, o.type or "discovery", o.title, o.narrative, epoch,
                 f"old-{len(ids)}-{epoch}")).fetchone()
            ids.append(int(row[0]))
    return ids
