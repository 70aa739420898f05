"""The MCP server: tools/list from the tool table filtered by backend capabilities, and
tools/call = validate -> the tool's handler (one RPC) -> text + structuredContent, errors mapped once.
"""

from __future__ import annotations

import time
from typing import Any

import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError

from gateway.client import SearchClient
from gateway.errors import error_result, unexpected_result
from gateway.redact import preview
from gateway.spec import ToolCall
from gateway.tools import BY_NAME, ToolSpec, advertised
from gateway.validation import validate_arguments
from mnemo import __version__ as VERSION
from mnemo.config import Settings
from mnemo.errors import MnemoError
from mnemo.logs import get_logger
from mnemo.v1 import search_pb2

log = get_logger(__name__)

CAPABILITIES_TTL_S = 5.0
# What a healthy stack serves even before it says so: used only when the backend cannot be
# asked (it is starting, or down for good); calls then start it or report UNAVAILABLE.
CORE_CAPABILITIES = frozenset({"search", "mem_search", "tool_uses", "write", "work_state", "context"})


class Gateway:
    """Holds no business state: a client, a short-lived capability cache, the startup task."""

    def __init__(self, settings: Settings, client: SearchClient | None = None):
        self.settings = settings
        self.client = client or SearchClient(settings, on_restart=self.invalidate_capabilities)
        self._caps: frozenset[str] | None = None
        self._caps_at = 0.0

    def invalidate_capabilities(self) -> None:
        self._caps = None

    async def capabilities(self) -> frozenset[str]:
        if self._caps is not None and time.monotonic() - self._caps_at < CAPABILITIES_TTL_S:
            return self._caps
        # No waiting for the background start-up check: a refused call starts the stack
        # itself (under the same spawn lock) and retries once.
        try:
            reply: search_pb2.GetCapabilitiesResponse = await self.client.call(
                lambda stub: stub.GetCapabilities, search_pb2.GetCapabilitiesRequest()
            )
        except MnemoError as err:
            log.warning("capabilities_unavailable", error=str(err))
            return CORE_CAPABILITIES
        self._caps, self._caps_at = frozenset(reply.capabilities), time.monotonic()
        return self._caps

    # -- MCP handlers ------------------------------------------------------------------
    async def list_tools(self, ctx: Any, params: Any) -> types.ListToolsResult:
        caps = await self.capabilities()
        return types.ListToolsResult(tools=[to_mcp_tool(spec) for spec in advertised(set(caps))])

    async def call_tool(self, ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        spec = BY_NAME.get(params.name)
        if spec is None:
            raise MCPError(types.INVALID_PARAMS,
                           f"Unknown tool: {preview(params.name)}. Call tools/list for the tools.")
        arguments = dict(params.arguments or {})
        started = time.perf_counter()
        try:
            arguments = validate_arguments(spec.name, arguments, spec.byte_limits)
            call = ToolCall(self.client, ctx.session.report_progress, self.settings.heartbeat_interval_s)
            output = await spec.handler(call, arguments)
        except MnemoError as err:
            log.info("tool_error", tool=spec.name, code=err.code, error=err.message)
            return error_result(err)
        except Exception as exc:  # noqa: BLE001 - the one place a crash becomes a result
            return unexpected_result(spec.name, exc)
        log.debug("tool_ok", tool=spec.name, ms=round((time.perf_counter() - started) * 1000, 2))
        structured = output.structured if spec.output_schema is not None else None
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=output.text)], structured_content=structured
        )


def to_mcp_tool(spec: ToolSpec) -> types.Tool:
    annotations = types.ToolAnnotations.model_validate(spec.annotations) if spec.annotations else None
    return types.Tool(
        name=spec.name,
        description=spec.description,
        input_schema=spec.input_schema,
        output_schema=spec.output_schema,
        annotations=annotations,
    )


def build_server(gateway: Gateway) -> Server:
    return Server(
        "mnemo",
        version=VERSION,
        instructions="Persistent memory of earlier coding sessions. Use mem_search for all memory search.",
        on_list_tools=gateway.list_tools,
        on_call_tool=gateway.call_tool,
    )
