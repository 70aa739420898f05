"""Hostile frames written straight to the real gateway's stdin, over the real stack: every
frame that carries an id gets one JSON-RPC response within a bounded time, frames without
an id get none, errors stay short, and the gateway still serves normally afterwards."""

from __future__ import annotations

import json

import pytest

from tests.service.gateway.mcp_support import FrameClient, gateway_env

pytestmark = pytest.mark.e2e

HUGE = 4_000_000


def call(request_id: int, name: str, arguments: object) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
                       "params": {"name": name, "arguments": arguments}})


# (frame, the ids it must be answered with, the JSON-RPC error code; None = a tool result)
HOSTILE: list[tuple[str | bytes, list[int | None], int | None]] = [
    ('{"jsonrpc":"2.0","id":101,"method":"tools/list"', [101], -32700),
    ('{"jsonrpc":"2.0","id":102,"method":"tools/call","params":{"name":"search","arguments":{"query":"\\ud800"}}}',
     [102], -32600),
    ('{"jsonrpc":"2.0","id":103,"method":"tools/call","params":{"name":"search","arguments":{"query":'
     + "[" * 200 + "]" * 200 + "}}}", [103], -32600),
    ('{"jsonrpc":"2.0","id":104,"method":"tools/call","params":' + "[" * 20_000 + "]" * 20_000 + "}",
     [104], -32700),
    ('[{"jsonrpc":"2.0","id":105,"method":"tools/list"}]', [105], -32600),
    ('{"jsonrpc":"1.0","id":106,"method":"tools/list"}', [106], -32600),
    ('{"jsonrpc":"2.0","id":107,"method":5}', [107], -32600),
    ('{"jsonrpc":"2.0","id":108,"method":"tools/list","params":"x"}', [108], -32600),
    ('{"jsonrpc":"2.0","id":109,"method":"tools/list"}{"jsonrpc":"2.0","id":110,"method":"tools/list"}',
     [109, 110], -32600),
    (json.dumps({"jsonrpc": "2.0", "id": 111, "method": "m" * 100_000}), [111], -32601),
    (b'{"jsonrpc":"2.0","id":112,"method":"tools/call","params":{"name":"search","arguments":{"query":"\xff\xfe"}}}',
     [112], None),
    ('{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}', [None], -32600),
    ('{"jsonrpc":"2.0","id":113,"method":"tools/call","params":{"name":"search","arguments":"x"}}', [113], -32602),
    (call(114, "t" * 100_000, {}), [114], -32602),
    (call(115, "search", {"query": "q" * HUGE}), [115], None),
    (call(116, "search", {"query": "login", "limit": 5.0}), [116], None),
    ("garbage without any id", [None], -32700),
]
# Frames without an id: logged and dropped, never answered.
SILENT = [
    '{"jsonrpc":"1.0","method":"notifications/initialized"}',
    '[{"jsonrpc":"2.0","method":"notifications/x"}]',
    "[]",
    "12",
    '{"jsonrpc":"2.0","method":"tools/call","params":"x"}',
]


@pytest.fixture
def client(stack):
    frames = FrameClient(gateway_env(stack))
    try:
        frames.initialize()
        yield frames
    finally:
        frames.kill()


def test_every_hostile_frame_with_an_id_is_answered_and_the_gateway_keeps_serving(client):
    for frame, ids, code in HOSTILE:
        client.write(frame)
        replies = client.collect(len(ids), timeout=20.0)
        shown = repr(frame[:80])
        assert [r["id"] for r in replies] == ids, shown
        for reply in replies:
            assert len(json.dumps(reply)) < 2000, f"{shown}: the reply echoes the frame"
            if code is None:
                text = reply["result"]["content"][0]["text"]
                assert "INTERNAL" not in text and "Traceback" not in text, text
            else:
                assert reply["error"]["code"] == code, (shown, reply)
    too_long = json.loads(json.dumps(client.call_tool("search", {"query": "q" * HUGE}, request_id=200)))
    assert too_long["result"]["isError"]
    assert too_long["result"]["content"][0]["text"].startswith("INVALID_ARGUMENT: query:")
    for frame in SILENT:
        client.write(frame)
    # The next answer is the next request's: nothing was sent for the silent frames.
    listed = client.request("tools/list", request_id="after")
    assert {"mem_search", "save_memory"} <= {tool["name"] for tool in listed["result"]["tools"]}
    whole = client.call_tool("search", {"query": "login", "limit": 5.0}, request_id="float")
    assert not whole["result"].get("isError"), whole
    assert client.non_json == [], "stdout carried something other than JSON-RPC"
    assert client.proc.poll() is None
    assert client.close() == 0


def test_a_frame_past_the_size_cap_is_refused_without_ending_the_session(client):
    from gateway.frames import MAX_FRAME_BYTES

    client.write(call(300, "search", {"query": "z" * (MAX_FRAME_BYTES + 10)}))
    [reply] = client.collect(1, timeout=30.0)
    assert reply["id"] == 300 and reply["error"]["code"] == -32600
    assert client.request("tools/list", request_id=301)["id"] == 301


def test_every_integer_argument_takes_a_whole_float_and_refuses_past_int64(client):
    from tests.service.gateway.mcp_support import minimal_arguments
    from tests.unit.gateway.test_gateway_validation import INTEGER_ARGUMENTS, _lowest

    listed = {tool["name"] for tool in client.request("tools/list", request_id="list")["result"]["tools"]}
    checked = 0
    for tool, name, is_array in INTEGER_ARGUMENTS:
        if tool not in listed:
            continue
        low = float(_lowest(tool, name, is_array))
        for sent, refused in ((low, False), (2.0**64, True), (2**63, True), (-(2**63) - 1, True)):
            args = {**minimal_arguments(tool), name: [sent] if is_array else sent}
            if tool == "timeline" and name != "anchor":
                args["query"] = "login"  # timeline needs an anchor or a query
            reply = client.call_tool(tool, args, request_id=f"{tool}.{name}.{sent}")
            text = reply["result"]["content"][0]["text"]
            assert not text.startswith("INTERNAL"), (tool, name, sent, text)
            if refused:
                assert text.startswith(f"INVALID_ARGUMENT: {name}"), (tool, name, sent, text)
            else:
                # Accepted as an integer: any refusal is about another rule (an id that
                # does not exist, a missing query), never this argument's type.
                assert not text.startswith(f"INVALID_ARGUMENT: {name}"), (tool, name, sent, text)
        checked += 1
    assert checked >= 13
