"""The gateway's own MCP server answers as the MCP SDK's server does (the oracle,
tests/service/gateway/sdk_oracle.py): the same frames to both, over the same core and a real
stack, give the same wire output, for every protocol version the SDK negotiates, every
profile, every tool, and the requests a server must refuse."""

from __future__ import annotations

import anyio
import pytest
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, LATEST_HANDSHAKE_VERSION

from gateway.observation_tools import OBSERVATION_TOOLS
from gateway.server import LATEST_PROTOCOL_VERSION, PROTOCOL_VERSIONS
from gateway.tools import ALL_TOOLS
from mnemo.config import with_overrides
from tests.service.gateway.jsonrpc import INITIALIZED, initialize, request
from tests.service.gateway.mcp_support import minimal_arguments
from tests.service.gateway.sdk_oracle import OnceGateway, own_conversation, sdk_conversation

pytestmark = pytest.mark.e2e


def _both(gateway: OnceGateway, frames: list[dict]) -> tuple[list[dict], list[dict]]:
    async def scenario() -> tuple[list[dict], list[dict]]:
        own = await own_conversation(gateway, frames)
        return own, await sdk_conversation(gateway, frames)

    return anyio.run(scenario)


def _by_id(frames: list[dict]) -> dict:
    """Replies by id (requests may be answered in any order), notifications apart."""
    return {repr(frame["id"]): frame for frame in frames if "method" not in frame}


def test_the_protocol_versions_are_those_the_sdk_negotiates():
    assert tuple(HANDSHAKE_PROTOCOL_VERSIONS) == PROTOCOL_VERSIONS
    assert LATEST_PROTOCOL_VERSION == LATEST_HANDSHAKE_VERSION


def test_the_handshake_and_the_tool_list_are_the_sdks_for_every_version_profile_and_structure(stack):
    # Every version the SDK negotiates, the new stateless era's, and one the SDK does not know.
    versions = [*HANDSHAKE_PROTOCOL_VERSIONS, "2026-07-28", "1999-01-01"]
    for profile in ("default", "legacy", "all"):
        for structured in (False, True):
            settings = with_overrides(stack, mcp_profile=profile, mcp_structured_content=structured)
            gateway = OnceGateway(settings)
            for version in versions if (profile, structured) == ("default", False) else [LATEST_HANDSHAKE_VERSION]:
                frames = [
                    initialize(1, version),
                    INITIALIZED,
                    request(2, "ping"),
                    request(3, "tools/list"),
                    request(4, "tools/list", {"cursor": "next"}),
                ]
                own, sdk = _both(gateway, frames)
                assert own == sdk, (profile, structured, version)
                assert own[0]["result"]["protocolVersion"] == (
                    version if version in PROTOCOL_VERSIONS else LATEST_PROTOCOL_VERSION
                )
                assert len(own[2]["result"]["tools"]) == len(settings_tools(profile))


def settings_tools(profile: str) -> list:
    from gateway.tools import profile_tools

    return profile_tools(profile)


def test_every_tool_answers_as_through_the_sdk(stack):
    """Each tool called with its smallest valid arguments, with arguments its schema refuses,
    and by names no tool has (a server-runtime tool in the local runtime, an unknown name)."""
    gateway = OnceGateway(with_overrides(stack, mcp_profile="all", mcp_structured_content=True))
    frames = [initialize("init", LATEST_HANDSHAKE_VERSION), INITIALIZED]
    for n, spec in enumerate([*ALL_TOOLS, *OBSERVATION_TOOLS]):
        arguments = minimal_arguments(spec.name) if spec in ALL_TOOLS else {}
        frames.append(request(f"ok-{n}", "tools/call", {"name": spec.name, "arguments": arguments}))
        frames.append(request(f"bad-{n}", "tools/call", {"name": spec.name, "arguments": {"limit": "many"}}))
    frames.append(request("unknown", "tools/call", {"name": "no_such_tool", "arguments": {}}))
    frames.append(request("no-arguments", "tools/call", {"name": "important_workflow"}))
    own, sdk = _both(gateway, frames)
    assert _by_id(own) == _by_id(sdk)
    assert len(_by_id(own)) == len(frames) - 1


def test_requests_a_server_refuses_are_refused_as_the_sdk_refuses_them(stack):
    gateway = OnceGateway(stack)
    frames = [
        request("early-list", "tools/list"),
        request("early-call", "tools/call", {"name": "important_workflow", "arguments": {}}),
        request("early-ping", "ping"),
        request("unknown-method", "no/such/method"),
        request("resources", "resources/list"),
        initialize("odd", LATEST_HANDSHAKE_VERSION, capabilities="none"),
        initialize("no-info", LATEST_HANDSHAKE_VERSION, clientInfo={"name": "x"}),
        initialize("init", "2025-06-18"),
        INITIALIZED,
        initialize("again", LATEST_HANDSHAKE_VERSION),
        request("name-not-text", "tools/call", {"name": 5, "arguments": {}}),
        request("arguments-not-object", "tools/call", {"name": "search", "arguments": [1]}),
        request("cursor-not-text", "tools/list", {"cursor": 5}),
        request("cursor-null", "tools/list", {"cursor": None}),
        request("meta-not-object", "tools/call", {"name": "important_workflow", "_meta": "x"}),
        request("progress-token-bool", "tools/call", {"name": "important_workflow", "_meta": {"progressToken": True}}),
        request("ping-params", "ping", {"x": 1}),
        request("set-level", "logging/setLevel", {"level": "info"}),
        request("prompts", "prompts/list"),
    ]
    own, sdk = _both(gateway, frames)
    assert _by_id(own) == _by_id(sdk)
    assert own[0]["error"]["code"] == -32602 and own[3]["error"] == {
        "code": -32601,
        "message": "Method not found",
        "data": "no/such/method",
    }
