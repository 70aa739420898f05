"""Per-project record ids on a SQLite team store (migrations/sqlite/0013_sqlite_ids.sql).

PostgreSQL draws a new row's id in a trigger (migrations/postgres/0010_ids.sql); a SQLite
trigger cannot choose a row's id, so on SQLite the writer draws it here, inside its write
transaction (SQLite has one writer at a time, so two stores on one file never draw the same),
and the INSERT names it. A store that never held a user token keeps AUTOINCREMENT: `ids_for`
answers None for every row, and an INSERT given NULL for its INTEGER PRIMARY KEY lets SQLite
choose, exactly as before. On PostgreSQL it answers None too (its trigger fills a NULL id).

Once a store is a team's (`id_bases` filled, for good), every insert into the five record
tables must name its id: one left to AUTOINCREMENT would land next to some project's ids.
"""

from __future__ import annotations

import secrets
import sqlite3
from collections.abc import Sequence
from typing import Any

from mnemo.errors import FailedPrecondition
from store_svc.dialect import Conn

STRIDE = 1 << 20  # ids of one project step by this; the slot is below it
LIMIT = 1 << 33  # (base + n) stays below this, so every id stays below 2^53
TABLES = ("sdk_sessions", "observations", "session_summaries", "user_prompts", "tool_uses")
_SLOT_TRIES = 64


def ids_for(conn: Conn, table: str, projects: Sequence[str]) -> list[int | None]:
    """The ids of rows about to be inserted into `table`, one per project given (in order):
    per-project ids on a SQLite team store, else None (the database chooses)."""
    if table not in TABLES:
        raise ValueError(f"{table} has no per-project ids")
    if conn.dialect.name != "sqlite" or not projects:
        return [None] * len(projects)
    try:
        found = conn.execute("SELECT base FROM id_bases WHERE record_table = ?", (table,)).fetchone()
    except sqlite3.OperationalError:  # a schema from before migration 13 (as the upgrade tests write)
        found = None
    if found is None:  # one user's store: AUTOINCREMENT
        return [None] * len(projects)
    base = int(found[0])
    counts: dict[str, int] = {}
    for project in projects:
        counts[project] = counts.get(project, 0) + 1
    first: dict[str, tuple[int, int]] = {}  # project -> (its next n, its slot)
    for project, count in counts.items():
        first[project] = _reserve(conn, table, project, count, base)
    ids: list[int | None] = []
    for project in projects:
        n, slot = first[project]
        ids.append((base + n) * STRIDE + slot)
        first[project] = (n + 1, slot)
    return ids


def one_id(conn: Conn, table: str, project: str) -> int | None:
    return ids_for(conn, table, [project])[0]


def _reserve(conn: Conn, table: str, project: str, count: int, base: int) -> tuple[int, int]:
    """Take `count` numbers of `project`'s counter in `table`: (the first one, the project's slot)."""
    row = conn.execute("UPDATE id_spaces SET used = used + ? WHERE record_table = ? AND project = ? "
                       "RETURNING slot, used", (count, table, project)).fetchone()
    if row is None:
        slot = _free_slot(conn, table)
        conn.execute("INSERT INTO id_spaces(record_table, project, slot, used) VALUES (?, ?, ?, ?)",
                     (table, project, slot, count))
        used = count
    else:
        slot, used = int(row[0]), int(row[1])
    if base + used >= LIMIT:
        raise FailedPrecondition(f"the record ids of this project in {table} are used up; "
                                 "move the project's records to a new project or a new store")
    return used - count + 1, slot


def _free_slot(conn: Conn, table: str) -> int:
    """A slot no other project of `table` holds, drawn at random (so it tells nothing of how
    many projects came before)."""
    for _ in range(_SLOT_TRIES):
        slot = secrets.randbelow(STRIDE)
        taken = conn.execute("SELECT 1 FROM id_spaces WHERE record_table = ? AND slot = ?", (table, slot)).fetchone()
        if taken is None:
            return slot
    raise FailedPrecondition(f"no free id slot is left in {table} for a new project; use fewer projects per store")


def inserted_id(cursor: Any) -> int:
    """The id of the row an `INSERT ... RETURNING id` on `cursor` just created (both backends
    speak RETURNING; PostgreSQL has no lastrowid)."""
    row = cursor.fetchone()
    if row is None:
        raise RuntimeError("INSERT created no row")
    return int(row[0])


def insert(conn: Conn, table: str, project: str, columns: Sequence[str], values: Sequence[object],
           tail: str = "RETURNING id") -> Any:
    """INSERT one row of `project` into record table `table` (`columns` are the code's constants),
    naming its id when one is drawn here; else the database chooses (AUTOINCREMENT, or the
    PostgreSQL trigger; a schema older than either, as the upgrade tests write, gets no id column)."""
    new_id = one_id(conn, table, project)
    if new_id is not None:
        columns, values = ("id", *columns), (new_id, *values)
    marks = ", ".join("?" for _ in columns)
    return conn.execute(f"INSERT INTO {table}({', '.join(columns)}) VALUES ({marks}) {tail}", tuple(values))
