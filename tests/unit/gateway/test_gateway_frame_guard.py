"""The frame guard's verdicts: what passes to the server, what is answered (with which id and
code), what is dropped; and how rejected values are quoted (short, privacy-filtered). The MCP
SDK's message validation is the oracle: what the guard passes, the SDK accepts as the same kind
of message, and a shape the SDK refuses never passes."""

from __future__ import annotations

import json

import mcp_types as types
import pytest

from gateway.frames import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    MAX_DEPTH,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    judge,
    judge_bytes,
    recover_id,
)
from gateway.redact import PREVIEW_CHARS, preview, shorten

pytestmark = pytest.mark.unit


def frame(**fields) -> str:
    return json.dumps({"jsonrpc": "2.0", **fields})


def answered(line: str) -> list[tuple[object, int]]:
    verdict = judge(line)
    assert verdict.message is None, "a refused frame must not reach the server"
    return [(reply["id"], reply["error"]["code"]) for reply in verdict.replies]


def sdk_kind(value: object) -> str | None:
    """The kind of JSON-RPC message the SDK parses `value` as, None when it refuses it."""
    try:
        return type(types.jsonrpc_message_adapter.validate_python(value, by_name=False)).__name__
    except ValueError:
        return None


def test_a_valid_request_passes_as_the_parsed_message():
    verdict = judge(frame(id=3, method="tools/list"))
    assert verdict.message == {"jsonrpc": "2.0", "id": 3, "method": "tools/list"}
    assert sdk_kind(verdict.message) == "JSONRPCRequest"
    assert not verdict.replies and not verdict.dropped


def test_notifications_and_client_responses_pass():
    assert sdk_kind(judge(frame(method="notifications/initialized")).message) == "JSONRPCNotification"
    assert sdk_kind(judge(frame(id="r1", result={})).message) == "JSONRPCResponse"
    assert sdk_kind(judge(frame(id="r2", error={"code": 1, "message": "no"})).message) == "JSONRPCError"


@pytest.mark.parametrize("fields", [
    {"id": 1}, {"id": 1, "result": 5}, {"id": 1, "error": {"code": 1}}, {"id": 1, "error": "no"},
    {"result": {}}, {"error": {"code": 1, "message": "no"}}, {"id": 1, "result": {}, "extra": 1},
    {"id": 1, "method": "x", "extra": 1}, {"method": "x", "result": {}}, {"id": "r", "result": {}},
])
def test_the_guard_passes_a_shape_exactly_when_the_sdk_accepts_it(fields):
    verdict = judge(frame(**fields))
    assert (verdict.message is not None) == (sdk_kind({"jsonrpc": "2.0", **fields}) is not None), fields


def test_blank_lines_are_ignored():
    verdict = judge("   ")
    assert verdict.message is None and not verdict.replies and not verdict.dropped


@pytest.mark.parametrize("line,expected", [
    ('{"jsonrpc":"2.0","id":7,"method":"tools/list"', [(7, PARSE_ERROR)]),  # cut short
    ('{"jsonrpc":"2.0","id":"a-1","method":', [("a-1", PARSE_ERROR)]),
    ("not json at all", [(None, PARSE_ERROR)]),
    ('{"jsonrpc":"2.0","id":1,"method":"x","params":{"n":NaN}}', [(1, PARSE_ERROR)]),
    ('{"jsonrpc":"2.0","id":2,"method":"x","params":{"n":' + "9" * 5000 + "}}", [(2, PARSE_ERROR)]),
])
def test_lines_that_are_not_json_get_a_parse_error_with_the_id_when_it_can_be_read(line, expected):
    assert answered(line) == expected


def test_nesting_past_the_limit_is_answered_once_with_the_id():
    # Python 3.11's parser gives up on 5000 levels (RecursionError: a parse error); 3.13's builds the
    # value and the structure check refuses it (invalid params). Either way: one answer, with the id.
    line = '{"jsonrpc":"2.0","id":3,"method":"x","params":' + "[" * 5000 + "]" * 5000 + "}"
    [(reply_id, code)] = answered(line)
    assert reply_id == 3 and code in (PARSE_ERROR, INVALID_PARAMS)


@pytest.mark.parametrize("fields,code", [
    ({"jsonrpc": "1.0", "id": 1, "method": "tools/list"}, INVALID_REQUEST),
    ({"id": 1, "method": "tools/list"}, INVALID_REQUEST),
    ({"jsonrpc": "2.0", "id": 1, "method": 5}, INVALID_REQUEST),
    ({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": "x"}, INVALID_REQUEST),
    ({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": [1, 2]}, INVALID_PARAMS),
    ({"jsonrpc": "2.0", "id": 1, "method": "m" * 100_000}, METHOD_NOT_FOUND),
    ({"jsonrpc": "2.0", "id": 1}, INVALID_REQUEST),  # neither method nor result nor error
    ({"jsonrpc": "2.0", "id": 1, "error": "not an error object"}, INVALID_REQUEST),
])
def test_json_that_is_no_acceptable_message_gets_an_invalid_request_with_its_id(fields, code):
    assert answered(json.dumps(fields)) == [(1, code)]


@pytest.mark.parametrize("bad_id", [None, 1.5, True, [1], {"a": 1}])
def test_an_id_mcp_does_not_allow_is_answered_with_null(bad_id):
    assert answered(frame(id=bad_id, method="tools/list")) == [(None, INVALID_REQUEST)]


def test_a_lone_surrogate_escape_is_refused_in_values_and_keys():
    value = '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"search","arguments":{"query":"\\ud800"}}}'
    key = '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"\\udfff":1}}'
    assert answered(value) == [(4, INVALID_REQUEST)]
    assert answered(key) == [(5, INVALID_REQUEST)]
    # A proper pair is one character, not a lone surrogate.
    pair = ('{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"search",'
            '"arguments":{"query":"\\ud83d\\ude00"}}}')
    assert judge(pair).message is not None


def test_nesting_is_bounded():
    def nested(levels: int) -> str:
        # The frame object and params are two levels already.
        return frame(id=8, method="tools/call", params={"x": json.loads("[" * (levels - 2) + "]" * (levels - 2))})

    assert judge(nested(MAX_DEPTH)).message is not None
    assert answered(nested(MAX_DEPTH + 1)) == [(8, INVALID_REQUEST)]
    assert answered(nested(300)) == [(8, INVALID_REQUEST)]


def test_two_messages_on_one_line_each_get_an_invalid_request():
    line = frame(id=1, method="tools/list") + frame(id=2, method="tools/list") + frame(method="notifications/x")
    verdict = judge(line)
    assert [(r["id"], r["error"]["code"]) for r in verdict.replies] == [(1, INVALID_REQUEST), (2, INVALID_REQUEST)]
    assert verdict.message is None and len(verdict.dropped) == 1


def test_a_batch_is_refused_element_by_element():
    line = json.dumps([{"jsonrpc": "2.0", "id": 1, "method": "ping"}, {"jsonrpc": "2.0", "method": "n"},
                       {"jsonrpc": "2.0", "id": "b", "method": "ping"}])
    assert answered(line) == [(1, INVALID_REQUEST), ("b", INVALID_REQUEST)]
    assert judge("[]").dropped and not judge("[]").replies


@pytest.mark.parametrize("line", [
    '{"jsonrpc":"1.0","method":"notifications/initialized"}',
    '{"jsonrpc":"2.0","method":5}',
    '"just a string"',
    "42",
])
def test_frames_without_an_id_are_dropped_with_a_reason(line):
    verdict = judge(line)
    assert verdict.message is None and not verdict.replies and verdict.dropped


def test_the_id_of_a_broken_frame_is_read_only_before_any_nested_value():
    assert recover_id('{"jsonrpc":"2.0","id":12,"method":"x", garbage') == 12
    assert recover_id('{"params":{"id":3},"id":4') is None  # the first "id" is nested: not trusted
    assert recover_id('{"id":1.5,') is None
    assert recover_id('{"id":"\\ud800"') is None


def test_every_reply_is_a_json_rpc_error_the_sdk_accepts():
    for line in ["x", frame(id=1, method=5), "[]", frame(id=None, method="m"), frame(id=2, params=[1])]:
        for reply in judge(line).replies:
            assert sdk_kind(json.loads(json.dumps(reply))) == "JSONRPCError", reply


def test_a_frame_past_the_size_cap_is_refused_with_its_id():
    from gateway.frames import MAX_FRAME_BYTES

    raw = frame(id=9, method="tools/call", params={"q": "z" * MAX_FRAME_BYTES}).encode()
    assert answered_bytes(raw) == [(9, INVALID_REQUEST)]


def answered_bytes(raw: bytes) -> list[tuple[object, int]]:
    verdict = judge_bytes(raw)
    assert verdict.message is None
    return [(reply["id"], reply["error"]["code"]) for reply in verdict.replies]


def test_a_preview_is_short_and_privacy_filtered():
    huge = "x" * 4_000_000
    assert len(preview(huge)) <= PREVIEW_CHARS + 3
    assert preview("ok") == "'ok'"
    secret = "before <private>hunter2-is-the-password</private> after"
    assert "hunter2" not in preview(secret)
    key = "token sk-ant-" + "A" * 40
    assert "AAAAAAAAAAAAAAAA" not in preview(key)
    # A private region opened before the cut and closed after it hides what is shown of it.
    assert "hidden" not in preview("<private>" + "hidden " * 1000 + "</private>")
    assert len(preview(list(range(1_000_000)))) <= PREVIEW_CHARS + 3


def test_shorten_cuts_free_text():
    assert shorten("m" * 100_000, 40) == "m" * 40 + "..."
    assert shorten("short", 40) == "short"
