"""A psycopg connection dressed as the sqlite3 connection the store's SQL code expects.

The store's SQL is written once with `?` parameters; this adapter translates each statement
in one place (and caches the result): `%` becomes `%%` (psycopg's escape), `?` becomes `%s`,
and LIKE becomes ILIKE (SQLite's LIKE ignores ASCII case, PostgreSQL's does not). Rows answer
row["col"], row[0], tuple(row) and row.keys() like sqlite3.Row. Text parameters are made
bindable: PostgreSQL refuses NUL characters in text and psycopg refuses lone surrogates, so
both become U+FFFD, as the SQLite path does for surrogates, instead of failing the request.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from typing import Any

import psycopg
from psycopg.rows import RowMaker

from store_svc.dialect import Dialect
from store_svc.pg import fulltext

_LIKE = re.compile(r"\bLIKE\b")


class PgRow(tuple):
    """A tuple whose items are also reachable by column name (the first of duplicates)."""

    __slots__ = ()
    _index: dict[str, int] = {}
    _names: tuple[str, ...] = ()

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str):
            return tuple.__getitem__(self, self._index[key])
        return tuple.__getitem__(self, key)

    def keys(self) -> list[str]:
        return list(self._names)


@functools.lru_cache(maxsize=512)
def _row_class(names: tuple[str, ...]) -> type[PgRow]:
    index: dict[str, int] = {}
    for i, name in enumerate(names):
        index.setdefault(name, i)
    return type("Row", (PgRow,), {"__slots__": (), "_index": index, "_names": names})


def pg_rows(cursor: psycopg.Cursor[Any]) -> RowMaker[PgRow]:
    """psycopg row factory making PgRow objects."""
    description = cursor.description
    if description is None:
        return tuple  # type: ignore[return-value]  # no result set: never called
    cls = _row_class(tuple(c.name for c in description))
    return lambda values: cls(values)


@functools.lru_cache(maxsize=2048)
def translate(sql: str) -> str:
    """SQLite-flavoured statement -> psycopg statement (see the module docstring)."""
    return _LIKE.sub("ILIKE", sql.replace("%", "%%").replace("?", "%s"))


def bindable(value: Any) -> Any:
    if isinstance(value, str):
        if "\x00" in value:
            value = value.replace("\x00", "\ufffd")
        if not value.isascii():
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                value = value.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    return value


class PgCursor:
    """The result of one statement, shaped like sqlite3.Cursor for the calls the store makes."""

    def __init__(self, cursor: psycopg.Cursor[Any]):
        self._cursor = cursor
        self.rowcount = cursor.rowcount

    def fetchone(self) -> Any:
        return self._cursor.fetchone()

    def fetchall(self) -> list[Any]:
        return self._cursor.fetchall()

    def fetchmany(self, size: int = 100) -> list[Any]:
        return self._cursor.fetchmany(size)

    def __iter__(self) -> Any:
        return iter(self._cursor)


class PgConnection:
    """One pooled psycopg connection, inside the transaction the backend opened."""

    IntegrityError = psycopg.IntegrityError

    def __init__(self, raw: psycopg.Connection[Any]):
        self.raw = raw

    @property
    def dialect(self) -> Dialect:
        return POSTGRES

    def execute(self, sql: str, parameters: Sequence[Any] = (), /) -> PgCursor:
        cursor = self.raw.cursor(row_factory=pg_rows)
        cursor.execute(translate(sql), [bindable(p) for p in parameters])
        return PgCursor(cursor)

    def executemany(self, sql: str, parameters: Iterable[Sequence[Any]], /) -> PgCursor:
        cursor = self.raw.cursor(row_factory=pg_rows)
        cursor.executemany(translate(sql), [[bindable(p) for p in row] for row in parameters])
        return PgCursor(cursor)

    def insert_ids(self, sql: str, rows: Iterable[Sequence[Any]]) -> list[int]:
        """Run an `INSERT ... RETURNING id` once per row, pipelined (one round trip for the
        batch, not one per row); the new ids in row order."""
        cursor = self.raw.cursor()
        cursor.executemany(translate(sql), [[bindable(p) for p in row] for row in rows], returning=True)
        ids: list[int] = []
        while True:
            row = cursor.fetchone()
            if row is not None:
                ids.append(int(row[0]))
            if not cursor.nextset():
                return ids


POSTGRES = Dialect("postgres", fulltext.match_source, fulltext.exclusion_clause, "JOIN", ())
