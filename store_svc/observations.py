"""Write side of observations: prepare (validate + clean) them, then insert a batch on a
connection the caller holds inside a transaction, mapping duplicates to the stored ids."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

from mnemo import identity
from mnemo.errors import InvalidArgument
from mnemo.query import has_cjk
from mnemo.v1 import common_pb2
from mnemo.vocab import PROJECT_MAX_BYTES, TITLE_MAX_CHARS, TYPE_NAME_RE
from store_svc import validate
from store_svc.convert import timestamps, to_json_list
from store_svc.dialect import Conn
from store_svc.ids import ids_for
from store_svc.sessions import ensure_memory_sessions
from store_svc.writes import clean, content_hash, needs_full_clean

_OBS_COLUMNS = ("memory_session_id", "project", "text", "type", "title", "subtitle", "facts", "narrative",
                "concepts", "files_read", "files_modified", "prompt_number", "discovery_tokens", "created_at",
                "created_at_epoch", "content_hash", "external_id", "has_cjk", "writer", "session_db_id")
# Rows go to a temp staging table first and then into observations with ONE statement:
# FTS5 flushes its pending terms at every statement savepoint, so a per-row INSERT would
# write one index segment per row through the triggers (measured ~2.5x slower).
_OBS_LIST = ", ".join(_OBS_COLUMNS)
_STAGE_CREATE = f"CREATE TEMP TABLE IF NOT EXISTS stage_observations({_OBS_LIST})"
_STAGE_INSERT = f"INSERT INTO temp.stage_observations VALUES ({', '.join('?' for _ in _OBS_COLUMNS)})"
_OBS_INSERT = f"INSERT INTO observations({_OBS_LIST}) SELECT {_OBS_LIST} FROM temp.stage_observations ORDER BY rowid"
# On a SQLite team store each row's id is drawn first (store_svc/ids.py) and staged with it.
_STAGE_ID_CREATE = f"CREATE TEMP TABLE IF NOT EXISTS stage_observation_ids(id, {_OBS_LIST})"
_STAGE_ID_INSERT = f"INSERT INTO temp.stage_observation_ids VALUES (?, {', '.join('?' for _ in _OBS_COLUMNS)})"
_OBS_ID_INSERT = (f"INSERT INTO observations(id, {_OBS_LIST}) SELECT id, {_OBS_LIST} FROM temp.stage_observation_ids "
                  "ORDER BY rowid")
# PostgreSQL keeps its tsvector in a generated column: one INSERT per row (pipelined) costs no extra.
_OBS_INSERT_ONE = f"INSERT INTO observations({_OBS_LIST}) VALUES ({', '.join('?' for _ in _OBS_COLUMNS)}) RETURNING id"


@dataclass
class PreparedObservation:
    values: tuple  # in _OBS_COLUMNS order, but for the session row (known inside the transaction)
    tool_use_ids: list[int]
    # the columns the batch insert looks at, besides the values it stores
    memory_session_id: str
    project: str
    epoch: int
    content_hash: str
    external_id: str | None


def _check_list(field: str, values: list[str]) -> None:
    validate.count(field, values, validate.MAX_LIST_ITEMS, needed=False)
    for j, value in enumerate(values):
        validate.max_chars(f"{field}[{j}]", value, validate.MAX_TEXT_CHARS)


def _plainly_valid(obs: common_pb2.Observation, session: str, project: str, kind: str, title: str,
                   lists: dict[str, list[str]]) -> bool:
    """A quick yes for the common case; anything unusual gets the full, message-naming checks."""
    text_limit = validate.MAX_TEXT_CHARS
    return bool(
        session.strip() and len(session) <= validate.MAX_ID_CHARS and project.strip()
        and len(project) * 4 <= PROJECT_MAX_BYTES and TYPE_NAME_RE.fullmatch(kind)
        and len(title) <= TITLE_MAX_CHARS and len(obs.external_id) <= validate.MAX_ID_CHARS
        and len(obs.subtitle) <= text_limit and len(obs.narrative) <= text_limit and len(obs.text) <= text_limit
        and all(len(v) <= validate.MAX_LIST_ITEMS and all(len(x) <= text_limit for x in v) for v in lists.values())
        and obs.prompt_number >= 0 and obs.discovery_tokens >= 0 and obs.created_at_epoch >= 0
    )


def _validate_observation(obs: common_pb2.Observation, where: str, lists: dict[str, list[str]]) -> None:
    validate.identifier(f"{where}.memory_session_id", obs.memory_session_id)
    validate.project(f"{where}.project", obs.project)
    validate.obs_type(f"{where}.type", obs.type)
    validate.max_chars(f"{where}.title", obs.title, TITLE_MAX_CHARS)
    for name in ("subtitle", "narrative", "text"):
        validate.max_chars(f"{where}.{name}", getattr(obs, name), validate.MAX_TEXT_CHARS)
    for name, values in lists.items():
        _check_list(f"{where}.{name}", values)
    validate.identifier(f"{where}.external_id", obs.external_id, needed=False)
    validate.non_negative(f"{where}.prompt_number", obs.prompt_number)
    validate.non_negative(f"{where}.discovery_tokens", obs.discovery_tokens)
    validate.non_negative(f"{where}.created_at_epoch", obs.created_at_epoch)


def prepare_observation(obs: common_pb2.Observation, where: str) -> PreparedObservation:
    """Validate and clean one observation. Hot path of ingest: every field is read once, and
    one privacy pre-check over all fields usually spares the per-field regex passes."""
    session, project, kind, external_id = obs.memory_session_id, obs.project, obs.type, obs.external_id
    title, subtitle, narrative, text = obs.title, obs.subtitle, obs.narrative, obs.text
    lists = {name: list(getattr(obs, name)) for name in ("facts", "concepts", "files_read", "files_modified")}
    if not _plainly_valid(obs, session, project, kind, title, lists):
        _validate_observation(obs, where, lists)
    if needs_full_clean(project):  # a project name is stored too (and copied into Chroma's metadata)
        project = clean(project)
    everything = "\x1f".join((title, subtitle, narrative, text, *[v for vs in lists.values() for v in vs]))
    scrub = clean if needs_full_clean(everything) else str.strip
    title, subtitle, narrative, text = scrub(title), scrub(subtitle), scrub(narrative), scrub(text)
    cleaned = {name: [c for c in map(scrub, values) if c] for name, values in lists.items()}
    if not (title or narrative or text or subtitle or cleaned["facts"]):
        raise InvalidArgument(f"{where}", "needs some text: title, subtitle, narrative, facts or text")
    epoch, iso = timestamps(obs.created_at_epoch, obs.created_at)
    digest = content_hash(session, title, narrative)
    values = (
        session, project, text or None, kind, title, subtitle, to_json_list(cleaned["facts"]), narrative,
        to_json_list(cleaned["concepts"]), to_json_list(cleaned["files_read"]),
        to_json_list(cleaned["files_modified"]), obs.prompt_number or None, obs.discovery_tokens, iso, epoch,
        digest, external_id or None, int(has_cjk(everything)), identity.writer(),
    )
    return PreparedObservation(values, list(obs.tool_use_ids), memory_session_id=session, project=project,
                               epoch=epoch, content_hash=digest, external_id=external_id or None)


def _existing_observations(conn: Conn, items: Sequence[PreparedObservation],
                           session_of: dict[tuple[str, str], int | None]) -> tuple[dict, dict]:
    """((project, external_id) -> id, (session row, project, content_hash) -> id) of rows already stored.
    External ids are each project's own (migration 11), and so are sessions (migration 15): another
    project's row with the same key is not looked at, so the write answers as if it did not exist,
    and nothing tells it does."""
    by_external: dict[tuple[str, str], int] = {}
    for project in {p.project for p in items if p.external_id}:
        externals = [p.external_id for p in items if p.external_id and p.project == project]
        for start in range(0, len(externals), 500):
            chunk = externals[start : start + 500]
            sql = (f"SELECT id, external_id FROM observations WHERE project = ? AND external_id IN "
                   f"({', '.join('?' for _ in chunk)})")
            by_external.update({(project, r["external_id"]): r["id"] for r in conn.execute(sql, [project, *chunk])})
    hashes: dict[tuple[int, str], list[str]] = {}
    for p in items:
        session = session_of[(p.memory_session_id, p.project)]
        if session is not None:  # a record filed under no session has no duplicate to find
            hashes.setdefault((session, p.project), []).append(p.content_hash)
    by_hash: dict[tuple[int, str, str], int] = {}
    for (session, project), values in hashes.items():
        for start in range(0, len(values), 500):
            chunk = values[start : start + 500]
            sql = (f"SELECT id, content_hash FROM observations WHERE session_db_id = ? AND project = ? AND "
                   f"content_hash IN ({', '.join('?' for _ in chunk)})")
            by_hash.update({(session, project, r["content_hash"]): r["id"]
                            for r in conn.execute(sql, [session, project, *chunk])})
    return by_external, by_hash


def check_tool_uses_exist(conn: Conn, ids: Sequence[int], field: str) -> None:
    wanted = sorted(set(ids))
    if not wanted:
        return
    # Another project's tool uses count as unknown: not linked to, not confirmed to exist.
    found = {r[0] for r in conn.execute(
        f"SELECT t.id, ss.project FROM tool_uses t LEFT JOIN sdk_sessions ss ON ss.id = t.session_db_id "
        f"WHERE t.id IN ({', '.join('?' for _ in wanted)})", wanted) if identity.may_access(r[1] or "")}
    missing = [i for i in wanted if i not in found]
    if missing:
        raise InvalidArgument(field, f"unknown tool use id {missing[0]}; record the tool use first")


def insert_observations(conn: Conn, items: Sequence[PreparedObservation],
                        where: str = "observations") -> tuple[list[int], list[bool]]:
    """Insert what is new; duplicates (external id or session + content hash) map to existing ids."""
    for i, item in enumerate(items):
        check_tool_uses_exist(conn, item.tool_use_ids, f"{where}[{i}].tool_use_ids")
    session_of = ensure_memory_sessions(conn, [(p.memory_session_id, p.project, p.epoch) for p in items])
    by_external, by_hash = _existing_observations(conn, items, session_of)
    ids: list[int] = []  # a stored id, or minus the 1-based slot of a row still to insert
    created: list[bool] = []
    fresh: list[PreparedObservation] = []
    pending: dict[object, int] = {}  # in-batch duplicates point at the first occurrence's slot
    for item in items:
        known = by_external.get((item.project, item.external_id)) if item.external_id else None
        session = session_of[(item.memory_session_id, item.project)]
        key = (session, item.project, item.content_hash)
        known = known or by_hash.get(key)
        if known:
            ids.append(known)
            created.append(False)
            continue
        external = ("ext", item.project, item.external_id)
        twin = pending.get(key) or (pending.get(external) if item.external_id else None)
        if twin is not None:
            ids.append(-twin)
            created.append(False)
            continue
        fresh.append(item)
        slot = len(fresh)
        pending[key] = slot
        if item.external_id:
            pending[external] = slot
        ids.append(-slot)
        created.append(True)
    if fresh:
        new_ids = _insert_rows(conn, [(*p.values, session_of[(p.memory_session_id, p.project)]) for p in fresh],
                               [p.project for p in fresh])
        ids = [new_ids[-i - 1] if i < 0 else i for i in ids]
        links = [(new_ids[n], t) for n, p in enumerate(fresh) for t in dict.fromkeys(p.tool_use_ids)]
        if links:
            conn.executemany("INSERT INTO observation_tool_uses(observation_id, tool_use_id) VALUES (?, ?) "
                             "ON CONFLICT DO NOTHING", links)
    return ids, created


def _insert_rows(conn: Conn, rows: Sequence[tuple], projects: Sequence[str]) -> list[int]:
    """Insert the rows (values in _OBS_COLUMNS order) in order; their new ids in the same order."""
    if conn.dialect.name == "postgres":  # store_svc.pg.conn.PgConnection
        return cast(Any, conn).insert_ids(_OBS_INSERT_ONE, rows)
    drawn = ids_for(conn, "observations", projects)
    if drawn[0] is not None:  # a team store: per-project ids
        conn.execute(_STAGE_ID_CREATE)
        conn.executemany(_STAGE_ID_INSERT, [(i, *values) for i, values in zip(drawn, rows, strict=True)])
        conn.execute(_OBS_ID_INSERT)
        conn.execute("DELETE FROM temp.stage_observation_ids")
        return [int(i) for i in drawn if i is not None]
    before = conn.execute("SELECT coalesce(max(id), 0) FROM observations").fetchone()[0]
    conn.execute(_STAGE_CREATE)
    conn.executemany(_STAGE_INSERT, rows)
    conn.execute(_OBS_INSERT)
    conn.execute("DELETE FROM temp.stage_observations")
    return [r[0] for r in conn.execute("SELECT id FROM observations WHERE id > ? ORDER BY id", (before,))]
