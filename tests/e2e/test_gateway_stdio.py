"""`mnemo mcp` over stdio with the real stack: the gateway's own server (gateway/server.py)
answers every request exactly once, finishes the calls still running at EOF, and never loads
the MCP SDK (nor pydantic) at run time."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.service.gateway import jsonrpc
from tests.service.gateway.mcp_support import FrameClient, gateway_env

pytestmark = pytest.mark.e2e

INITIALIZED = json.dumps(jsonrpc.INITIALIZED)
SEARCH = {"name": "search", "arguments": {"query": "deploy", "limit": 2}}


def _initialize(request_id: int | str, version: str) -> str:
    return json.dumps(jsonrpc.initialize(request_id, version))


def _request(request_id: int | str, method: str, params: dict | None = None) -> str:
    return json.dumps(jsonrpc.request(request_id, method, params))


def test_the_session_runs_without_the_sdk_and_calls_running_at_eof_are_answered_once(stack):
    client = FrameClient(gateway_env(stack))
    try:
        client.write(_initialize(1, "2025-06-18"))
        client.write(INITIALIZED)
        client.collect(1, timeout=60.0)
        client.write(_request("first", "tools/call", SEARCH))
        [first] = client.collect(1, timeout=60.0)
        assert first["result"]["isError"] is False and "structuredContent" not in first["result"]
        maps = (Path("/proc") / str(client.proc.pid) / "maps").read_text()
        assert "pydantic_core" not in maps and "mcp_types" not in maps
        for n in range(3):
            client.write(_request(f"late-{n}", "tools/call", SEARCH))
        assert client.proc.stdin is not None
        client.proc.stdin.close()
        late = client.collect(3, timeout=60.0)
        assert sorted(r["id"] for r in late) == ["late-0", "late-1", "late-2"]
        for reply in late:  # running at EOF: they finish and are answered before the exit (issue 33)
            assert reply["result"]["isError"] is False, reply
        assert client.proc.wait(30) == 0 and client.replies.get(timeout=10) is None  # nothing more
    finally:
        client.kill()


def test_each_request_written_at_once_is_answered_exactly_once(stack):
    client = FrameClient(gateway_env(stack))
    try:
        # One write, as hosts do: the handshake, a call that reuses id 1 (allowed once answered), a
        # frame cut short, a ping and a method no server of this kind serves.
        client.write(
            "\n".join(
                [
                    _initialize(1, "2025-06-18"),
                    INITIALIZED,
                    _request(2, "tools/list"),
                    _request(1, "tools/call", SEARCH),
                    '{"jsonrpc":"2.0","id":4,"method":"tools/list"',
                    _request(5, "ping"),
                    _request(6, "resources/list"),
                ]
            )
        )
        replies = client.collect(6, timeout=60.0)
        assert sorted(map(str, (r["id"] for r in replies))) == ["1", "1", "2", "4", "5", "6"]
        initialize = next(r for r in replies if r["id"] == 1 and "protocolVersion" in r.get("result", {}))
        assert initialize["result"]["protocolVersion"] == "2025-06-18"
        by_id = {r["id"]: r for r in replies if r is not initialize}
        assert len(by_id[2]["result"]["tools"]) == 19 and by_id[1]["result"]["isError"] is False
        assert by_id[4]["error"]["code"] == -32700 and by_id[5]["result"] == {}
        assert by_id[6]["error"]["code"] == -32601
        # Nothing more arrives: the next reply is the next request's.
        assert client.request("tools/list", request_id="last")["id"] == "last"
        assert client.non_json == [] and client.close() == 0
    finally:
        client.kill()
