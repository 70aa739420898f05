"""Sessions: found by their ids within the caller's projects, created when missing.

A session id (a host `content_session_id` on a platform, or a `memory_session_id`) names a
session of one project (migration 15): two projects may each have a session "abc". Every lookup
here sees only the sessions of projects the caller may access (mnemo.identity.may_access): for a
token confined to alpha, beta's "abc" does not exist, so a write naming it creates alpha's own,
exactly as an id nobody holds would, and no answer tells that beta has one.

Among the sessions the caller sees, `_pick` takes the one in the project the request names;
else the only one (a session of another of the caller's projects, as before migration 15: a
record keeps its own project, a session may change project); several of different projects
and none in the named one is INVALID_ARGUMENT asking for the project. A store written by one
user never holds one id in two projects (a write that sees the id goes into that session), so
it behaves as before; only tokens confined to projects create such twins, and only a caller who
sees both (the service token, a token of every project) can meet the question.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from mnemo import identity
from mnemo.errors import InvalidArgument, PermissionDenied
from mnemo.timefmt import iso_from_ms
from mnemo.vocab import DEFAULT_PLATFORM, DEFAULT_SESSION_PREFIXES, default_session_ids
from store_svc import ids
from store_svc.convert import timestamps
from store_svc.dialect import Conn, Row

# What an ambiguous id asks for: (the field to set, how), where the request has a project field.
NAME_THE_PROJECT = ("project", "name the project of the one you mean")

# A session's columns an INSERT names (the code's constants).
_COLUMNS = ("content_session_id", "memory_session_id", "project", "platform_source", "user_prompt",
            "started_at", "started_at_epoch", "completed_at", "completed_at_epoch", "status",
            "prompt_counter", "custom_title", "external_id", "writer")


def _visible(rows: Iterable[Row]) -> list[Row]:
    return [row for row in rows if identity.may_access(str(row["project"]))]


def _pick(rows: Sequence[Row], project: str, field: str, same: Callable[[Row, Row], bool],
          remedy: tuple[str, str] = NAME_THE_PROJECT) -> Row | None:
    """The session of `rows` (visible, in preference order) a request means: see the module doc.
    `same` tells two rows that are one id's twins in different projects (not merely, say, one
    host id's sessions on two platforms, which the preference order has always settled)."""
    if project:
        for row in rows:
            if row["project"] == project:
                return row
    if not rows:
        return None
    twins = [row for row in rows if same(row, rows[0])]
    if len(twins) > 1:
        projects = ", ".join(sorted(repr(str(row["project"])) for row in twins))
        raise InvalidArgument(remedy[0], f"{field} {str(rows[0][field])[:64]!r} names sessions in several "
                                         f"projects ({projects}); {remedy[1]}")
    return rows[0]


def by_content(conn: Conn, content_session_id: str, platform: str = "", project: str = "",
               remedy: tuple[str, str] = NAME_THE_PROJECT) -> Row | None:
    """The session of a host session id on `platform` (any platform when empty, claude first)."""
    sql = "SELECT * FROM sdk_sessions WHERE content_session_id = ?"
    params: list[str] = [content_session_id]
    if platform:
        sql += " AND platform_source = ?"
        params.append(platform)
    rows = _visible(conn.execute(f"{sql} ORDER BY platform_source = 'claude' DESC, id", params).fetchall())
    return _pick(rows, project, "content_session_id",
                 lambda a, b: a["platform_source"] == b["platform_source"], remedy)


def _one_memory_id(a: Row, b: Row) -> bool:
    """Sessions found by one memory id are that id's twins whatever their platform."""
    return True


def _memory_rows(conn: Conn, memory_session_id: str) -> list[Row]:
    return _visible(conn.execute("SELECT * FROM sdk_sessions WHERE memory_session_id = ? ORDER BY id",
                                 (memory_session_id,)).fetchall())


def by_id(conn: Conn, row_id: int) -> Row:
    return conn.execute("SELECT * FROM sdk_sessions WHERE id = ?", (row_id,)).fetchone()


def check_memory_session_free(conn: Conn, memory_session_id: str, own_id: int | None, project: str) -> None:
    """A memory id names one session of its project; another project's is not looked at."""
    row = conn.execute("SELECT id FROM sdk_sessions WHERE project = ? AND memory_session_id = ?",
                       (project, memory_session_id)).fetchone()
    if row and row["id"] != own_id:
        raise InvalidArgument("memory_session_id", f"{memory_session_id[:64]!r} already belongs to another session")


def check_external_id_free(conn: Conn, external_id: str, own_id: int | None, project: str) -> None:
    """A session's external id names one session of its project: one already in use there is
    refused here, naming the field (a unique index would otherwise fail the write as an internal
    error). Another project's session with the same external id is not looked at (migration 11)."""
    if not external_id:
        return
    row = conn.execute("SELECT id FROM sdk_sessions WHERE project = ? AND external_id = ?",
                       (project, external_id)).fetchone()
    if row and row["id"] != own_id:
        raise InvalidArgument("external_id", f"{external_id[:64]!r} already belongs to another session")


def check_not_reserved(field: str, session_id: str, project: str) -> None:
    """A token confined to some projects names no other project's default session (mnemo.vocab):
    a rule on names, the same whether that project has the session or not."""
    if (session_id.startswith(DEFAULT_SESSION_PREFIXES) and identity.restricted_projects() is not None
            and session_id not in default_session_ids(project)):
        raise PermissionDenied(f"{field}: session ids starting with {' or '.join(DEFAULT_SESSION_PREFIXES)} are "
                               f"reserved for each project's default session; name another session")


def create(conn: Conn, *, content_session_id: str, project: str, platform: str,
           memory_session_id: str = "", user_prompt: str = "", custom_title: str = "",
           started_at_epoch: int = 0, started_at: str = "", external_id: str = "",
           status: str = "active", completed_at_epoch: int = 0, completed_at: str = "",
           prompt_counter: int = 0) -> Row:
    memory_session_id = memory_session_id or content_session_id
    check_not_reserved("content_session_id", content_session_id, project)
    check_not_reserved("memory_session_id", memory_session_id, project)
    check_memory_session_free(conn, memory_session_id, None, project)
    epoch, iso = timestamps(started_at_epoch, started_at)
    done_iso = (completed_at or iso_from_ms(completed_at_epoch)) if completed_at_epoch else None
    cursor = ids.insert(
        conn, "sdk_sessions", project, _COLUMNS,
        (content_session_id, memory_session_id, project, platform, user_prompt or None, iso, epoch, done_iso,
         completed_at_epoch or None, status, prompt_counter, custom_title or None, external_id or None,
         identity.writer()))
    return by_id(conn, ids.inserted_id(cursor))


def ensure_memory_sessions(conn: Conn, records: Iterable[tuple[str, str, int]]) -> dict[tuple[str, str], int | None]:
    """The session row each record (memory_session_id, project, epoch) is filed under, by
    (memory_session_id, project). A memory id the caller sees no session of gets one (host id =
    memory id, platform claude, in the project of the last record naming it). None: the new
    session could not be made (its host id is taken in that project by a session with another
    memory id); the record is then filed under no session, as before."""
    records = list(records)
    creating = {memory: (project, epoch) for memory, project, epoch in records}
    found: dict[str, list[Row]] = {}
    for memory, (project, epoch) in creating.items():
        check_not_reserved("memory_session_id", memory, project)
        rows = _memory_rows(conn, memory)
        if not rows:
            ids.insert(conn, "sdk_sessions", project, ("content_session_id", "memory_session_id", "project",
                                                       "platform_source", "started_at", "started_at_epoch", "writer"),
                       (memory, memory, project, DEFAULT_PLATFORM, iso_from_ms(epoch), epoch, identity.writer()),
                       tail="ON CONFLICT DO NOTHING")
            rows = _memory_rows(conn, memory)
        found[memory] = rows
    chosen: dict[tuple[str, str], int | None] = {}
    for memory, project, _ in records:
        if (memory, project) not in chosen:
            row = _pick(found[memory], project, "memory_session_id", _one_memory_id)
            chosen[(memory, project)] = int(row["id"]) if row is not None else None
    return chosen


def find(conn: Conn, content_session_id: str, platform: str, project: str) -> Row | None:
    """The session a prompt or tool use names: its platform's session of that host id, else any
    platform's (claude first); None when the caller sees none."""
    row = by_content(conn, content_session_id, platform, project) if platform else None
    return row or by_content(conn, content_session_id, "", project)


def for_write(conn: Conn, content_session_id: str, platform: str, project: str, field_prefix: str = "") -> Row:
    """The session a prompt or tool use goes into (`find`), created when the caller sees none
    (then the project is required)."""
    row = find(conn, content_session_id, platform, project)
    if row:
        return row
    if not project:
        raise InvalidArgument(f"{field_prefix}project", "required when the session does not exist yet")
    return create(conn, content_session_id=content_session_id, project=project, platform=platform or DEFAULT_PLATFORM)
