"""Records and stats as plain values for the templates and the JSON API.

Everything here returns text as it is stored; escaping is the templates' job (Jinja2
autoescape) and the page script's (textContent), never done by hand.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from google.protobuf import json_format
from google.protobuf.descriptor import Descriptor, EnumDescriptor, FieldDescriptor

from mnemo.v1 import common_pb2, search_pb2
from mnemo.vocab import KIND_NAMES, SUMMARY_FIELDS

CHART_HEIGHT = 120
CHART_BAR = 14
CHART_GAP = 4
OBSERVATION_FIELDS = ("subtitle", "narrative", "text")


_INT64 = frozenset({FieldDescriptor.TYPE_INT64, FieldDescriptor.TYPE_UINT64, FieldDescriptor.TYPE_SINT64,
                    FieldDescriptor.TYPE_FIXED64, FieldDescriptor.TYPE_SFIXED64})


def as_dict(message: Any) -> dict[str, Any]:
    """The message as plain JSON values for scripts (`--json`, the API): counts and ids as
    numbers (protobuf's JSON mapping writes 64-bit integers as strings, for JavaScript) and
    enum values by their plain name (`observation`, not `DOC_KIND_OBSERVATION`)."""
    return _plain(message.DESCRIPTOR, json_format.MessageToDict(message, preserving_proto_field_name=True))


def _plain(descriptor: Descriptor, data: dict[str, Any]) -> dict[str, Any]:
    fields = descriptor.fields_by_name
    out: dict[str, Any] = {}
    for key, value in data.items():
        field = fields.get(key)
        if field is None:  # well-known types (Struct, Timestamp) keep their JSON shape
            out[key] = value
        elif field.message_type is not None and field.message_type.GetOptions().map_entry:
            value_field = field.message_type.fields_by_name["value"]
            out[key] = {k: _value(value_field, v) for k, v in value.items()}
        elif isinstance(value, list):
            out[key] = [_value(field, item) for item in value]
        else:
            out[key] = _value(field, value)
    return out


def _value(field: FieldDescriptor, value: Any) -> Any:
    if field.type in _INT64 and isinstance(value, str):
        return int(value)
    if field.enum_type is not None and isinstance(value, str):
        return enum_name(field.enum_type, value)
    if field.message_type is not None and isinstance(value, dict):
        return _plain(field.message_type, value)
    return value


def enum_name(enum: EnumDescriptor, value: str) -> str:
    """`DOC_KIND_OBSERVATION` -> `observation`: the value without its enum's common prefix."""
    names = [v.name for v in enum.values]
    prefix = os.path.commonprefix(names) if len(names) > 1 else ""
    prefix = prefix[: prefix.rfind("_") + 1]
    return value.removeprefix(prefix).lower()


# A `\n` escape in JSON text: a backslash-n not itself preceded by an escaped backslash.
_NEWLINE_ESCAPE = re.compile(r"(?<!\\)((?:\\\\)*)\\n")


def readable(raw: str) -> str:
    """A raw tool input or response for a person: JSON pretty-printed, and the line
    breaks inside its strings (a command's output, a file) shown as line breaks. Text that
    is not JSON (or was cut at the size cap) keeps its content, escapes turned to breaks."""
    try:
        text = json.dumps(json.loads(raw), indent=2, ensure_ascii=False)
    except ValueError:
        text = raw
    return _NEWLINE_ESCAPE.sub(lambda m: m[1] + "\n", text)


def when(epoch_ms: int) -> str:
    if not epoch_ms:
        return ""
    return datetime.fromtimestamp(epoch_ms / 1000, tz=UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def row_view(row: common_pb2.IndexRow) -> dict[str, Any]:
    return {
        "id": row.display_id.lstrip("#"), "display_id": row.display_id, "kind": KIND_NAMES.get(row.ref.kind, "?"),
        "type": row.type, "title": row.title, "project": row.project, "file": row.file,
        "created_at": when(row.created_at_epoch), "epoch": row.created_at_epoch, "tokens": row.token_estimate,
        "score": round(row.score, 4),
    }


@dataclass
class Section:
    label: str
    text: str = ""
    items: tuple[str, ...] = ()


def record_sections(record: common_pb2.Record) -> list[Section]:
    """The record's fields in reading order, empty ones left out."""
    kind = record.WhichOneof("record")
    sections: list[Section] = []
    if kind == "observation":
        obs = record.observation
        sections += [Section(name.replace("_", " "), text=getattr(obs, name)) for name in OBSERVATION_FIELDS]
        sections += [Section(name.replace("_", " "), items=tuple(getattr(obs, name)))
                     for name in ("facts", "concepts", "files_read", "files_modified")]
    elif kind == "summary":
        summary = record.summary
        sections += [Section(name.replace("_", " "), text=getattr(summary, name)) for name in SUMMARY_FIELDS]
        sections += [Section(name.replace("_", " "), items=tuple(getattr(summary, name)))
                     for name in ("files_read", "files_edited")]
    elif kind == "prompt":
        sections.append(Section("prompt", text=record.prompt.prompt_text))
    return [s for s in sections if s.text or s.items]


def record_meta(record: common_pb2.Record) -> dict[str, str]:
    kind = record.WhichOneof("record") or ""
    body = getattr(record, kind) if kind else None
    if body is None:
        return {}
    meta = {"project": body.project, "session": body.memory_session_id, "platform": body.platform_source,
            "created": when(body.created_at_epoch)}
    if kind == "observation":
        meta["type"] = body.type
        meta["prompt #"] = str(body.prompt_number or "")
    return {k: v for k, v in meta.items() if v}


def wrong_mark(record: common_pb2.Record) -> dict[str, str] | None:
    """The owner's wrong mark, for a page (None when the record is not marked)."""
    if not record.HasField("marked_wrong"):
        return None
    return {"when": when(record.marked_wrong.marked_at_epoch), "reason": record.marked_wrong.reason}


@dataclass
class Bar:
    x: int
    day: str
    total: int
    parts: list[tuple[str, int, int]]  # (kind, y, height)


def activity_bars(activity: Any) -> tuple[list[Bar], int, int]:
    """Stacked bars per day (prompts, observations, summaries). Returns (bars, width, peak)."""
    days = list(activity.days)
    peak = max((d.observations + d.summaries + d.prompts for d in days), default=0) or 1
    bars = []
    for i, day in enumerate(days):
        y = CHART_HEIGHT
        parts = []
        for kind, count in (("prompt", day.prompts), ("observation", day.observations), ("summary", day.summaries)):
            height = round(count * (CHART_HEIGHT - 10) / peak)
            if count and height == 0:
                height = 1
            y -= height
            parts.append((kind, y, height))
        bars.append(Bar(i * (CHART_BAR + CHART_GAP), day.day, day.observations + day.summaries + day.prompts, parts))
    return bars, max(1, len(days) * (CHART_BAR + CHART_GAP)), peak


def disk_use(home: Path) -> int:
    """Bytes under the home (database, vector index, logs), without following links."""
    total = 0
    for root, _dirs, files in os.walk(home):
        for name in files:
            try:
                total += (Path(root) / name).lstat().st_size
            except OSError:
                continue
    return total


def human_bytes(size: int) -> str:
    value = float(size)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{size} B"


def overview_view(reply: search_pb2.OverviewReply) -> dict[str, Any]:
    stats = reply.stats
    vector = reply.vector if reply.HasField("vector") else None
    return {
        "counts": {"sessions": stats.sessions, "prompts": stats.prompts, "observations": stats.observations,
                   "summaries": stats.summaries, "tool uses": stats.tool_uses},
        "db_bytes": stats.db_bytes, "schema_version": stats.schema_version, "head_seq": stats.head_seq,
        "vector": None if vector is None else {"lag": vector.lag, "documents": vector.documents,
                                               "model": vector.model, "watermark": vector.watermark},
        "notice": reply.notice,
        "projects": [{"project": p.project, "sessions": p.sessions, "observations": p.observations,
                      "last": when(p.last_epoch)} for p in reply.activity.projects],
        "days": [{"day": d.day, "observations": d.observations, "summaries": d.summaries, "prompts": d.prompts}
                 for d in reply.activity.days],
    }
