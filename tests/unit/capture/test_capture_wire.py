"""capture.wire writes and reads exactly what the generated protobuf classes do."""

from __future__ import annotations

import pytest
from google.protobuf.descriptor import FieldDescriptor
from hypothesis import given, settings
from hypothesis import strategies as st

from capture import rpcs, wire
from capture.wire import Schema, WireError
from mnemo.v1 import common_pb2, search_pb2, store_pb2

pytestmark = pytest.mark.unit

WIRE_RPCS = [  # each hand-written RPC beside the generated one it stands for
    (wire.UPSERT_SESSION, rpcs.UPSERT_SESSION),
    (wire.RECORD_PROMPT, rpcs.RECORD_PROMPT),
    (wire.SESSION_START_CONTEXT, rpcs.SESSION_START_CONTEXT),
]
CLASSES = {
    "mnemo.v1.Session": common_pb2.Session,
    "mnemo.v1.UserPrompt": common_pb2.UserPrompt,
    "mnemo.v1.UpsertSessionRequest": store_pb2.UpsertSessionRequest,
    "mnemo.v1.RecordPromptRequest": store_pb2.RecordPromptRequest,
    "mnemo.v1.RecordPromptResponse": store_pb2.RecordPromptResponse,
    "mnemo.v1.SessionStartContextRequest": search_pb2.SessionStartContextRequest,
    "mnemo.v1.SessionStartContextReply": search_pb2.SessionStartContextReply,
}
KINDS = {FieldDescriptor.TYPE_STRING: "string", FieldDescriptor.TYPE_INT32: "int32",
         FieldDescriptor.TYPE_INT64: "int64", FieldDescriptor.TYPE_BOOL: "bool"}
SCHEMAS = [schema for rpc, _ in WIRE_RPCS for schema in (rpc.request, rpc.reply)]
SCHEMAS += [wire.USER_PROMPT]


def _shape(schema: Schema) -> dict[str, object]:
    return {name: (number, kind if isinstance(kind, str) else _shape(kind))
            for name, (number, kind) in schema.fields.items()}


def _descriptor_shape(descriptor) -> dict[str, object]:
    shape: dict[str, object] = {}
    for field in descriptor.fields:
        assert not field.is_repeated, f"{descriptor.full_name}.{field.name} is repeated"
        assert not field.has_presence or field.message_type, f"{descriptor.full_name}.{field.name} is optional"
        if field.message_type:
            shape[field.name] = (field.number, _descriptor_shape(field.message_type))
        else:
            shape[field.name] = (field.number, KINDS[field.type])
    return shape


@pytest.mark.parametrize("rpc, generated", WIRE_RPCS, ids=lambda rpc: getattr(rpc, "path", ""))
def test_each_hand_written_rpc_matches_the_generated_descriptors(rpc, generated):
    assert (rpc.path, rpc.service) == (generated.path, generated.service)
    method = generated.reply.DESCRIPTOR.file.pool.FindMethodByName(generated.path.strip("/").replace("/", "."))
    assert (rpc.request.name, rpc.reply.name) == (method.input_type.full_name, method.output_type.full_name)
    for schema in (rpc.request, rpc.reply):
        assert _shape(schema) == _descriptor_shape(CLASSES[schema.name].DESCRIPTOR), schema.name


def _values(schema: Schema) -> st.SearchStrategy[dict[str, object]]:
    """Field values of every kind: defaults, extremes, any Unicode (no lone surrogates:
    they are not UTF-8), and fields left unset."""
    strategies: dict[str, st.SearchStrategy[object]] = {}
    for name, (_, kind) in schema.fields.items():
        if isinstance(kind, Schema):
            strategies[name] = _values(kind)
        elif kind == "string":
            strategies[name] = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)
        elif kind == "bool":
            strategies[name] = st.booleans()
        else:
            bits = 32 if kind == "int32" else 64
            strategies[name] = st.integers(-(2 ** (bits - 1)), 2 ** (bits - 1) - 1) | st.sampled_from(
                [0, 1, 127, 128, -1, 2 ** (bits - 1) - 1, -(2 ** (bits - 1))])
    return st.fixed_dictionaries({}, optional=strategies)


def _to_message(schema: Schema, values: dict[str, object]):
    message = CLASSES[schema.name]()
    for name, value in values.items():
        kind = schema.fields[name][1]
        if isinstance(kind, Schema):
            getattr(message, name).CopyFrom(_to_message(kind, value))  # type: ignore[arg-type]
        else:
            setattr(message, name, value)
    return message


@pytest.mark.parametrize("schema", SCHEMAS, ids=lambda schema: schema.name)
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_bytes_equal_the_generated_classes_both_ways(schema, data):
    values = data.draw(_values(schema))
    message = _to_message(schema, values)
    encoded = schema.encode(values)
    assert encoded == message.SerializeToString()
    assert schema.decode(encoded) == _full(schema, message)


def _full(schema: Schema, message) -> dict[str, object]:
    """Every field of a generated message by name, nested ones as dicts (defaults included)."""
    return {name: _full(kind, getattr(message, name)) if isinstance(kind, Schema) else getattr(message, name)
            for name, (_, kind) in schema.fields.items()}


def _key(number: int, wire_type: int) -> bytes:
    """A field key as a varint, written out here rather than borrowed from capture.wire."""
    value, out = number << 3 | wire_type, bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    return bytes(out + bytes([value]))


def test_fields_unknown_to_the_reader_are_skipped():
    # A newer server's reply: every wire type at field numbers the schema does not know.
    prompt = common_pb2.UserPrompt(id=7, prompt_number=3, prompt_text="hi")
    reply = store_pb2.RecordPromptResponse(prompt=prompt, reason="duplicate").SerializeToString()
    unknown = (_key(99, 0) + bytes([150, 1])  # varint 150
               + _key(20, 1) + b"\x01" * 8  # fixed64
               + _key(5, 5) + b"\x02" * 4  # fixed32
               + _key(2000, 2) + bytes([3]) + b"abc")  # bytes
    decoded = wire.RECORD_PROMPT.reply.decode(unknown + reply + unknown)
    parsed = store_pb2.RecordPromptResponse.FromString(unknown + reply + unknown)
    assert decoded == _full(wire.RECORD_PROMPT.reply, parsed)
    assert decoded["prompt"]["id"] == 7 and decoded["reason"] == "duplicate"


def test_repeated_occurrences_follow_protobuf_last_scalar_wins_messages_merge():
    first = store_pb2.RecordPromptResponse(prompt=common_pb2.UserPrompt(id=1, prompt_text="a"), reason="x")
    second = store_pb2.RecordPromptResponse(prompt=common_pb2.UserPrompt(prompt_number=4), reason="y")
    data = first.SerializeToString() + second.SerializeToString()
    expected = _full(wire.RECORD_PROMPT.reply, store_pb2.RecordPromptResponse.FromString(data))
    assert wire.RECORD_PROMPT.reply.decode(data) == expected
    assert expected["prompt"] == {**expected["prompt"], "id": 1, "prompt_number": 4, "prompt_text": "a"}


def test_a_set_but_empty_nested_message_is_written_like_protobuf_writes_it():
    message = store_pb2.RecordPromptResponse()
    message.prompt.SetInParent()
    assert wire.RECORD_PROMPT.reply.encode({"prompt": {}}) == message.SerializeToString() == b"\x0a\x00"


@pytest.mark.parametrize("values, rule", [
    ({"project": 5}, "must be a string"),
    ({"token_budget": "5"}, "must be an integer"),
    ({"token_budget": True}, "must be an integer"),
    ({"token_budget": 2**31}, "out of the int32 range"),
    ({"nope": "x"}, "has no field 'nope'"),
])
def test_values_protobuf_would_refuse_are_refused(values, rule):
    with pytest.raises(WireError, match=rule):
        wire.SESSION_START_CONTEXT.request.encode(values)


@pytest.mark.parametrize("data", [b"\x0a\x05ab", b"\x08", b"\x08" + b"\xff" * 11, b"\x0b", b"\x00\x00",
                                  b"\x0a\x02\xff\xfe", b"\x08\x01"[:1] + b"\x80"])
def test_malformed_bytes_are_refused_as_protobuf_refuses_them(data):
    with pytest.raises(Exception):  # noqa: B017, PT011 - protobuf's own error type varies by backend
        search_pb2.SessionStartContextReply.FromString(data)
    with pytest.raises(WireError):
        wire.SESSION_START_CONTEXT.reply.decode(data)
