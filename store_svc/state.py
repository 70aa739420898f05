"""Small state the store keeps for other services: mem_search cursors, work state, corpora."""

from __future__ import annotations

import json
from typing import cast

from google.protobuf import json_format
from google.protobuf.message import Message

from mnemo import identity
from mnemo.errors import Aborted, InvalidArgument, NotFound
from mnemo.timefmt import iso_from_ms, now_ms
from mnemo.v1 import store_pb2
from mnemo.vocab import CONTINUATION_RE, CORPUS_NAME_RE
from store_svc import convert, validate
from store_svc.dialect import Conn, Row
from store_svc.writes import clean, clean_strings

DEFAULT_KEY = "default"


# ---------------------------------------------------------------------------- cursors

def save_cursor(conn: Conn, cursor: store_pb2.Cursor, ttl_s: int) -> store_pb2.Cursor:
    if not CONTINUATION_RE.fullmatch(cursor.token):
        raise InvalidArgument("token", "must be 'ms_' followed by 24 URL-safe characters")
    validate.json_text("state_json", cursor.state_json, validate.MAX_CURSOR_STATE_BYTES)
    validate.non_negative("created_at_epoch", cursor.created_at_epoch)
    validate.non_negative("expires_at_epoch", cursor.expires_at_epoch)
    created = cursor.created_at_epoch or now_ms()
    expires = cursor.expires_at_epoch or created + ttl_s * 1000
    if expires <= created:
        raise InvalidArgument("expires_at_epoch", "must be after created_at_epoch")
    owner = identity.writer()
    known = conn.execute("SELECT owner FROM cursors WHERE token = ?", (cursor.token,)).fetchone()
    if known is not None and known["owner"] != owner:
        raise InvalidArgument("token", "already used; draw a new random token")  # never replace another's cursor
    conn.execute("INSERT INTO cursors(token, state_json, created_at_epoch, expires_at_epoch, owner) "
                 "VALUES (?, ?, ?, ?, ?) ON CONFLICT (token) DO UPDATE SET state_json = excluded.state_json, "
                 "created_at_epoch = excluded.created_at_epoch, expires_at_epoch = excluded.expires_at_epoch, "
                 "owner = excluded.owner", (cursor.token, cursor.state_json, created, expires, owner))
    return store_pb2.Cursor(token=cursor.token, state_json=cursor.state_json, created_at_epoch=created,
                            expires_at_epoch=expires)


def _clock(field: str, asked: int) -> int:
    """Now, in epoch ms. The caller's clock is taken only from the local stack or the service
    token (tests, tools): a user token's calls run on the server's clock, since one user's
    future `now_epoch` would expire every other user's mem_search continuations."""
    validate.epoch(field, asked)
    return asked if asked and identity.is_admin() else now_ms()


def load_cursor(conn: Conn, request: store_pb2.LoadCursorRequest) -> store_pb2.Cursor:
    validate.required("token", request.token)
    now = _clock("now_epoch", request.now_epoch)
    row = conn.execute("SELECT * FROM cursors WHERE token = ?", (request.token[:64],)).fetchone()
    # A cursor is bound to the user whose token created it: anyone else is told it does not exist.
    if row is None or row["expires_at_epoch"] <= now or row["owner"] != identity.writer():
        raise NotFound("cursor unknown or expired; run the search again without a cursor")
    return store_pb2.Cursor(token=row["token"], state_json=row["state_json"],
                            created_at_epoch=row["created_at_epoch"], expires_at_epoch=row["expires_at_epoch"])


def purge_cursors(conn: Conn, now_epoch: int) -> int:
    return conn.execute("DELETE FROM cursors WHERE expires_at_epoch < ?", (_clock("now_epoch", now_epoch),)).rowcount


# ---------------------------------------------------------------------------- work state

def _work_key(project: str, key: str) -> tuple[str, str]:
    """(project, key) as stored: both privacy-filtered, on writes and reads alike."""
    validate.project("project", project)
    validate.max_chars("key", key, 128)
    project, key = clean(project), clean(key or DEFAULT_KEY)
    for field, value in (("project", project), ("key", key)):
        if not value:
            raise InvalidArgument(field, "nothing is left after removing <private> regions")
    return project, key


def write_work_state(conn: Conn, request: store_pb2.WriteWorkStateRequest) -> store_pb2.WorkState:
    project, key = _work_key(request.project, request.key)
    validate.required("content", request.content)
    if len(request.content.encode("utf-8")) > validate.MAX_WORK_STATE_BYTES:
        raise InvalidArgument("content", f"at most {validate.MAX_WORK_STATE_BYTES:,} bytes")
    validate.non_negative("expected_version", request.expected_version)
    row = conn.execute("SELECT version FROM work_state WHERE project = ? AND key = ?", (project, key)).fetchone()
    current = row["version"] if row else 0
    if request.expected_version and request.expected_version != current:
        raise Aborted(f"work state {project}/{key} is at version {current}, not {request.expected_version}; "
                      "read it and retry with the current version")
    epoch = now_ms()
    values = (project, key, clean(request.content), current + 1, iso_from_ms(epoch), epoch)
    conn.execute("INSERT INTO work_state(project, key, content, version, updated_at, updated_at_epoch) "
                 "VALUES (?,?,?,?,?,?) ON CONFLICT (project, key) DO UPDATE SET content = excluded.content, "
                 "version = excluded.version, updated_at = excluded.updated_at, "
                 "updated_at_epoch = excluded.updated_at_epoch", values)
    conn.execute("INSERT INTO work_state_history(project, key, content, version, updated_at, updated_at_epoch) "
                 "VALUES (?,?,?,?,?,?)", values)
    return store_pb2.WorkState(project=project, key=key, content=values[2], version=values[3],
                               updated_at=values[4], updated_at_epoch=epoch)


def read_work_state(
    conn: Conn, request: store_pb2.ReadWorkStateRequest
) -> store_pb2.ReadWorkStateResponse:
    project, key = _work_key(request.project, request.key)
    if not 0 <= request.history <= 50:
        raise InvalidArgument("history", "must be between 0 and 50")
    reply = store_pb2.ReadWorkStateResponse()
    row = conn.execute("SELECT * FROM work_state WHERE project = ? AND key = ?", (project, key)).fetchone()
    if row is None:
        return reply
    reply.current.CopyFrom(convert.work_state_pb(row))
    if request.history:
        rows = conn.execute(
            "SELECT * FROM work_state_history WHERE project = ? AND key = ? AND version < ? "
            "ORDER BY version DESC LIMIT ?",
            (project, key, row["version"], request.history),
        )
        reply.history.extend(convert.work_state_pb(r) for r in rows)
    return reply


# ---------------------------------------------------------------------------- corpora


def _to_json(message: Message) -> str:
    return json_format.MessageToJson(message, preserving_proto_field_name=True, indent=None)


def _corpus_name(name: str) -> str:
    if not CORPUS_NAME_RE.fullmatch(name):
        raise InvalidArgument("name", "1-64 characters from letters, digits, '.', '_' and '-'")
    return name


_CORPUS_UPDATE = ", ".join(f"{c} = excluded.{c}" for c in (
    "description", "filter_json", "observation_ids", "stats_json", "priming_state", "last_job_json", "digest_json",
    "session_id", "created_at_epoch", "updated_at_epoch"))


def put_corpus(conn: Conn, corpus: store_pb2.Corpus) -> store_pb2.Corpus:
    """Create or replace the corpus `name` of its filter's project: names are each project's own
    (migration 12), so this never meets, nor tells of, another project's corpus."""
    name = _corpus_name(corpus.name)
    validate.max_chars("description", corpus.description, 2000)
    state = corpus.priming_state or "unprimed"
    validate.one_of("priming_state", state, validate.PRIMING_STATES)
    if corpus.digest_json:
        validate.json_text("digest_json", corpus.digest_json, validate.MAX_CURSOR_STATE_BYTES)
    now = now_ms()
    flt = cast(store_pb2.CorpusFilter, clean_strings(corpus.filter))
    key = (flt.project, name)
    row = conn.execute("SELECT created_at_epoch FROM corpora WHERE project = ? AND name = ?", key).fetchone()
    created = row["created_at_epoch"] if row else (corpus.created_at_epoch or now)
    conn.execute(
        "INSERT INTO corpora(project, name, description, filter_json, observation_ids, stats_json, priming_state, "
        "last_job_json, digest_json, session_id, created_at_epoch, updated_at_epoch) "
        f"VALUES (?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT (project, name) DO UPDATE SET {_CORPUS_UPDATE}",
        (
            *key,
            clean(corpus.description),
            _to_json(flt),
            json.dumps(list(corpus.observation_ids)),
            _to_json(corpus.stats),
            state,
            _to_json(corpus.last_job),
            corpus.digest_json,
            corpus.session_id,
            created,
            now,
        ),
    )
    conn.execute("DELETE FROM corpus_history WHERE corpus_project = ? AND corpus_name = ?", key)
    for turn in corpus.history:
        _append_turn(conn, key, turn)
    return _corpus_message(conn, _corpus_row(conn, name, flt.project))


def _append_turn(conn: Conn, key: tuple[str, str], turn: store_pb2.CorpusTurn) -> None:
    conn.execute(
        "INSERT INTO corpus_history(corpus_project, corpus_name, question, answer, citations, created_at_epoch) "
        "VALUES (?,?,?,?,?,?)",
        (*key, clean(turn.question), clean(turn.answer), json.dumps(list(turn.citations)),
         turn.created_at_epoch or now_ms()),
    )


def _corpus_row(conn: Conn, name: str, project: str) -> Row:
    """The corpus `name` of `project` that the caller may see; with no project, the one over all
    projects if the caller may see it, else the only one of that name in the caller's projects.
    Another project's corpus answers exactly like a name nobody holds."""
    project = clean(project)  # as the corpus's project was stored (clean_strings in put_corpus)
    rows = [r for r in conn.execute("SELECT * FROM corpora WHERE name = ? ORDER BY project", (name,)).fetchall()
            if identity.may_access(r["project"])]
    exact = [r for r in rows if r["project"] == project]
    if exact or project:
        rows = exact
    if not rows:
        raise NotFound(f"corpus {name[:64]!r} not found; list_corpora shows the existing ones")
    if len(rows) > 1:
        projects = ", ".join(repr(r["project"]) for r in rows)
        raise InvalidArgument("project", f"corpora called {name!r} are in several of your projects ({projects}); "
                                         "name the project of the one you mean")
    return rows[0]


def _corpus_pb(row: Row) -> store_pb2.Corpus:
    corpus = store_pb2.Corpus(
        name=row["name"],
        description=row["description"],
        priming_state=row["priming_state"],
        digest_json=row["digest_json"],
        session_id=row["session_id"],
        created_at_epoch=row["created_at_epoch"],
        updated_at_epoch=row["updated_at_epoch"],
    )
    json_format.Parse(row["filter_json"], corpus.filter)
    json_format.Parse(row["stats_json"], corpus.stats)
    json_format.Parse(row["last_job_json"], corpus.last_job)
    return corpus


def get_corpus(conn: Conn, name: str, project: str = "") -> store_pb2.Corpus:
    return _corpus_message(conn, _corpus_row(conn, name, project))


def _corpus_message(conn: Conn, row: Row) -> store_pb2.Corpus:
    corpus = _corpus_pb(row)
    corpus.observation_ids.extend(json.loads(row["observation_ids"]))
    for turn in conn.execute("SELECT * FROM corpus_history WHERE corpus_project = ? AND corpus_name = ? ORDER BY id",
                             (row["project"], row["name"])):
        corpus.history.add(
            question=turn["question"],
            answer=turn["answer"],
            citations=json.loads(turn["citations"]),
            created_at_epoch=turn["created_at_epoch"],
        )
    return corpus


def list_corpora(conn: Conn) -> store_pb2.ListCorporaResponse:
    rows = conn.execute("SELECT * FROM corpora ORDER BY name, project")
    return store_pb2.ListCorporaResponse(corpora=[_corpus_pb(r) for r in rows])


def update_corpus(conn: Conn, request: store_pb2.UpdateCorpusRequest) -> store_pb2.Corpus:
    name = _corpus_name(request.name)
    row = _corpus_row(conn, name, request.project)
    key = (row["project"], name)
    current = _corpus_pb(row)
    if request.expected_state and request.expected_state != current.priming_state:
        raise Aborted(
            f"corpus {name} is {current.priming_state}, not {request.expected_state}; read it again before changing it"
        )
    changes: dict[str, object] = {"updated_at_epoch": now_ms()}
    if request.priming_state:
        changes["priming_state"] = validate.one_of("priming_state", request.priming_state, validate.PRIMING_STATES)
    if request.HasField("last_job"):
        changes["last_job_json"] = _to_json(request.last_job)
    if request.digest_json:
        changes["digest_json"] = validate.json_text("digest_json", request.digest_json, validate.MAX_CURSOR_STATE_BYTES)
    if request.session_id:
        changes["session_id"] = validate.identifier("session_id", request.session_id)
    assignments = ", ".join(f"{column} = ?" for column in changes)
    conn.execute(f"UPDATE corpora SET {assignments} WHERE project = ? AND name = ?", (*changes.values(), *key))
    if request.clear_history:
        conn.execute("DELETE FROM corpus_history WHERE corpus_project = ? AND corpus_name = ?", key)
    if request.HasField("append_turn"):
        _append_turn(conn, key, request.append_turn)
    return _corpus_message(conn, _corpus_row(conn, name, key[0]))
