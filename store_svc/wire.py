"""Lenient request parsing: invalid UTF-8 in a string field becomes U+FFFD instead of an error.

proto3 refuses strings that are not UTF-8, so a client sending raw bytes (a query copied
from a binary file, a truncated multibyte character) would get INTERNAL "cannot
deserialize". The store promises that no query text makes a call fail, so on a decode
error the request's wire bytes are walked with its descriptor and every string field
is re-encoded with replacement characters, then parsed again.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import DecodeError


def _read_varint(data: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, pos
        shift += 7


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        bits = value & 0x7F
        value >>= 7
        if value:
            out.append(bits | 0x80)
        else:
            out.append(bits)
            return bytes(out)


def repair_utf8(data: bytes, descriptor: Descriptor) -> bytes:
    """The same message with every string field made valid UTF-8 (recursing into messages)."""
    out = bytearray()
    pos = 0
    while pos < len(data):
        start = pos
        key, pos = _read_varint(data, pos)
        number, wire_type = key >> 3, key & 7
        if wire_type == 0:
            _, pos = _read_varint(data, pos)
        elif wire_type in (1, 5):
            pos += 8 if wire_type == 1 else 4
        elif wire_type == 2:
            length, body_start = _read_varint(data, pos)
            body = data[body_start : body_start + length]
            pos = body_start + length
            field = descriptor.fields_by_number.get(number)
            if field is not None and field.type == FieldDescriptor.TYPE_STRING:
                body = body.decode("utf-8", "replace").encode("utf-8")
            elif field is not None and field.type == FieldDescriptor.TYPE_MESSAGE and field.message_type:
                body = repair_utf8(body, field.message_type)
            out += _varint(key) + _varint(len(body)) + body
            continue
        else:
            raise DecodeError(f"unsupported wire type {wire_type}")
        out += data[start:pos]
    return bytes(out)


def lenient_parser(message_class: Any) -> Callable[[bytes], Any]:
    def parse(data: bytes) -> Any:
        try:
            return message_class.FromString(data)
        except DecodeError:
            try:
                repaired = repair_utf8(data, message_class.DESCRIPTOR)
            except (IndexError, DecodeError):
                raise DecodeError(f"cannot parse {message_class.DESCRIPTOR.full_name}") from None
            return message_class.FromString(repaired)

    return parse
