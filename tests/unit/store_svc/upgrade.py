"""Writing a store as an older release left it, to test what a migration does to existing rows."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import pytest

from mnemo.config import Settings
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
