"""What differs between the store's two SQL backends, in one small object per backend.

The store's SQL is written once, with `?` parameters, in the subset SQLite and PostgreSQL
share (`TRUE`, `RETURNING id`, `ON CONFLICT ... DO NOTHING/UPDATE`, row values, subqueries
without aliases). Only what has no common spelling goes through the connection's `dialect`:
JSON functions, the full-text search (FTS5 vs tsvector + pg_trgm), the join that keeps the
matches as the outer loop, and the housekeeping after deletes. A connection of either
backend carries its dialect (`conn.dialect`), so the query code needs no backend switch.
The SQLite dialect and connection live in store_svc.fts_sqlite, PostgreSQL's in store_svc.pg.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol, TypeAlias

# A result row: sqlite3.Row or the PostgreSQL adapter's row; both answer row["col"] and row[0].
Row: TypeAlias = Any


class Cursor(Protocol):
    rowcount: int

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...

    def fetchmany(self, size: int = ...) -> list[Any]: ...

    def __iter__(self) -> Iterator[Any]: ...


class Conn(Protocol):
    """The connection interface the store's SQL code uses (sqlite3's, and the adapter's)."""

    @property
    def dialect(self) -> Dialect: ...

    @property
    def IntegrityError(self) -> type[Exception]: ...  # noqa: N802 - the DB-API name

    def execute(self, sql: str, parameters: Sequence[Any] = ..., /) -> Any: ...

    def executemany(self, sql: str, parameters: Any, /) -> Any: ...


class Backend(Protocol):
    """Where the store keeps its rows (store_svc.backend.SqliteBackend, store_svc.pg.backend.PgBackend)."""

    name: str
    schema_version: int

    def writing(self) -> AbstractContextManager[Conn]: ...

    def reading(self) -> AbstractContextManager[Conn]: ...

    def snapshot(self) -> AbstractContextManager[Conn]: ...

    def size_bytes(self, conn: Conn) -> int: ...

    def before_forget(self, conn: Conn) -> None: ...

    def after_forget(self) -> None: ...

    def close(self, drain_s: float = 5.0) -> None: ...


@dataclass(frozen=True)
class Dialect:
    name: str
    match_source: Callable[..., tuple[str, list] | None]
    """(spec, parsed, *, scored=True, conn=None) -> SQL yielding (id, score) of the full-text matches, or
    None. Scored, PostgreSQL needs `conn` (the query's transaction) to look up term statistics."""
    exclusion_clause: Callable[..., None]
    """(spec, parsed, clause) -> adds the NOT tests of the query's excluded terms to the clause."""
    join_matches: str
    """How a kind's full-text matches join their table (SQLite: CROSS JOIN pins the join order)."""
    after_delete: tuple[str, ...]
    """Statements run in a Forget's transaction once the rows are gone (SQLite: merge FTS5 segments)."""

    def json_first(self, column: str) -> str:
        """SQL for the first element of a JSON array held in a text column (NULL when none)."""
        if self.name == "postgres":
            json = _pg_json(column)
            return f"(CASE WHEN {_pg_is_array(json)} THEN {json}::jsonb ->> 0 END)"
        return f"(CASE WHEN json_valid({column}) THEN json_extract({column}, '$[0]') END)"

    def json_values(self, column: str) -> str:
        """A FROM item yielding each element of a JSON array text column as `value` (none when invalid)."""
        if self.name == "postgres":
            json = _pg_json(column)
            return (f"jsonb_array_elements_text(CASE WHEN {_pg_is_array(json)} THEN {json}::jsonb "
                    f"ELSE '[]'::jsonb END) AS j(value)")
        return f"json_each(CASE WHEN json_valid({column}) THEN {column} ELSE '[]' END)"

    def one_of(self, column: str, values: Sequence[str] | Sequence[int]) -> tuple[str, Any]:
        """SQL testing that `column` is one of `values`, and its one parameter: the statement's text
        does not depend on how many values there are, so it is parsed and planned once."""
        if self.name == "postgres":
            return f"{column} = ANY(?)", list(values)
        return f"{column} IN (SELECT value FROM json_each(?))", json.dumps(list(values))

    def last_chars(self, expression: str, count: int) -> str:
        """SQL for the last `count` characters of a text expression (all of it when shorter)."""
        if self.name == "postgres":
            return f"right({expression}, {count})"
        return f"substr({expression}, -{count})"

    def day_of(self, epoch_ms_column: str) -> str:
        """The UTC day (YYYY-MM-DD) of an epoch-milliseconds column."""
        if self.name == "postgres":
            return f"to_char(to_timestamp({epoch_ms_column} / 1000) AT TIME ZONE 'UTC', 'YYYY-MM-DD')"
        return f"date({epoch_ms_column} / 1000, 'unixepoch')"


def _pg_is_array(json: str) -> str:
    """SQL testing that a text expression holds a JSON array (false, not an error, when it is not JSON)."""
    return f"pg_input_is_valid({json}, 'jsonb') AND jsonb_typeof({json}::jsonb) = 'array'"


def _pg_json(column: str) -> str:
    """jsonb refuses the \\u0000 escape (json.dumps writes NUL so): read it as U+FFFD, which is what
    the PostgreSQL adapter binds for a NUL in a parameter, so such a list still parses and matches."""
    return f"replace({column}, '\\u0000', '\\ufffd')"
