"""The MCP SDK's server around the gateway's core (gateway/core.py): what serves a session
that did not start fast (no handshake record for this code yet, or an initialize the fast start
leaves to the SDK), and what records the handshake answers the fast start replays
(gateway/handshake.py).
"""

from __future__ import annotations

from typing import Any

import mcp_types as types
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.shared.exceptions import MCPError

from gateway.core import INSTRUCTIONS, Gateway, UnknownTool
from gateway.tools import ToolSpec
from mnemo import __version__ as VERSION

# The tools capability declares listChanged: the list follows the running stack.
NOTIFICATIONS = NotificationOptions(tools_changed=True)


def to_mcp_tool(spec: ToolSpec, structured: bool = False) -> types.Tool:
    """The tool as tools/list declares it. An outputSchema obliges every result to carry
    structuredContent (MCP), so it is declared only when the gateway sends structure
    (setting mcp_structured_content)."""
    annotations = types.ToolAnnotations.model_validate(spec.annotations) if spec.annotations else None
    return types.Tool(
        name=spec.name,
        description=spec.description,
        input_schema=spec.input_schema,
        output_schema=spec.output_schema if structured else None,
        annotations=annotations,
    )


def host_view(specs: list[ToolSpec], structured: bool = False) -> list[dict[str, Any]]:
    """The tools array of tools/list exactly as the host receives it: the SDK's wire dump of
    the ListToolsResult (aliases, JSON mode, no nulls). Its JSON size is the context cost."""
    listed = types.ListToolsResult(tools=[to_mcp_tool(spec, structured) for spec in specs])
    tools: list[dict[str, Any]] = listed.model_dump(by_alias=True, mode="json", exclude_none=True)["tools"]
    return tools


def build_server(gateway: Gateway) -> Server:
    def attach(ctx: Any) -> None:
        # As soon as the client spoke: after a fast start it may call nothing for a while, and
        # list_changed must still reach it.
        gateway.attach(ctx.session.send_tool_list_changed)

    async def initialized(ctx: Any, params: Any) -> None:
        attach(ctx)

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        attach(ctx)
        return types.ListToolsResult(tools=[to_mcp_tool(spec, gateway.structured)
                                            for spec in await gateway.list_tools()])

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        attach(ctx)
        try:
            result = await gateway.call_tool(params.name, dict(params.arguments or {}), ctx.session.report_progress)
        except UnknownTool as unknown:
            raise MCPError(types.INVALID_PARAMS, str(unknown)) from None
        return types.CallToolResult(content=[types.TextContent(type="text", text=result.text)],
                                    structured_content=result.structured, is_error=result.is_error)

    server = Server("mnemo", version=VERSION, instructions=INSTRUCTIONS,
                    on_list_tools=list_tools, on_call_tool=call_tool)
    server.add_notification_handler("notifications/initialized", types.NotificationParams, initialized)
    return server
