"""Pure converters between SQLite rows and protobuf messages."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from typing import Any

from mnemo.timefmt import iso_from_ms, now_ms
from mnemo.v1 import common_pb2, store_pb2
from mnemo.vocab import KIND_OBSERVATION, KIND_SUMMARY, display_id

_ENCODE = json.JSONEncoder(ensure_ascii=False).encode


def timestamps(epoch: int, text: str = "") -> tuple[int, str]:
    """(epoch ms, ISO text): now when unset; a given ISO text is kept (imports are lossless)."""
    epoch = epoch or now_ms()
    return epoch, text or iso_from_ms(epoch)


def to_json_list(values: Iterable[str]) -> str:
    return _ENCODE(values if isinstance(values, list) else list(values))


def from_json_list(text: str | None) -> list[str]:
    """A JSON array column as strings; tolerant of legacy non-JSON text."""
    if not text:
        return []
    try:
        value = json.loads(text)
    except ValueError:
        return [text]
    if isinstance(value, list):
        return [v if isinstance(v, str) else json.dumps(v) for v in value]
    return [str(value)]


def _s(row: sqlite3.Row, key: str) -> str:
    value = row[key]
    return "" if value is None else str(value)


def _i(row: sqlite3.Row, key: str) -> int:
    value = row[key]
    return int(value) if value is not None else 0


def _opt(row: sqlite3.Row, key: str) -> Any:
    return row[key] if key in row.keys() else None  # noqa: SIM118 - `in row` would search the values


def _writer(row: sqlite3.Row) -> str:
    """The user whose token wrote the row ("" on the local stack, or when not selected)."""
    return str(_opt(row, "writer") or "")


def session_pb(row: sqlite3.Row) -> common_pb2.Session:
    return common_pb2.Session(
        id=row["id"], content_session_id=row["content_session_id"],
        memory_session_id=_s(row, "memory_session_id"), project=row["project"],
        platform_source=row["platform_source"], user_prompt=_s(row, "user_prompt"), status=row["status"],
        started_at=row["started_at"], started_at_epoch=row["started_at_epoch"],
        completed_at=_s(row, "completed_at"), completed_at_epoch=_i(row, "completed_at_epoch"),
        prompt_counter=_i(row, "prompt_counter"), custom_title=_s(row, "custom_title"),
        external_id=_s(row, "external_id"), writer=_writer(row),
    )


def prompt_pb(row: sqlite3.Row) -> common_pb2.UserPrompt:
    return common_pb2.UserPrompt(
        id=row["id"], content_session_id=row["content_session_id"], prompt_number=_i(row, "prompt_number"),
        prompt_text=row["prompt_text"], created_at=row["created_at"], created_at_epoch=row["created_at_epoch"],
        project=_s(row, "project"), memory_session_id=_s(row, "memory_session_id"),
        platform_source=_s(row, "platform_source"), external_id=_s(row, "external_id"), writer=_writer(row),
    )


def observation_pb(row: sqlite3.Row, tool_use_ids: Iterable[int] = ()) -> common_pb2.Observation:
    return common_pb2.Observation(
        id=row["id"], memory_session_id=row["memory_session_id"], project=row["project"], type=row["type"],
        title=_s(row, "title"), subtitle=_s(row, "subtitle"), narrative=_s(row, "narrative"),
        facts=from_json_list(row["facts"]), concepts=from_json_list(row["concepts"]),
        files_read=from_json_list(row["files_read"]), files_modified=from_json_list(row["files_modified"]),
        prompt_number=_i(row, "prompt_number"), discovery_tokens=_i(row, "discovery_tokens"),
        created_at=row["created_at"], created_at_epoch=row["created_at_epoch"],
        content_hash=_s(row, "content_hash"), external_id=_s(row, "external_id"), text=_s(row, "text"),
        platform_source=_s(row, "platform_source") if _opt(row, "platform_source") else "",
        tool_use_ids=list(tool_use_ids), writer=_writer(row),
    )


def summary_pb(row: sqlite3.Row) -> common_pb2.Summary:
    return common_pb2.Summary(
        id=row["id"], memory_session_id=row["memory_session_id"], project=row["project"],
        request=_s(row, "request"), investigated=_s(row, "investigated"), learned=_s(row, "learned"),
        completed=_s(row, "completed"), next_steps=_s(row, "next_steps"), notes=_s(row, "notes"),
        prompt_number=_i(row, "prompt_number"), discovery_tokens=_i(row, "discovery_tokens"),
        created_at=row["created_at"], created_at_epoch=row["created_at_epoch"],
        external_id=_s(row, "external_id"), files_read=from_json_list(row["files_read"]),
        files_edited=from_json_list(row["files_edited"]),
        platform_source=_s(row, "platform_source") if _opt(row, "platform_source") else "",
        writer=_writer(row),
    )


def tool_use_pb(row: sqlite3.Row, observation_ids: Iterable[int] = ()) -> common_pb2.ToolUse:
    return common_pb2.ToolUse(
        id=row["id"], content_session_id=row["content_session_id"],
        memory_session_id=_s(row, "memory_session_id"), project=_s(row, "project"),
        tool_use_id=_s(row, "tool_use_id"), tool_name=row["tool_name"], tool_input=_s(row, "tool_input"),
        tool_response=_s(row, "tool_response"), input_truncated=bool(row["input_truncated"]),
        response_truncated=bool(row["response_truncated"]), input_size=_i(row, "input_size"),
        response_size=_i(row, "response_size"), cwd=_s(row, "cwd"), prompt_number=_i(row, "prompt_number"),
        created_at=row["created_at"], created_at_epoch=row["created_at_epoch"],
        observation_ids=list(observation_ids), writer=_writer(row),
    )


def record_pb(kind: int, message: Any) -> common_pb2.Record:
    if kind == KIND_OBSERVATION:
        return common_pb2.Record(observation=message)
    if kind == KIND_SUMMARY:
        return common_pb2.Record(summary=message)
    return common_pb2.Record(prompt=message)


def index_row_pb(row: sqlite3.Row, score: float = 0.0, specificity: float = 0.0) -> common_pb2.IndexRow:
    """An index row from the columns selected by queries.KindSql.index_select (and the record's
    specificity, queries.specificities)."""
    kind = row["kind"]
    return common_pb2.IndexRow(
        ref=common_pb2.Ref(kind=kind, id=row["id"]), display_id=display_id(kind, row["id"]),
        type=_s(row, "type"), title=_s(row, "title"), created_at=row["created_at"],
        created_at_epoch=row["created_at_epoch"], token_estimate=min(_i(row, "chars") // 4, 2**31 - 1),
        score=score, project=_s(row, "project"), file=_s(row, "file"), asks=asks(_s(row, "ending")),
        specificity=specificity,
    )


def asks(text: str) -> bool:
    """Whether a record's text (or its last characters) ends in a question: a record that asks
    seldom holds the answer a search is after (search_svc.fusion.with_question_penalty)."""
    return text.rstrip().endswith("?")


def work_state_pb(row: sqlite3.Row) -> store_pb2.WorkState:
    return store_pb2.WorkState(
        project=row["project"], key=row["key"], content=row["content"], version=row["version"],
        updated_at=row["updated_at"], updated_at_epoch=row["updated_at_epoch"],
    )


def iso(epoch_ms: int) -> str:
    return iso_from_ms(epoch_ms)
