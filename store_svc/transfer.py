"""Export (every record, oldest first) and idempotent import that keeps original timestamps.

Import dedupe keys, each looked up only among the caller's projects (store_svc.sessions):
sessions by external_id or (platform_source, content_session_id); prompts by external_id or
(content_session_id, prompt_number); observations by external_id or (session, content_hash);
summaries by external_id or (session, created_at_epoch); tool uses by (content_session_id,
tool_use_id) or (content_session_id, created_at_epoch, tool_name). Each item runs in a
savepoint: a bad item is reported and the rest are imported.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from mnemo import identity
from mnemo.errors import InvalidArgument, MnemoError
from mnemo.logs import get_logger
from mnemo.v1 import common_pb2, store_pb2
from mnemo.vocab import DEFAULT_PLATFORM
from store_svc import convert, observations, queries, sessions, validate, writes
from store_svc.dialect import Conn, Row
from store_svc.writes import clean

log = get_logger(__name__)

_BATCH = 500


def _scoped(sql: str, project: str, column: str) -> tuple[str, list]:
    return (f"{sql} WHERE {column} = ?", [project]) if project else (sql, [])


def _batches(conn: Conn, sql: str, params: list) -> Iterator[list[Row]]:
    cursor = conn.execute(sql, params)
    while rows := cursor.fetchmany(_BATCH):
        yield rows


def export_items(conn: Conn, project: str) -> Iterator[store_pb2.ExportItem]:
    """Sessions, prompts, observations, summaries, tool uses; each kind oldest first."""
    sql, params = _scoped("SELECT * FROM sdk_sessions", project, "project")
    for rows in _batches(conn, sql + " ORDER BY started_at_epoch, id", params):
        yield from (store_pb2.ExportItem(session=convert.session_pb(r)) for r in rows)
    sql, params = _scoped(queries._RECORD_SQL[common_pb2.DOC_KIND_PROMPT].split(" WHERE ")[0], project, "ss.project")
    for rows in _batches(conn, sql + " ORDER BY p.created_at_epoch, p.id", params):
        yield from (store_pb2.ExportItem(prompt=convert.prompt_pb(r)) for r in rows)
    sql, params = _scoped(queries._RECORD_SQL[common_pb2.DOC_KIND_OBSERVATION].split(" WHERE ")[0], project,
                          "o.project")
    for rows in _batches(conn, sql + " ORDER BY o.created_at_epoch, o.id", params):
        links = queries.tool_use_links(conn, "observation_id", [r["id"] for r in rows])
        yield from (store_pb2.ExportItem(observation=convert.observation_pb(r, links.get(r["id"], ())))
                    for r in rows)
    sql, params = _scoped(queries._RECORD_SQL[common_pb2.DOC_KIND_SUMMARY].split(" WHERE ")[0], project,
                          "s.project")
    for rows in _batches(conn, sql + " ORDER BY s.created_at_epoch, s.id", params):
        yield from (store_pb2.ExportItem(summary=convert.summary_pb(r)) for r in rows)
    sql, params = _scoped(writes.TOOL_USE_SELECT, project, "ss.project")
    for rows in _batches(conn, sql + " ORDER BY t.created_at_epoch, t.id", params):
        links = queries.tool_use_links(conn, "tool_use_id", [r["id"] for r in rows])
        yield from (store_pb2.ExportItem(tool_use=convert.tool_use_pb(r, links.get(r["id"], ()))) for r in rows)


def _import_session(conn: Conn, s: common_pb2.Session) -> bool:
    validate.identifier("session.content_session_id", s.content_session_id)
    validate.project("session.project", s.project)
    platform = validate.identifier("session.platform_source", s.platform_source, needed=False) or DEFAULT_PLATFORM
    validate.identifier("session.memory_session_id", s.memory_session_id, needed=False)
    validate.identifier("session.external_id", s.external_id, needed=False)
    status = s.status or "active"
    validate.one_of("session.status", status, ("active", *validate.SESSION_END_STATES))
    # Already here (in a project the caller sees: another project's is not looked at): skipped.
    known = conn.execute("SELECT id FROM sdk_sessions WHERE project = ? AND external_id = ?",
                         (s.project, s.external_id)).fetchone() if s.external_id else None
    if known or sessions.by_content(conn, s.content_session_id, platform, s.project):
        return False
    sessions.create(
        conn, content_session_id=s.content_session_id, project=s.project, platform=platform,
        memory_session_id=s.memory_session_id, user_prompt=clean(s.user_prompt), custom_title=s.custom_title,
        started_at_epoch=s.started_at_epoch, started_at=s.started_at, external_id=s.external_id, status=status,
        completed_at_epoch=s.completed_at_epoch, completed_at=s.completed_at, prompt_counter=s.prompt_counter)
    return True


def _import_prompt(conn: Conn, p: common_pb2.UserPrompt) -> bool:
    prepared = writes.prepare_prompt(p.content_session_id, p.platform_source, p.project, p.prompt_text,
                                     p.created_at_epoch, p.external_id, p.prompt_number, p.created_at)
    known = conn.execute(
        "SELECT ss.project FROM user_prompts p LEFT JOIN sdk_sessions ss ON ss.id = p.session_db_id "
        "WHERE p.content_session_id = ? AND p.prompt_number = ?",
        (p.content_session_id, p.prompt_number)).fetchall() if p.prompt_number else []
    if any(identity.may_access(str(row["project"] or "")) for row in known):  # another project's: not looked at
        return False
    row, reason = writes.insert_prompt(conn, prepared)
    if reason == "private":
        raise InvalidArgument("prompt.prompt_text", "nothing left after removing private content")
    return not reason


def _import_observation(conn: Conn, o: common_pb2.Observation) -> bool:
    copy = common_pb2.Observation()
    copy.CopyFrom(o)
    del copy.tool_use_ids[:]  # row ids of another database: they do not name our tool uses
    prepared = observations.prepare_observation(copy, "observation")
    _, created = observations.insert_observations(conn, [prepared], "observation")
    return created[0]


def _import_summary(conn: Conn, s: common_pb2.Summary) -> bool:
    return writes.insert_summary(conn, writes.prepare_summary(s, "summary"), dedupe_on_time=True)[1]


def _import_tool_use(conn: Conn, t: common_pb2.ToolUse, cap: int) -> bool:
    copy = common_pb2.ToolUse()
    copy.CopyFrom(t)
    del copy.observation_ids[:]
    return writes.insert_tool_use(conn, copy, cap, dedupe_on_time=True)[1]


def _import_one(conn: Conn, item: store_pb2.ExportItem, cap: int) -> bool:
    which = item.WhichOneof("item")
    recorded = getattr(item, which).writer if which else ""
    with identity.keeping_writer(recorded):  # an admin import keeps each record's writer
        return _import_kind(conn, item, which, cap)


def _import_kind(conn: Conn, item: store_pb2.ExportItem, which: str | None, cap: int) -> bool:
    if which == "session":
        return _import_session(conn, item.session)
    if which == "prompt":
        return _import_prompt(conn, item.prompt)
    if which == "observation":
        return _import_observation(conn, item.observation)
    if which == "summary":
        return _import_summary(conn, item.summary)
    if which == "tool_use":
        return _import_tool_use(conn, item.tool_use, cap)
    raise InvalidArgument("item", "empty: set session, prompt, observation, summary or tool_use")


def import_items(conn: Conn, items: Iterable[store_pb2.ExportItem], cap: int) -> store_pb2.ImportResponse:
    reply = store_pb2.ImportResponse()
    for index, item in enumerate(items):
        conn.execute("SAVEPOINT item")
        try:
            created = _import_one(conn, item, cap)
        except (MnemoError, conn.IntegrityError) as err:
            conn.execute("ROLLBACK TO item")
            conn.execute("RELEASE item")
            reply.errors.add(index=index, message=str(err))
            continue
        conn.execute("RELEASE item")
        if created:
            reply.imported += 1
        else:
            reply.skipped += 1
    return reply
