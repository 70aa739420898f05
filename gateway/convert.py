"""Reply messages -> structuredContent dicts, field by field.

Written out rather than dumped with protobuf's JSON printer, which renders int64 as
strings and drops zero values: programs reading structuredContent get numbers as
numbers and every declared field. A record's `Shape` names its keys once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from google.protobuf.message import Message

from mnemo.v1 import common_pb2, search_pb2
from mnemo.vocab import KIND_NAMES, SUMMARY_FIELDS


@dataclass(frozen=True)
class Shape:
    """A record's structuredContent: constant keys first, then JSON key -> proto field."""

    message: type[Message]
    keys: dict[str, str]
    constants: dict[str, str] = field(default_factory=dict)

    def dump(self, message: Message) -> dict[str, Any]:
        data: dict[str, Any] = dict(self.constants)
        for key, name in self.keys.items():
            value = getattr(message, name)
            data[key] = list(value) if name in self._repeated else value
        return data

    @cached_property
    def _repeated(self) -> frozenset[str]:
        """The repeated proto fields among `keys`, read from the descriptor once."""
        fields = self.message.DESCRIPTOR.fields_by_name
        return frozenset(name for name in self.keys.values() if fields[name].is_repeated)


def _keys(*names: str, **renamed: str) -> dict[str, str]:
    """JSON keys for proto fields: snake_case names in camelCase, then renamed ones (key=field)."""
    keys = {_camel(name): name for name in names}
    keys.update(renamed)
    return keys


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


_RECORD_TAIL = ("project", "memory_session_id")
_CREATED = ("created_at", "created_at_epoch")

OBSERVATION = Shape(common_pb2.Observation, _keys(
    "id", "type", "title", "subtitle", "narrative", "facts", "concepts", "files_read", "files_modified",
    *_RECORD_TAIL, "prompt_number", *_CREATED, "tool_use_ids"), {"kind": "observation"})
SUMMARY = Shape(common_pb2.Summary, _keys(
    "id", *SUMMARY_FIELDS, *_RECORD_TAIL, *_CREATED),
    {"kind": "summary"})
PROMPT = Shape(common_pb2.UserPrompt, _keys(
    "id", "prompt_text", "prompt_number", "content_session_id", "project", *_CREATED), {"kind": "prompt"})
TOOL_USE = Shape(common_pb2.ToolUse, {
    **_keys("id", "tool_use_id", "tool_name", "content_session_id", "project"),
    "input": "tool_input",
    "response": "tool_response",
    **_keys("input_truncated", "response_truncated", "input_size", "response_size", "created_at", "observation_ids"),
})
TOOL_USE_REF = Shape(search_pb2.ToolUseRef, _keys("id", "tool_use_id", "tool_name"))
_RECORDS = {"observation": OBSERVATION, "summary": SUMMARY, "prompt": PROMPT}


def index_row(row: common_pb2.IndexRow) -> dict[str, Any]:
    return {
        "id": row.display_id,
        "kind": KIND_NAMES.get(row.ref.kind, "unknown"),
        "recordId": row.ref.id,
        "type": row.type,
        "title": row.title,
        "createdAt": row.created_at,
        "createdAtEpoch": row.created_at_epoch,
        "tokens": row.token_estimate,
        "score": row.score,
        "project": row.project,
        "file": row.file,
    }


def record(rec: common_pb2.Record) -> dict[str, Any]:
    which = rec.WhichOneof("record")
    if which is None:
        return {"kind": "observation", "id": 0}
    return _RECORDS[which].dump(getattr(rec, which))


def _rows(rows: Any) -> list[dict[str, Any]]:
    return [index_row(r) for r in rows]


def search_reply(reply: search_pb2.SearchReply) -> dict[str, Any]:
    counts = reply.counts
    return {
        "total": counts.total,
        "counts": {"observations": counts.observations, "summaries": counts.summaries, "prompts": counts.prompts},
        "strategy": reply.strategy,
        "notice": reply.notice,
        "rows": _rows(reply.rows),
    }


def timeline_reply(reply: search_pb2.TimelineReply) -> dict[str, Any]:
    return {"anchor": reply.anchor, "anchorIndex": reply.anchor_index, "items": _rows(reply.items)}


def observations_reply(reply: search_pb2.GetObservationsReply) -> dict[str, Any]:
    return {"observations": [OBSERVATION.dump(o) for o in reply.observations]}


def _detail(detail: search_pb2.MemDetail) -> dict[str, Any]:
    return {
        "id": detail.row.display_id,
        "record": record(detail.record),
        "row": index_row(detail.row),
        "context": _rows(detail.context),
        "toolUses": [TOOL_USE_REF.dump(t) for t in detail.tool_uses],
    }


def mem_search_reply(reply: search_pb2.MemSearchReply) -> dict[str, Any]:
    return {
        "total": reply.total,
        "offset": reply.offset,
        "hasMore": reply.has_more,
        "continuation": reply.continuation,
        "strategy": reply.strategy,
        "rows": _rows(reply.rows),
        "details": [_detail(d) for d in reply.details],
    }


def tool_uses_reply(reply: search_pb2.GetToolUsesReply) -> dict[str, Any]:
    return {"toolUses": [TOOL_USE.dump(t) for t in reply.tool_uses]}


def save_memory_reply(reply: search_pb2.SaveMemoryReply) -> dict[str, Any]:
    return {"id": reply.id, "created": reply.created}
