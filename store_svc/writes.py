"""Write-side helpers: prepare (validate + clean) records, then insert them on a connection
that the caller holds inside a transaction. Used by the RPCs and by Import alike."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from mnemo import identity, privacy
from mnemo.errors import InvalidArgument, NotFound
from mnemo.query import has_cjk
from mnemo.v1 import common_pb2
from mnemo.vocab import DEFAULT_PLATFORM
from store_svc import convert, ids, sessions, validate
from store_svc.convert import timestamps, to_json_list
from store_svc.dialect import Conn, Row
from store_svc.ids import inserted_id

PROMPT_DEDUPE_WINDOW_MS = 10_000


# Substrings without which mnemo.privacy.mask_secrets cannot match anything (its patterns
# start with these literals, or need a secret-ish word next to ':' or '='). Checking them
# with `in` is ~50x cheaper than running every pattern, and ingest runs it on every field.
_SECRET_LITERALS = ("sk-", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "AKIA", "xox", "AIza", "eyJ",
                    "PRIVATE KEY")
_SECRET_WORDS = ("api", "secret", "token", "passw", "private")


def needs_full_clean(text: str) -> bool:
    """False only when privacy.clean(text) is certainly text.strip() (no tag, no secret shape)."""
    if "<" in text or any(literal in text for literal in _SECRET_LITERALS):
        return True
    lowered = text.lower()
    return "bearer" in lowered or (("=" in text or ":" in text) and any(w in lowered for w in _SECRET_WORDS))


def clean(text: str) -> str:
    """mnemo.privacy.clean with a fast path for text that holds neither tags nor secret shapes."""
    if not text:
        return text
    return privacy.clean(text) if needs_full_clean(text) else text.strip()


def clean_keys(message: Message, *names: str) -> None:
    """Privacy-filter identifier fields in place (session ids, project, tool names...): they
    are stored too. Done the same way on every write and lookup, so the keys stay consistent."""
    for name in names:
        value = getattr(message, name)
        if value and needs_full_clean(value):
            setattr(message, name, privacy.clean(value))


def clean_strings(message: Message) -> Message:
    """A copy of a protobuf message with every string field (nested, repeated) privacy-filtered."""
    copy = type(message)()
    copy.CopyFrom(message)
    _clean_in_place(copy)
    return copy


def _clean_in_place(message: Message) -> None:
    for field, value in message.ListFields():
        if field.type == FieldDescriptor.TYPE_STRING:
            if _is_repeated(field):
                value[:] = [clean(item) for item in value]
            else:
                setattr(message, field.name, clean(value))
        elif field.type == FieldDescriptor.TYPE_MESSAGE and not _is_map(field):
            for item in value if _is_repeated(field) else [value]:
                _clean_in_place(item)


def _is_map(field: FieldDescriptor) -> bool:
    return field.message_type is not None and field.message_type.GetOptions().map_entry


def _is_repeated(field: FieldDescriptor) -> bool:
    return bool(field.is_repeated)


def content_hash(memory_session_id: str, title: str, narrative: str) -> str:
    """claude-mem's dedupe key: sha256(memory_session_id \\0 title \\0 narrative)[:16]."""
    digest = hashlib.sha256("\x00".join((memory_session_id, title, narrative)).encode("utf-8", "replace"))
    return digest.hexdigest()[:16]


def cap_text(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def cap_bytes(text: str, limit: int) -> tuple[str, bool, int]:
    """(text cut to at most `limit` UTF-8 bytes on a character boundary, truncated?, original size)."""
    raw = text.encode("utf-8", "replace")
    if len(raw) <= limit:
        return text, False, len(raw)
    return raw[:limit].decode("utf-8", "ignore"), True, len(raw)


def _clean_list(field: str, values: Sequence[str]) -> list[str]:
    if not values:
        return []
    validate.count(field, values, validate.MAX_LIST_ITEMS, needed=False)
    out = []
    for j, value in enumerate(values):
        if len(value) > validate.MAX_TEXT_CHARS:
            validate.max_chars(f"{field}[{j}]", value, validate.MAX_TEXT_CHARS)
        cleaned = clean(value)
        if cleaned:
            out.append(cleaned)
    return out


def _clean_field(field: str, value: str, limit: int = validate.MAX_TEXT_CHARS) -> str:
    validate.max_chars(field, value, limit)
    return clean(value)


# ---------------------------------------------------------------------------- prompts

@dataclass
class PreparedPrompt:
    content_session_id: str
    platform: str
    project: str
    text: str  # cleaned; empty = entirely private
    epoch: int
    created_at: str
    external_id: str
    prompt_number: int


def prepare_prompt(content_session_id: str, platform: str, project: str, text: str, epoch: int,
                   external_id: str, prompt_number: int, created_at: str = "") -> PreparedPrompt:
    validate.identifier("content_session_id", content_session_id)
    validate.identifier("platform_source", platform, needed=False)
    validate.project("project", project, needed=False)
    validate.required("prompt_text", text)
    validate.identifier("external_id", external_id, needed=False)
    validate.non_negative("prompt_number", prompt_number)
    validate.non_negative("created_at_epoch", epoch)
    cleaned = cap_text(clean(text[: validate.MAX_PROMPT_CHARS * 4]), validate.MAX_PROMPT_CHARS)
    epoch, iso = timestamps(epoch, created_at)
    return PreparedPrompt(content_session_id, platform or DEFAULT_PLATFORM, project, cleaned, epoch, iso,
                          external_id, prompt_number)


def prompt_row(conn: Conn, prompt_id: int) -> Row:
    return conn.execute(
        "SELECT p.*, ss.project AS project, ss.memory_session_id AS memory_session_id, "
        "ss.platform_source AS platform_source FROM user_prompts p LEFT JOIN sdk_sessions ss "
        "ON ss.id = p.session_db_id WHERE p.id = ?", (prompt_id,)).fetchone()


def _prompt_by_external_id(conn: Conn, prompt: PreparedPrompt) -> int | None:
    """The stored prompt with this external id in the project the prompt goes to (its session's,
    else the prompt's own): external ids are each project's own."""
    session = sessions.find(conn, prompt.content_session_id, prompt.platform, prompt.project)
    row = conn.execute("SELECT p.id FROM user_prompts p JOIN sdk_sessions ss ON ss.id = p.session_db_id "
                       "WHERE p.external_id = ? AND ss.project = ?",
                       (prompt.external_id, session["project"] if session else prompt.project)).fetchone()
    return int(row["id"]) if row else None


def insert_prompt(conn: Conn, prompt: PreparedPrompt) -> tuple[Row | None, str]:
    """Store a prepared prompt. Returns (row, "") or (existing row or None, skip reason)."""
    if prompt.external_id:
        known = _prompt_by_external_id(conn, prompt)
        if known:
            return prompt_row(conn, known), "duplicate"
    session = sessions.for_write(conn, prompt.content_session_id, prompt.platform, prompt.project)
    if prompt.text:
        twin = conn.execute(
            "SELECT id FROM user_prompts WHERE session_db_id = ? AND prompt_text = ? "
            "AND abs(created_at_epoch - ?) <= ? ORDER BY id DESC LIMIT 1",
            (session["id"], prompt.text, prompt.epoch, PROMPT_DEDUPE_WINDOW_MS)).fetchone()
        if twin:
            return prompt_row(conn, twin["id"]), "duplicate"
    number = prompt.prompt_number or session["prompt_counter"] + 1
    conn.execute("UPDATE sdk_sessions SET prompt_counter = ? WHERE id = ? AND prompt_counter < ?",
                 (number, session["id"], number))
    if not prompt.text:
        return None, "private"
    cursor = ids.insert(
        conn, "user_prompts", session["project"],
        ("session_db_id", "content_session_id", "prompt_number", "prompt_text", "created_at", "created_at_epoch",
         "external_id", "has_cjk", "writer"),
        (session["id"], prompt.content_session_id, number, prompt.text, prompt.created_at, prompt.epoch,
         prompt.external_id or None, int(has_cjk(prompt.text)), identity.writer()))
    if not session["user_prompt"]:
        conn.execute("UPDATE sdk_sessions SET user_prompt = ? WHERE id = ?", (prompt.text, session["id"]))
    return prompt_row(conn, inserted_id(cursor)), ""


# ---------------------------------------------------------------------------- summaries

_SUM_COLUMNS = ("memory_session_id", "project", "request", "investigated", "learned", "completed", "next_steps",
                "files_read", "files_edited", "notes", "prompt_number", "discovery_tokens", "created_at",
                "created_at_epoch", "external_id", "has_cjk", "writer")


def prepare_summary(summary: common_pb2.Summary, where: str) -> tuple:
    validate.identifier(f"{where}.memory_session_id", summary.memory_session_id)
    validate.project(f"{where}.project", summary.project)
    validate.identifier(f"{where}.external_id", summary.external_id, needed=False)
    validate.non_negative(f"{where}.prompt_number", summary.prompt_number)
    validate.non_negative(f"{where}.discovery_tokens", summary.discovery_tokens)
    validate.non_negative(f"{where}.created_at_epoch", summary.created_at_epoch)
    texts = [_clean_field(f"{where}.{name}", getattr(summary, name))
             for name in ("request", "investigated", "learned", "completed", "next_steps")]
    notes = _clean_field(f"{where}.notes", summary.notes)
    if not any(texts) and not notes:
        raise InvalidArgument(where, "needs some text: request, investigated, learned, completed, next_steps or notes")
    epoch, iso = timestamps(summary.created_at_epoch, summary.created_at)
    return (summary.memory_session_id, summary.project, *texts,
            to_json_list(_clean_list(f"{where}.files_read", summary.files_read)),
            to_json_list(_clean_list(f"{where}.files_edited", summary.files_edited)), notes,
            summary.prompt_number or None, summary.discovery_tokens, iso, epoch, summary.external_id or None,
            int(has_cjk(*texts, notes)), identity.writer())


def insert_summary(conn: Conn, values: tuple, *, dedupe_on_time: bool = False) -> tuple[int, bool]:
    external_id = values[14]
    if external_id:
        known = conn.execute("SELECT id FROM session_summaries WHERE project = ? AND external_id = ?",
                             (values[1], external_id)).fetchone()
        if known:  # the project's own (the caller may write there): another's is not looked at
            return known["id"], False
    session = sessions.ensure_memory_sessions(conn, [(values[0], values[1], values[13])])[(values[0], values[1])]
    if dedupe_on_time and session is not None:
        for known in conn.execute("SELECT id, project FROM session_summaries WHERE session_db_id = ? "
                                  "AND created_at_epoch = ? ORDER BY id", (session, values[13])).fetchall():
            # Another project's record filed under the caller's session (by a writer of every
            # project) is no duplicate of the caller's: it is not looked at.
            if identity.may_access(str(known["project"])):
                return known["id"], False
    cursor = ids.insert(conn, "session_summaries", values[1], (*_SUM_COLUMNS, "session_db_id"), (*values, session))
    return inserted_id(cursor), True


# ---------------------------------------------------------------------------- tool uses

TOOL_USE_SELECT = ("SELECT t.*, ss.memory_session_id AS memory_session_id, ss.project AS project FROM tool_uses t "
                   "LEFT JOIN sdk_sessions ss ON ss.id = t.session_db_id")


def tool_use_message(conn: Conn, row_id: int) -> common_pb2.ToolUse:
    row = conn.execute(f"{TOOL_USE_SELECT} WHERE t.id = ?", (row_id,)).fetchone()
    links = [r[0] for r in conn.execute(
        "SELECT observation_id FROM observation_tool_uses WHERE tool_use_id = ? ORDER BY observation_id", (row_id,))]
    return convert.tool_use_pb(row, links)


def _known_tool_use(conn: Conn, tool: common_pb2.ToolUse, epoch: int, dedupe_on_time: bool) -> int | None:
    """The stored tool use this one repeats: same host session id and call id (or, on import, time
    and tool), in a session the caller sees (another project's is not looked at), the one in the
    session the call names first."""
    params: list[object] = [tool.content_session_id]
    if tool.tool_use_id:
        where = "t.tool_use_id = ?"
        params.append(tool.tool_use_id)
    elif dedupe_on_time:
        where = "t.created_at_epoch = ? AND t.tool_name = ?"
        params.extend((epoch, tool.tool_name))
    else:
        return None
    rows = [r for r in conn.execute(
        "SELECT t.id, t.session_db_id, ss.project FROM tool_uses t LEFT JOIN sdk_sessions ss "
        f"ON ss.id = t.session_db_id WHERE t.content_session_id = ? AND {where} ORDER BY t.id", params)
        if identity.may_access(str(r["project"] or ""))]
    if not rows:
        return None
    session = sessions.find(conn, tool.content_session_id, "", tool.project)
    mine = [r for r in rows if session is not None and r["session_db_id"] == session["id"]]
    return int((mine or rows)[0]["id"])


def insert_tool_use(conn: Conn, tool: common_pb2.ToolUse, cap: int, where: str = "tool_use",
                    *, dedupe_on_time: bool = False) -> tuple[int, bool]:
    validate.identifier(f"{where}.content_session_id", tool.content_session_id)
    validate.identifier(f"{where}.tool_name", tool.tool_name)
    validate.identifier(f"{where}.tool_use_id", tool.tool_use_id, needed=False)
    validate.project(f"{where}.project", tool.project, needed=False)
    validate.max_chars(f"{where}.cwd", tool.cwd, 4096)
    validate.non_negative(f"{where}.prompt_number", tool.prompt_number)
    validate.non_negative(f"{where}.created_at_epoch", tool.created_at_epoch)
    tool_input, input_cut, input_size = cap_bytes(clean(tool.tool_input), cap)
    response, response_cut, response_size = cap_bytes(clean(tool.tool_response), cap)
    epoch, iso = timestamps(tool.created_at_epoch, tool.created_at)
    known = _known_tool_use(conn, tool, epoch, dedupe_on_time)
    if known is not None:
        return known, False
    observation_ids = sorted(set(tool.observation_ids))
    if observation_ids:
        # Another project's observations count as unknown: not linked to, not confirmed to exist.
        found = {r[0] for r in conn.execute(
            f"SELECT id, project FROM observations WHERE id IN ({', '.join('?' for _ in observation_ids)})",
            observation_ids) if identity.may_access(r[1])}
        missing = [i for i in observation_ids if i not in found]
        if missing:
            raise InvalidArgument(f"{where}.observation_ids", f"unknown observation id {missing[0]}")
    session = sessions.for_write(conn, tool.content_session_id, "", tool.project, f"{where}.")
    cursor = ids.insert(
        conn, "tool_uses", session["project"],
        ("session_db_id", "content_session_id", "tool_use_id", "tool_name", "tool_input", "tool_response",
         "input_truncated", "response_truncated", "input_size", "response_size", "cwd", "prompt_number",
         "created_at", "created_at_epoch", "writer"),
        (session["id"], tool.content_session_id, tool.tool_use_id or None, tool.tool_name, tool_input, response,
         int(input_cut), int(response_cut), input_size, response_size, tool.cwd or None,
         tool.prompt_number or None, iso, epoch, identity.writer()))
    row_id = inserted_id(cursor)
    conn.executemany("INSERT INTO observation_tool_uses(observation_id, tool_use_id) VALUES (?, ?) "
                     "ON CONFLICT DO NOTHING",
                     [(o, row_id) for o in observation_ids])
    return row_id, True


def require_row(row: Row | None, what: str) -> Row:
    if row is None:
        raise NotFound(f"{what} not found")
    return row
