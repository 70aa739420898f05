"""Record what the SDK answers to the handshake, for the fast start (gateway/fast.py).

The gateway's own server (the same `build_server`, the same initialization options) is
asked in memory, once per protocol version the SDK negotiates: initialize, the initialized
notification, ping, and tools/list with every tool of every profile. The fast start then
filters that list by profile and capabilities, as `gateway.tools.advertised` does. Nothing is
written by hand: the record is the SDK's own wire output, so the two paths cannot drift apart.
"""

from __future__ import annotations

from typing import Any

import anyio
import mcp_types as types
from mcp.shared.message import SessionMessage
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, LATEST_HANDSHAKE_VERSION

from gateway.fast import cache_key, load_answers, write_answers
from mnemo.config import Settings
from mnemo.logs import get_logger

log = get_logger(__name__)

_CLIENT = {"name": "mnemo-handshake-recorder", "version": "0"}


async def record_answers(settings: Settings) -> dict[str, Any]:
    """The SDK's answers, in the shape of gateway.fast.Answers."""
    from gateway.core import Gateway
    from gateway.server import NOTIFICATIONS, build_server, to_mcp_tool
    from gateway.tools import BY_NAME, PROFILES

    gateway = Gateway(settings)
    server = build_server(gateway)
    every = list(BY_NAME.values())

    async def list_every_tool(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[to_mcp_tool(spec, gateway.structured) for spec in every])

    server.add_request_handler("tools/list", types.PaginatedRequestParams, list_every_tool)
    options = server.create_initialization_options(NOTIFICATIONS)
    answers: dict[str, Any] = {
        "versions": list(HANDSHAKE_PROTOCOL_VERSIONS), "latest": LATEST_HANDSHAKE_VERSION,
        "initialize": {}, "ping": {}, "tools": {}, "tools_rest": {},
        "profiles": {name: [spec.name for spec in specs] for name, specs in PROFILES.items()},
        "needs": {spec.name: sorted(spec.needs) for spec in every},
    }
    for version in HANDSHAKE_PROTOCOL_VERSIONS:
        initialize, ping, listed = await _converse(server, options, version)
        answers["initialize"][version], answers["ping"][version] = initialize, ping
        answers["tools"][version] = {tool["name"]: tool for tool in listed["tools"]}
        answers["tools_rest"][version] = {key: value for key, value in listed.items() if key != "tools"}
    await gateway.client.close()
    return answers


async def _converse(server: Any, options: Any, version: str) -> list[dict[str, Any]]:
    """One in-memory session: the results of initialize, ping and tools/list, in that order."""
    frames = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": version, "capabilities": {}, "clientInfo": _CLIENT}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "ping"},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/list"},
    ]
    to_server, server_in = anyio.create_memory_object_stream[SessionMessage | Exception](len(frames))
    server_out, from_server = anyio.create_memory_object_stream[SessionMessage](len(frames))
    results: dict[Any, dict[str, Any]] = {}
    async with to_server, server_in, server_out, from_server, anyio.create_task_group() as tasks:
        tasks.start_soon(server.run, server_in, server_out, options)
        for frame in frames:
            await to_server.send(SessionMessage(types.jsonrpc_message_adapter.validate_python(frame)))
        with anyio.fail_after(10):
            while len(results) < 3:
                reply = (await from_server.receive()).message
                if isinstance(reply, types.JSONRPCError):
                    raise RuntimeError(f"the SDK refused the recorded handshake at {version}: {reply.error.message}")
                if isinstance(reply, types.JSONRPCResponse):
                    results[reply.id] = reply.model_dump(by_alias=True, mode="json", exclude_unset=True)["result"]
        await to_server.aclose()  # end of input: the session ends and the server returns
    return [results[1], results[2], results[3]]


async def refresh(settings: Settings) -> bool:
    """Record the answers when no usable record exists; True when one was written. Never
    raises: without a record the next start is only slower."""
    try:
        if load_answers(settings) is not None:
            return False
        path = write_answers(settings, await record_answers(settings))
    except Exception:  # noqa: BLE001 - the record is an optimisation; its failure is only logged
        log.exception("handshake_record_failed")
        return False
    log.info("handshake_recorded", path=str(path), sources=cache_key().count("\n"))
    return True
