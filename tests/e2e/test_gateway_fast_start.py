"""The fast start (gateway/fast.py) over the real stack: the real gateway answers the handshake
from the SDK's recorded answers exactly as the SDK answers it, then its own session
(gateway/session.py) serves the same streams and every request still gets exactly one reply."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import anyio
import pytest
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from gateway.fast import cache_path, load_answers, write_answers
from gateway.handshake import record_answers
from tests.conftest import start_service
from tests.service.gateway.mcp_support import FrameClient, gateway_env, mcp_session

pytestmark = pytest.mark.e2e

INITIALIZED = '{"jsonrpc":"2.0","method":"notifications/initialized"}'


def _initialize(request_id: int | str, version: str, **params: object) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": {"roots": {"listChanged": True}},
        "clientInfo": {"name": "fast-start-test", "version": "1"}, **params}})


def _request(request_id: int | str, method: str, params: dict | None = None) -> str:
    frame: dict = {"jsonrpc": "2.0", "id": request_id, "method": method}
    return json.dumps(frame if params is None else {**frame, "params": params})


def _fast_starts(settings) -> list[dict]:
    log = settings.logs_dir / "gateway.log"
    lines = log.read_text().splitlines() if log.exists() else []
    return [event for event in map(json.loads, lines) if event.get("event") == "fast_start"]


def _handshake(env: dict[str, str], version: str) -> list[dict]:
    """initialize, ping and tools/list written at once, as hosts do; the three replies."""
    client = FrameClient(env)
    try:
        for frame in (_initialize(1, version), INITIALIZED, _request(2, "ping"), _request(3, "tools/list")):
            client.write(frame)
        replies = client.collect(3, timeout=60.0)
        assert client.non_json == [] and client.close() == 0
        return replies
    finally:
        client.kill()


def _record(settings) -> None:
    write_answers(settings, asyncio.run(record_answers(settings)))
    assert load_answers(settings) is not None


def _fast_handshake(settings, env: dict[str, str], version: str) -> list[dict]:
    """`_handshake` served by the fast start. The record is made right before: other work in
    this checkout may edit a source between two starts, and a record of other sources is
    (rightly) never used; then it is recorded and tried again."""
    for _ in range(3):
        _record(settings)
        before = len(_fast_starts(settings))
        replies = _handshake(env, version)
        if len(_fast_starts(settings)) > before:
            return replies
    raise AssertionError("no start was served by the fast path")


def test_a_gateway_without_a_record_records_one_before_it_serves_and_serves_fast(stack):
    env = gateway_env(stack, MNEMO_LOG_LEVEL="info")
    assert not cache_path(stack).exists()
    replies = _handshake(env, "2025-11-25")
    assert [r["id"] for r in replies] == [1, 2, 3] and len(replies[2]["result"]["tools"]) == 19
    assert load_answers(stack) is not None
    assert cache_path(stack).stat().st_mode & 0o777 == 0o600
    assert cache_path(stack).parent.stat().st_mode & 0o777 == 0o700
    assert [event["listed"] for event in _fast_starts(stack)] == [19]  # the first start too
    assert _fast_handshake(stack, env, "2025-11-25") == replies


def test_after_a_fast_start_the_session_runs_without_the_sdk_and_answers_each_call_once(stack):
    """The gateway's own session (gateway/session.py) serves the calls: the SDK and pydantic are
    never loaded, and a call still running when the client closes stdin finishes and is
    answered, once."""
    _record(stack)
    client = FrameClient(gateway_env(stack))
    try:
        client.write(_initialize(1, "2025-06-18"))
        client.write(INITIALIZED)
        client.collect(1, timeout=60.0)
        call = {"name": "search", "arguments": {"query": "deploy", "limit": 2}}
        client.write(_request("first", "tools/call", call))
        [first] = client.collect(1, timeout=60.0)
        assert first["result"]["isError"] is False and "structuredContent" not in first["result"]
        maps = (Path("/proc") / str(client.proc.pid) / "maps").read_text()
        assert "pydantic_core" not in maps and "mcp_types" not in maps
        for n in range(3):
            client.write(_request(f"late-{n}", "tools/call", call))
        assert client.proc.stdin is not None
        client.proc.stdin.close()
        late = client.collect(3, timeout=60.0)
        assert sorted(r["id"] for r in late) == ["late-0", "late-1", "late-2"]
        for reply in late:  # running at EOF: they finish and are answered before the exit (issue 33)
            assert reply["result"]["isError"] is False, reply
        assert client.proc.wait(30) == 0 and client.replies.get(timeout=10) is None  # nothing more
    finally:
        client.kill()


def test_the_fast_start_answers_every_protocol_version_as_the_sdk_does(stack):
    fast_env = gateway_env(stack, MNEMO_LOG_LEVEL="info")
    sdk_env = gateway_env(stack, MNEMO_LOG_LEVEL="info", MNEMO_MCP_FAST_START="false")
    # Every version the SDK negotiates, the new stateless era's, and one the SDK does not know.
    versions = [*HANDSHAKE_PROTOCOL_VERSIONS, "2026-07-28", "1999-01-01"]
    for version in versions:
        assert _fast_handshake(stack, fast_env, version) == _handshake(sdk_env, version), version
    for profile in ("legacy", "all"):
        fast, sdk = ({**env, "MNEMO_MCP_PROFILE": profile} for env in (fast_env, sdk_env))
        assert _fast_handshake(stack, fast, "2025-11-25") == _handshake(sdk, "2025-11-25"), profile


def test_after_a_fast_start_each_request_is_answered_exactly_once(stack):
    _record(stack)
    client = FrameClient(gateway_env(stack, MNEMO_LOG_LEVEL="info"))
    try:
        # One write: the handshake, then frames the fast phase leaves to the SDK and the guard. The
        # client reuses id 1 (allowed once answered): the replayed initialize must not take its reply.
        client.write("\n".join([
            _initialize(1, "2025-06-18"), INITIALIZED, _request(2, "tools/list"),
            _request(1, "tools/call", {"name": "search", "arguments": {"query": "deploy", "limit": 2}}),
            '{"jsonrpc":"2.0","id":4,"method":"tools/list"', _request(5, "ping"), _request(6, "resources/list"),
        ]))
        replies = client.collect(6, timeout=60.0)
        # The handshake's answers come first and in order; the call runs beside the requests after it.
        assert [r["id"] for r in replies[:2]] == [1, 2] and sorted(r["id"] for r in replies) == [1, 1, 2, 4, 5, 6]
        assert replies[0]["result"]["protocolVersion"] == "2025-06-18"
        assert len(replies[1]["result"]["tools"]) == 19
        later = {r["id"]: r for r in replies[2:]}
        assert later[1]["result"]["isError"] is False
        assert later[4]["error"]["code"] == -32700 and later[5]["result"] == {}
        assert later[6]["error"]["code"] == -32601
        # Nothing more arrives: the next reply is the next request's.
        assert client.request("tools/list", request_id="last")["id"] == "last"
        assert client.non_json == [] and client.close() == 0
    finally:
        client.kill()
    [event] = _fast_starts(stack)
    assert event["answered"] == ["1", "notifications/initialized", "2"] and event["ended"] == "handover"


def test_initialize_params_of_unusual_shape_are_refused_or_answered_as_the_sdk_does(stack):
    _record(stack)
    env = gateway_env(stack, MNEMO_LOG_LEVEL="info")
    client = FrameClient(env)
    try:
        client.write(_initialize("odd", "2025-11-25", capabilities="none"))
        [refused] = client.collect(1, timeout=60.0)
        assert refused["id"] == "odd" and refused["error"]["code"] == -32602, refused
        client.write(_initialize("icons", "2025-11-25", clientInfo={"name": "x", "version": "1",
                                                                     "icons": [{"src": "data:,"}]}))
        [accepted] = client.collect(1, timeout=60.0)
        assert accepted["result"]["serverInfo"]["name"] == "mnemo"
        assert client.close() == 0
    finally:
        client.kill()
    assert [event["answered"] for event in _fast_starts(stack)] == [[]]


def test_a_list_served_by_the_fast_start_still_follows_vector_svc(settings, store_server):
    vector, vector_stop = start_service("vector", settings)
    search, search_stop = start_service("search", settings)
    _record(settings)
    methods: list[str] = []

    async def on_message(message) -> None:
        if getattr(message, "method", None):
            methods.append(message.method)

    async def scenario() -> None:
        env = gateway_env(settings, MNEMO_SEARCH_ADDR=settings.address("search"), MNEMO_LOG_LEVEL="info",
                          MNEMO_CAPABILITIES_CHECK_S="0.2")
        async with mcp_session(env, message_handler=on_message) as session:
            names = {tool.name for tool in (await session.list_tools()).tools}
            assert "prime_corpus" in names
            with anyio.fail_after(30):  # logged when the SDK takes over, after a quiet second
                while not _fast_starts(settings):
                    await anyio.sleep(0.05)
            assert _fast_starts(settings)[0]["listed"] == len(names), "the list was not served by the fast path"
            vector.stop(0.5)
            vector_stop()
            with anyio.fail_after(30):  # no other request: the session came from initialized
                while "notifications/tools/list_changed" not in methods:
                    await anyio.sleep(0.05)
            names = {tool.name for tool in (await session.list_tools()).tools}
            assert "prime_corpus" not in names and "mem_search" in names

    try:
        anyio.run(scenario)
    finally:
        search.stop(0.5)
        search_stop()
