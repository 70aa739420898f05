"""The records import and export move, and mnemo's own JSONL format (docs/jsonl.md).

A SourceItem is one record read from any format, or the reason it could not be read;
capture.transfer sends them to StoreService.Import, capture.transfer_claude_mem reads
claude-mem's formats into them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

KINDS = ("session", "prompt", "observation", "summary", "tool_use")


@dataclass
class SourceItem:
    """One record read from a source: a message to import, or why it cannot be."""

    where: str
    kind: str = ""
    message: Any = None
    error: str = ""
    private: bool = False
    """True when the record was left out because nothing was left after privacy stripping."""


# -- mnemo JSONL -----------------------------------------------------------------------


def read_jsonl(path: Path) -> tuple[int, Iterator[SourceItem]]:
    with path.open("rb") as fh:
        total = sum(1 for line in fh if line.strip())

    def items() -> Iterator[SourceItem]:
        # Two passes, sessions first: the store files prompts and observations under them.
        for sessions_pass in (True, False):
            with path.open("r", encoding="utf-8", errors="replace") as fh:
                for number, line in enumerate(fh, 1):
                    if not line.strip():
                        continue
                    item = record_to_item(line, f"line {number}")
                    if (item.kind == "session") == sessions_pass:
                        yield item

    return total, items()


def record_to_item(line: str, where: str) -> SourceItem:
    try:
        record = json.loads(line)
    except json.JSONDecodeError as err:
        return SourceItem(where, error=f"not valid JSON ({err.msg} at column {err.colno})")
    if not isinstance(record, dict):
        return SourceItem(where, error="not a JSON object")
    kind = record.get("kind")
    if kind not in KINDS:
        return SourceItem(where, kind="?", error=f"unknown kind {kind!r}; expected one of {', '.join(KINDS)}")
    fields = {k: v for k, v in record.items() if k != "kind"}
    try:
        return SourceItem(where, kind, message=dict_to_message(_message_class(kind), fields))
    except ValueError as err:
        return SourceItem(where, kind, error=str(err))


def item_to_record(item: Any) -> dict[str, Any]:
    """One ExportItem as a JSONL record: {"kind": ..., every field of the message}."""
    kind = item.WhichOneof("item")
    return {"kind": kind, **message_to_dict(getattr(item, kind))}


def message_to_dict(message: Any) -> dict[str, Any]:
    """Every field (defaults included), arrays as lists, int64 as JSON numbers."""
    out: dict[str, Any] = {}
    for descriptor in message.DESCRIPTOR.fields:
        value = getattr(message, descriptor.name)
        out[descriptor.name] = list(value) if descriptor.is_repeated else value
    return out


def dict_to_message(cls: Any, data: dict[str, Any]) -> Any:
    """A message from a dict, refusing unknown fields and values of the wrong type."""
    message = cls()
    by_name = cls.DESCRIPTOR.fields_by_name
    for name, value in data.items():
        descriptor = by_name.get(name)
        if descriptor is None:
            raise ValueError(f"unknown field {name!r} for a {cls.DESCRIPTOR.name}")
        if value is None:
            continue
        if descriptor.is_repeated:
            if not isinstance(value, list):
                raise ValueError(f"{name}: expected an array")
            getattr(message, name).extend(_scalar(descriptor, name, v) for v in value)
        else:
            setattr(message, name, _scalar(descriptor, name, value))
    return message


def _scalar(descriptor: Any, name: str, value: Any) -> Any:
    kind = descriptor.cpp_type
    if kind == descriptor.CPPTYPE_STRING:
        if not isinstance(value, str):
            raise ValueError(f"{name}: expected a string, got {type(value).__name__}")
        return value
    if kind == descriptor.CPPTYPE_BOOL:
        if not isinstance(value, bool):
            raise ValueError(f"{name}: expected true or false")
        return value
    if kind in (descriptor.CPPTYPE_INT32, descriptor.CPPTYPE_INT64, descriptor.CPPTYPE_UINT32,
                descriptor.CPPTYPE_UINT64):
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"{name}: expected an integer, got {value!r}"[:200])
        return value
    if kind in (descriptor.CPPTYPE_DOUBLE, descriptor.CPPTYPE_FLOAT):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"{name}: expected a number")
        return value
    raise ValueError(f"{name}: unsupported field type")


def _message_class(kind: str) -> Any:
    from mnemo.v1 import common_pb2

    return {"session": common_pb2.Session, "prompt": common_pb2.UserPrompt, "observation": common_pb2.Observation,
            "summary": common_pb2.Summary, "tool_use": common_pb2.ToolUse}[kind]


def export_item(item: SourceItem) -> Any:
    from mnemo.v1 import store_pb2

    return store_pb2.ExportItem(**{item.kind: item.message})


def bad_file(path: Path, why: str) -> Exception:
    from mnemo.errors import InvalidArgument

    return InvalidArgument(str(path), why)


def guarded(where: str, kind: str, build: Callable[[], Any]) -> SourceItem:
    try:
        message = build()
    except (ValueError, TypeError) as err:
        return SourceItem(where, kind, error=str(err))
    if message is None:
        return SourceItem(where, kind, private=True)
    return SourceItem(where, kind, message=message)


