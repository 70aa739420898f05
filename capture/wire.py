"""The protobuf wire format for the few messages the waited-for hooks exchange, by hand.

Why: SessionStart and UserPromptSubmit run while the agent waits, in a fresh interpreter
per event, and importing the protobuf runtime and the generated modules costs about as
much as starting the interpreter (bench/hooks.py). Their RPCs carry a handful of scalar
fields, so this module writes and reads them with the standard library only.

Scope: proto3 scalars without explicit presence (string, int32, int64, bool) and nested
messages; defaults are left out as protobuf does, fields are written in number order,
so the bytes equal the generated classes' SerializeToString() (tests/unit/capture/
test_capture_wire.py checks both directions against them, and that every schema here
matches its descriptor). A reader skips fields it does not know, as protobuf does: a
newer server adding fields breaks nothing.
"""

from __future__ import annotations

from typing import Any

VARINT, I64, LEN, I32 = 0, 1, 2, 5
SCALAR_DEFAULTS: dict[str, Any] = {"string": "", "int32": 0, "int64": 0, "bool": False}


class WireError(ValueError):
    """Bytes that are not a well-formed message of the expected shape."""


class Schema:
    """A message: field name -> (number, kind); kind is a scalar name or a nested Schema.
    (Plain classes, not dataclasses: building one at import costs a hook ~1 ms.)"""

    __slots__ = ("name", "fields")

    def __init__(self, name: str, fields: dict[str, tuple[int, str | Schema]]):
        self.name = name
        self.fields = fields

    def __repr__(self) -> str:
        return f"Schema({self.name})"

    def encode(self, values: dict[str, Any]) -> bytes:
        unknown = set(values) - set(self.fields)
        if unknown:
            raise WireError(f"{self.name} has no field {sorted(unknown)[0]!r}")
        out = bytearray()
        for name, (number, kind) in sorted(self.fields.items(), key=lambda item: item[1][0]):
            value = values.get(name)
            if value is None:
                continue
            out += _encode_field(number, kind, value)
        return bytes(out)

    def decode(self, data: bytes) -> dict[str, Any]:
        """Every known field (defaults for the absent ones); unknown fields skipped."""
        by_number = {number: (name, kind) for name, (number, kind) in self.fields.items()}
        values = {name: _default(kind) for name, (_, kind) in self.fields.items()}
        nested: dict[str, bytes] = {}
        for number, wire_type, raw in _fields(data):
            if number not in by_number:
                continue
            name, kind = by_number[number]
            if isinstance(kind, Schema) and wire_type == LEN and isinstance(raw, bytes):
                nested[name] = nested.get(name, b"") + raw  # repeated occurrences merge, as in protobuf
                continue
            values[name] = _decode_value(self.name, name, kind, wire_type, raw)  # the last one wins
        for name, raw in nested.items():
            values[name] = _decode_value(self.name, name, self.fields[name][1], LEN, raw)
        return values


class WireRpc:
    """One unary RPC whose request and reply are handled here."""

    __slots__ = ("service", "path", "request", "reply")

    def __init__(self, service: str, path: str, request: Schema, reply: Schema):
        self.service = service  # "store", "search": which of the stack's addresses serves it
        self.path = path
        self.request = request
        self.reply = reply

    def __repr__(self) -> str:
        return f"WireRpc({self.path})"


def _default(kind: str | Schema) -> Any:
    return SCALAR_DEFAULTS[kind] if isinstance(kind, str) else kind.decode(b"")


def _encode_field(number: int, kind: str | Schema, value: Any) -> bytes:
    if isinstance(kind, Schema):
        body = kind.encode(value)
        return _varint(number << 3 | LEN) + _varint(len(body)) + body
    if kind == "string":
        if not isinstance(value, str):
            raise WireError(f"field {number} must be a string")
        if not value:
            return b""
        data = value.encode("utf-8")
        return _varint(number << 3 | LEN) + _varint(len(data)) + data
    if isinstance(value, bool) != (kind == "bool") or not isinstance(value, int):
        raise WireError(f"field {number} must be {'a bool' if kind == 'bool' else 'an integer'}")
    bits = 32 if kind == "int32" else 64
    if kind != "bool" and not -(2 ** (bits - 1)) <= value < 2 ** (bits - 1):
        raise WireError(f"field {number} is out of the {kind} range")
    if not value:
        return b""
    # Negative int32 and int64 values are both sent as their 64-bit two's complement.
    return _varint(number << 3 | VARINT) + _varint(int(value) & (2**64 - 1))


def _decode_value(message: str, name: str, kind: str | Schema, wire_type: int, raw: int | bytes) -> Any:
    if isinstance(kind, Schema):
        if wire_type != LEN or not isinstance(raw, bytes):
            raise WireError(f"{message}.{name}: expected a message")
        return kind.decode(raw)
    if kind == "string":
        if wire_type != LEN or not isinstance(raw, bytes):
            raise WireError(f"{message}.{name}: expected a string")
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            raise WireError(f"{message}.{name}: not UTF-8") from None
    if wire_type != VARINT or not isinstance(raw, int):
        raise WireError(f"{message}.{name}: expected a varint")
    if kind == "bool":
        return raw != 0
    bits = 32 if kind == "int32" else 64
    value = raw & (2**bits - 1)  # an int32 arrives sign-extended to 64 bits
    return value - 2**bits if value >= 2 ** (bits - 1) else value


def _fields(data: bytes) -> list[tuple[int, int, int | bytes]]:
    """(number, wire type, varint value or bytes) for every field, in order."""
    found: list[tuple[int, int, int | bytes]] = []
    position = 0
    while position < len(data):
        key, position = _read_varint(data, position)
        number, wire_type = key >> 3, key & 7
        if number == 0:
            raise WireError("field number 0")
        raw: int | bytes
        if wire_type == VARINT:
            raw, position = _read_varint(data, position)
        elif wire_type in (I64, I32):
            size = 8 if wire_type == I64 else 4
            raw, position = data[position : position + size], position + size
        elif wire_type == LEN:
            size, position = _read_varint(data, position)
            raw, position = data[position : position + size], position + size
        else:
            raise WireError(f"unsupported wire type {wire_type}")  # groups: never in proto3
        if position > len(data):
            raise WireError("truncated message")
        found.append((number, wire_type, raw))
    return found


def _varint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _read_varint(data: bytes, position: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if position >= len(data) or shift > 63:
            raise WireError("truncated or overlong varint")
        byte = data[position]
        position += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, position
        shift += 7


# -- the messages and RPCs of the waited-for hooks (mnemo/v1/*.proto) ------------------
SESSION = Schema("mnemo.v1.Session", {
    "id": (1, "int64"), "content_session_id": (2, "string"), "memory_session_id": (3, "string"),
    "project": (4, "string"), "platform_source": (5, "string"), "user_prompt": (6, "string"),
    "status": (7, "string"), "started_at": (8, "string"), "started_at_epoch": (9, "int64"),
    "completed_at": (10, "string"), "completed_at_epoch": (11, "int64"), "prompt_counter": (12, "int32"),
    "custom_title": (13, "string"), "external_id": (14, "string"), "writer": (15, "string"),
})
USER_PROMPT = Schema("mnemo.v1.UserPrompt", {
    "id": (1, "int64"), "content_session_id": (2, "string"), "prompt_number": (3, "int32"),
    "prompt_text": (4, "string"), "created_at": (5, "string"), "created_at_epoch": (6, "int64"),
    "project": (7, "string"), "memory_session_id": (8, "string"), "platform_source": (9, "string"),
    "external_id": (10, "string"), "writer": (11, "string"),
})
UPSERT_SESSION = WireRpc("store", "/mnemo.v1.StoreService/UpsertSession", Schema("mnemo.v1.UpsertSessionRequest", {
    "content_session_id": (1, "string"), "project": (2, "string"), "platform_source": (3, "string"),
    "memory_session_id": (4, "string"), "user_prompt": (5, "string"), "custom_title": (6, "string"),
    "started_at_epoch": (7, "int64"), "external_id": (8, "string"),
}), SESSION)
RECORD_PROMPT = WireRpc("store", "/mnemo.v1.StoreService/RecordPrompt", Schema("mnemo.v1.RecordPromptRequest", {
    "content_session_id": (1, "string"), "platform_source": (2, "string"), "project": (3, "string"),
    "prompt_text": (4, "string"), "created_at_epoch": (5, "int64"), "external_id": (6, "string"),
    "prompt_number": (7, "int32"),
}), Schema("mnemo.v1.RecordPromptResponse", {"prompt": (1, USER_PROMPT), "skipped": (2, "bool"),
                                             "reason": (3, "string")}))
SESSION_START_CONTEXT = WireRpc(
    "search", "/mnemo.v1.SearchService/SessionStartContext",
    Schema("mnemo.v1.SessionStartContextRequest", {"project": (1, "string"), "token_budget": (2, "int32")}),
    Schema("mnemo.v1.SessionStartContextReply", {"text": (1, "string"), "observations": (2, "int32"),
                                                 "summaries": (3, "int32")}),
)
