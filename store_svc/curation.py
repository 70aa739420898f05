"""Curation: forget records, sessions or a project everywhere the store keeps their text;
edit an observation; count activity per day.

Forgetting must leave the text in no file. Rows are deleted with `secure_delete` on (SQLite
zeroes the freed cells and pages), the FTS5 indexes are merged (`optimize`: an external
content index keeps deleted tokens in old segments until a merge), and after the commit
the WAL is checkpointed and truncated so no old page image survives there either. On
PostgreSQL the deleted tuples are vacuumed after the commit (store_svc.pg.backend). The
change feed gets one delete per record from the tables' triggers; vector_svc follows it
(its index holds vectors and ids, never text).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import cast

from mnemo import identity
from mnemo.errors import InvalidArgument, NotFound
from mnemo.privacy import clean
from mnemo.timefmt import now_ms
from mnemo.v1 import common_pb2, store_pb2
from mnemo.vocab import KIND_OBSERVATION, KIND_PROMPT, KIND_SUMMARY, TITLE_MAX_CHARS, display_id
from store_svc import convert, queries, validate
from store_svc.core import MAX_BATCH, Store, check_refs
from store_svc.dialect import Conn
from store_svc.schema import KIND_TABLES

MAX_FORGET_SESSIONS = 100
MAX_REASON_CHARS = 1000


@dataclass
class Doomed:
    """Row ids to delete, by table."""

    observations: set[int] = field(default_factory=set)
    summaries: set[int] = field(default_factory=set)
    prompts: set[int] = field(default_factory=set)
    sessions: set[int] = field(default_factory=set)
    tool_uses: set[int] = field(default_factory=set)

    def empty(self) -> bool:
        return not (self.observations or self.summaries or self.prompts or self.sessions or self.tool_uses)


def _marks(values: Sequence[object]) -> str:
    return ", ".join("?" for _ in values)


def _ids(conn: Conn, sql: str, params: Sequence[object]) -> set[int]:
    return {row[0] for row in conn.execute(sql, list(params))}


def check_forget(request: store_pb2.ForgetRequest, refs: list[tuple[int, int]]) -> None:
    validate.count("sessions", request.sessions, MAX_FORGET_SESSIONS, needed=False)
    for i, session in enumerate(request.sessions):
        validate.identifier(f"sessions[{i}]", session)
    validate.project("project", request.project, needed=False)
    if not (refs or request.sessions or request.project):
        raise InvalidArgument("refs", "name something to forget: refs, sessions or project")


def _add_sessions(conn: Conn, doomed: Doomed, session_ids: set[int]) -> None:
    """Everything filed under these session rows."""
    if not session_ids:
        return
    ids = sorted(session_ids)
    doomed.sessions |= session_ids
    # Records carry their own project: one filed under the caller's session by a writer of every
    # project may be another project's, and stays. Another project's session of the same id is
    # another row (migration 15): its records are not filed under these.
    for table, found in (("observations", doomed.observations), ("session_summaries", doomed.summaries)):
        found |= {r[0] for r in conn.execute(f"SELECT id, project FROM {table} WHERE session_db_id IN "
                                             f"({_marks(ids)})", ids) if identity.may_access(r[1])}
    doomed.prompts |= _ids(conn, f"SELECT id FROM user_prompts WHERE session_db_id IN ({_marks(ids)})", ids)
    doomed.tool_uses |= _ids(conn, f"SELECT id FROM tool_uses WHERE session_db_id IN ({_marks(ids)})", ids)


def collect(conn: Conn, refs: Iterable[tuple[int, int]], sessions: Sequence[str],
            project: str) -> Doomed:
    doomed = Doomed()
    by_kind = {KIND_OBSERVATION: doomed.observations, KIND_SUMMARY: doomed.summaries, KIND_PROMPT: doomed.prompts}
    for kind, row_id in refs:
        if conn.execute(f"SELECT 1 FROM {KIND_TABLES[kind]} WHERE id = ?", (row_id,)).fetchone():
            by_kind[kind].add(row_id)
    if sessions:
        # A host session id may name sessions of several platforms, and so of several projects:
        # only the caller's go.
        found = {r[0] for r in conn.execute(
            f"SELECT id, project FROM sdk_sessions WHERE memory_session_id IN ({_marks(sessions)}) "
            f"OR content_session_id IN ({_marks(sessions)})", [*sessions, *sessions]) if identity.may_access(r[1])}
        _add_sessions(conn, doomed, found)
    if project:
        _add_sessions(conn, doomed, _ids(conn, "SELECT id FROM sdk_sessions WHERE project = ?", [project]))
        doomed.observations |= _ids(conn, "SELECT id FROM observations WHERE project = ?", [project])
        doomed.summaries |= _ids(conn, "SELECT id FROM session_summaries WHERE project = ?", [project])
    if doomed.observations:
        # The raw tool uses an observation came from hold the same text.
        obs = sorted(doomed.observations)
        doomed.tool_uses |= _ids(conn, f"SELECT tool_use_id FROM observation_tool_uses WHERE observation_id IN "
                                       f"({_marks(obs)})", obs)
    return doomed


def _delete(conn: Conn, table: str, ids: set[int]) -> int:
    total = 0
    ordered = sorted(ids)
    for start in range(0, len(ordered), 500):  # stay under SQLite's bound-parameter limit
        part = ordered[start:start + 500]
        total += conn.execute(f"DELETE FROM {table} WHERE id IN ({_marks(part)})", part).rowcount
    return total


def _clear_session_prompt_copies(conn: Conn, prompt_ids: set[int]) -> None:
    """A session keeps its first prompt's text in `user_prompt`: forget that copy too."""
    ordered = sorted(prompt_ids)
    for start in range(0, len(ordered), 500):
        part = ordered[start:start + 500]
        conn.execute(
            f"UPDATE sdk_sessions SET user_prompt = NULL WHERE id IN (SELECT p.session_db_id FROM user_prompts p "
            f"WHERE p.id IN ({_marks(part)}) AND p.prompt_text = sdk_sessions.user_prompt)", part)


def _trim_corpora(conn: Conn, observation_ids: set[int], project: str) -> int:
    """Corpora quote what they hold: trim their snapshots and drop what was derived from the
    forgotten records (digest, question/answer history); a project's own corpora go entirely."""
    changed = 0
    for row in conn.execute("SELECT project, name, observation_ids FROM corpora").fetchall():
        key = (row["project"], row["name"])  # a corpus is its project's (migration 12)
        if project and row["project"] == project:
            conn.execute("DELETE FROM corpus_history WHERE corpus_project = ? AND corpus_name = ?", key)
            conn.execute("DELETE FROM corpora WHERE project = ? AND name = ?", key)
            changed += 1
            continue
        held = json.loads(row["observation_ids"] or "[]")
        kept = [i for i in held if i not in observation_ids]
        if len(kept) == len(held):
            continue
        conn.execute("DELETE FROM corpus_history WHERE corpus_project = ? AND corpus_name = ?", key)
        conn.execute(
            "UPDATE corpora SET observation_ids = ?, digest_json = '', priming_state = CASE WHEN priming_state = "
            "'unprimed' THEN 'unprimed' ELSE 'stale' END WHERE project = ? AND name = ?", (json.dumps(kept), *key))
        changed += 1
    return changed


def forget(conn: Conn, refs: Sequence[tuple[int, int]], sessions: Sequence[str],
           project: str) -> store_pb2.ForgetResponse:
    """Delete inside the caller's write transaction (secure_delete must already be on)."""
    doomed = collect(conn, refs, sessions, project)
    if doomed.empty():
        raise NotFound("nothing to forget: no such record, session or project; search first to find valid ids")
    _clear_session_prompt_copies(conn, doomed.prompts)
    reply = store_pb2.ForgetResponse(
        observations=_delete(conn, "observations", doomed.observations),
        summaries=_delete(conn, "session_summaries", doomed.summaries),
        prompts=_delete(conn, "user_prompts", doomed.prompts),
        tool_uses=_delete(conn, "tool_uses", doomed.tool_uses),
        sessions=_delete(conn, "sdk_sessions", doomed.sessions),
        corpora=_trim_corpora(conn, doomed.observations, project),
    )
    if project:
        conn.execute("DELETE FROM work_state WHERE project = ?", (project,))
        conn.execute("DELETE FROM work_state_history WHERE project = ?", (project,))
    # Cursors keep query text and shown ids; they live 30 minutes, so dropping them all is cheap.
    conn.execute("DELETE FROM cursors")
    for kind, ids in ((common_pb2.DOC_KIND_OBSERVATION, doomed.observations),
                      (common_pb2.DOC_KIND_SUMMARY, doomed.summaries), (common_pb2.DOC_KIND_PROMPT, doomed.prompts)):
        reply.refs.extend(common_pb2.Ref(kind=kind, id=i) for i in sorted(ids))
    for statement in conn.dialect.after_delete:
        conn.execute(statement)
    return reply


# ---------------------------------------------------------------------------- edits

def edit_observation(conn: Conn, request: store_pb2.EditObservationRequest) -> int:
    """Apply the edit; the update trigger reindexes the row and appends it to the change feed."""
    if request.id <= 0:
        raise InvalidArgument("id", "must be a positive row id")
    changes: dict[str, object] = {}
    if request.HasField("title"):
        validate.required("title", request.title)
        changes["title"] = validate.max_chars("title", request.title.strip(), TITLE_MAX_CHARS)
    if request.HasField("type"):
        changes["type"] = validate.obs_type("type", request.type)
    if request.replace_concepts:
        validate.count("concepts", request.concepts, validate.MAX_LIST_ITEMS, needed=False)
        for i, concept in enumerate(request.concepts):
            validate.required(f"concepts[{i}]", concept)
            validate.max_chars(f"concepts[{i}]", concept, 1024)
        changes["concepts"] = convert.to_json_list(c.strip() for c in request.concepts)
    if not changes:
        raise InvalidArgument("title", "name something to change: title, type or concepts")
    row = conn.execute("SELECT project FROM observations WHERE id = ?", (request.id,)).fetchone()
    if not row or not identity.may_access(row["project"]):  # another project's: as if it did not exist
        raise NotFound(f"observation #{request.id} not found; search first to find valid ids")
    assignments = ", ".join(f"{column} = ?" for column in changes)
    conn.execute(f"UPDATE observations SET {assignments} WHERE id = ?", (*changes.values(), request.id))
    return request.id


# ---------------------------------------------------------------------------- marked wrong

def mark_wrong(conn: Conn, refs: Sequence[tuple[int, int]], undo: bool, reason: str,
               now_epoch: int) -> list[tuple[int, int]]:
    """Mark the records wrong (or take the marks back) inside the caller's write transaction.

    All or nothing: one unknown id fails the request before anything is written.
    """
    missing = [ref for ref in refs
               if not conn.execute(f"SELECT 1 FROM {KIND_TABLES[ref[0]]} WHERE id = ?", (ref[1],)).fetchone()]
    if missing:
        shown = ", ".join(display_id(kind, row_id) for kind, row_id in missing)
        raise NotFound(f"no such record: {shown}; search first to find valid ids")
    changed = []
    for kind, row_id in refs:
        if undo:
            cursor = conn.execute("DELETE FROM marked_wrong WHERE kind = ? AND record_id = ?", (kind, row_id))
        else:
            cursor = conn.execute(
                "INSERT INTO marked_wrong(kind, record_id, reason, marked_at_epoch) VALUES (?, ?, ?, ?) "
                "ON CONFLICT(kind, record_id) DO NOTHING", (kind, row_id, reason, now_epoch))
        if cursor.rowcount:
            changed.append((kind, row_id))
    return changed


def mark_wrong_rpc(store: Store, request: store_pb2.MarkWrongRequest) -> store_pb2.MarkWrongResponse:
    refs = check_refs(request.refs, MAX_BATCH)
    # The reason is the owner's text like any other: private regions and secrets never stored.
    reason = "" if request.undo else clean(validate.max_chars("reason", request.reason, MAX_REASON_CHARS)).strip()
    with store.writing() as conn:
        changed = mark_wrong(conn, refs, request.undo, reason, now_ms())
    return store_pb2.MarkWrongResponse(changed=[common_pb2.Ref(kind=cast(common_pb2.DocKind, k), id=i)
                                                for k, i in changed])


def get_records_rpc(store: Store, request: store_pb2.GetRecordsRequest) -> store_pb2.GetRecordsResponse:
    """GetRecords leaves records marked wrong out unless asked, and names them so the caller
    can say "marked wrong" rather than "not found"."""
    reply = store.get_records(request)
    if request.include_marked_wrong:
        return reply
    kept = [r for r in reply.records if not r.HasField("marked_wrong")]
    withheld = [_ref_of(r) for r in reply.records if r.HasField("marked_wrong")]
    return store_pb2.GetRecordsResponse(records=kept, marked_wrong=withheld)


def _ref_of(record: common_pb2.Record) -> common_pb2.Ref:
    kind = record.WhichOneof("record") or ""
    numbers = {"observation": common_pb2.DOC_KIND_OBSERVATION, "summary": common_pb2.DOC_KIND_SUMMARY,
               "prompt": common_pb2.DOC_KIND_PROMPT}
    return common_pb2.Ref(kind=numbers[kind], id=getattr(record, kind).id)


# ---------------------------------------------------------------------------- activity

def _day_counts(conn: Conn, sql: str, params: list[object]) -> dict[str, int]:
    return {row[0]: row[1] for row in conn.execute(sql, params)}


def activity(conn: Conn, request: store_pb2.ActivityRequest,
             now_epoch: int) -> store_pb2.ActivityResponse:
    validate.project("project", request.project, needed=False)
    days = validate.bounded("days", request.days, 30, 366, minimum=1)
    today = datetime.fromtimestamp(now_epoch / 1000, tz=UTC).date()
    first = today - timedelta(days=days - 1)
    since = int(datetime(first.year, first.month, first.day, tzinfo=UTC).timestamp() * 1000)
    day = conn.dialect.day_of("created_at_epoch")
    scope = " AND project = ?" if request.project else ""
    params: list[object] = [since, request.project] if request.project else [since]
    prompt_scope = (" AND session_db_id IN (SELECT id FROM sdk_sessions WHERE project = ?)"
                    if request.project else "")
    observations = _day_counts(conn, f"SELECT {day}, count(*) FROM observations WHERE created_at_epoch >= ?"
                                     f"{scope} GROUP BY 1", params)
    summaries = _day_counts(conn, f"SELECT {day}, count(*) FROM session_summaries WHERE created_at_epoch >= ?"
                                  f"{scope} GROUP BY 1", params)
    prompts = _day_counts(conn, f"SELECT {day}, count(*) FROM user_prompts WHERE created_at_epoch >= ?"
                                f"{prompt_scope} GROUP BY 1", params)
    reply = store_pb2.ActivityResponse()
    for offset in range(days):
        key = (first + timedelta(days=offset)).isoformat()
        reply.days.add(day=key, observations=observations.get(key, 0), summaries=summaries.get(key, 0),
                       prompts=prompts.get(key, 0))
    reply.projects.extend(_projects(conn))
    return reply


def _projects(conn: Conn) -> list[store_pb2.ProjectCount]:
    observed = {row[0]: (row[1], row[2]) for row in conn.execute(
        "SELECT project, count(*), max(created_at_epoch) FROM observations GROUP BY project")}
    sessions = {row[0]: (row[1], row[2]) for row in conn.execute(
        "SELECT project, count(*), max(started_at_epoch) FROM sdk_sessions GROUP BY project")}
    out = []
    for name in set(observed) | set(sessions):
        obs_count, obs_last = observed.get(name, (0, 0))
        session_count, session_last = sessions.get(name, (0, 0))
        out.append(store_pb2.ProjectCount(project=name, sessions=session_count, observations=obs_count,
                                          last_epoch=max(obs_last or 0, session_last or 0)))
    return sorted(out, key=lambda p: (-p.last_epoch, p.project))


# ---------------------------------------------------------------------------- RPCs

def forget_rpc(store: Store, request: store_pb2.ForgetRequest) -> store_pb2.ForgetResponse:
    refs = check_refs(request.refs, MAX_BATCH) if request.refs else []
    check_forget(request, refs)
    with store.writing() as conn:
        store.backend.before_forget(conn)
        reply = forget(conn, refs, list(request.sessions), request.project)
    store.backend.after_forget()
    return reply


def edit_rpc(store: Store, request: store_pb2.EditObservationRequest) -> common_pb2.Observation:
    with store.writing() as conn:
        row_id = edit_observation(conn, request)
        found = queries.records(conn, [(KIND_OBSERVATION, row_id)])
    return found[(KIND_OBSERVATION, row_id)].observation


def activity_rpc(store: Store, request: store_pb2.ActivityRequest) -> store_pb2.ActivityResponse:
    with store.reading() as conn:
        return activity(conn, request, now_ms())
