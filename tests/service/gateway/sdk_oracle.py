"""The MCP SDK as the oracle of the gateway's own server: the SDK's low-level server built from
the same tool table and the same core, and one client that drives either server in memory
with the same frames and returns what each put on the wire.

The SDK server here is what the gateway served before it owned its server (the tool table
turned into the SDK's `types.Tool`, results into `types.CallToolResult`); the wire form of a
reply is the SDK stdio transport's (`model_dump_json(by_alias=True, exclude_unset=True)`).
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage

from gateway.core import Gateway, UnknownTool
from gateway.server import INSTRUCTIONS, SERVER_NAME, Session
from gateway.spec import ToolResult, ToolSpec
from mnemo import __version__ as VERSION

Frame = dict[str, Any]
REPLY_TIMEOUT_S = 60.0


def sdk_tool(spec: ToolSpec, structured: bool) -> types.Tool:
    annotations = types.ToolAnnotations.model_validate(spec.annotations) if spec.annotations else None
    return types.Tool(
        name=spec.name,
        description=spec.description,
        input_schema=spec.input_schema,
        output_schema=spec.output_schema if structured else None,
        annotations=annotations,
    )


def sdk_server(gateway: Gateway) -> Server:
    """The SDK's server over the gateway's core."""

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        gateway.attach(ctx.session.send_tool_list_changed)
        return types.ListToolsResult(tools=[sdk_tool(spec, gateway.structured) for spec in await gateway.list_tools()])

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        try:
            result = await gateway.call_tool(params.name, dict(params.arguments or {}), ctx.session.report_progress)
        except UnknownTool as unknown:
            raise MCPError(types.INVALID_PARAMS, str(unknown)) from None
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=result.text)],
            structured_content=result.structured,
            is_error=result.is_error,
        )

    return Server(
        SERVER_NAME, version=VERSION, instructions=INSTRUCTIONS, on_list_tools=list_tools, on_call_tool=call_tool
    )


class OnceGateway(Gateway):
    """The core with each distinct tool call run once against the real stack: a repeat gets the
    first result, so both servers wrap the same result (a write, a continuation token or a
    timestamp would differ between two runs) and the comparison is of the servers alone."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.results: dict[str, ToolResult] = {}

    async def call_tool(self, name: str, arguments: dict[str, Any], progress: Any) -> ToolResult:
        key = json.dumps([name, arguments], sort_keys=True)
        if key not in self.results:
            self.results[key] = await super().call_tool(name, arguments, progress)
        return self.results[key]


def _requests(frames: list[Frame]) -> int:
    return sum(1 for frame in frames if "id" in frame)


async def sdk_conversation(gateway: Gateway, frames: list[Frame]) -> list[Frame]:
    """The SDK server's wire output for `frames`, sent one at a time (each request's reply
    awaited before the next frame), replies and notifications in the order written."""
    server = sdk_server(gateway)
    options = server.create_initialization_options(NotificationOptions(tools_changed=True))
    to_server, server_in = anyio.create_memory_object_stream[SessionMessage | Exception](len(frames) + 1)
    server_out, from_server = anyio.create_memory_object_stream[SessionMessage](64)
    out: list[Frame] = []
    async with to_server, server_in, server_out, from_server, anyio.create_task_group() as tasks:
        tasks.start_soon(server.run, server_in, server_out, options)
        for frame in frames:
            await to_server.send(SessionMessage(types.jsonrpc_message_adapter.validate_python(frame)))
            if "id" in frame:
                await _until_answered(from_server, frame["id"], out)
        await to_server.aclose()
    return out


async def _until_answered(from_server: Any, request_id: Any, out: list[Frame]) -> None:
    with anyio.fail_after(REPLY_TIMEOUT_S):
        while True:
            message = (await from_server.receive()).message
            out.append(json.loads(message.model_dump_json(by_alias=True, exclude_unset=True)))
            if out[-1].get("id") == request_id and "method" not in out[-1]:
                return


async def own_conversation(gateway: Gateway, frames: list[Frame]) -> list[Frame]:
    """The gateway's own server's wire output for the same frames, sent the same way."""
    lines: list[bytes] = []
    session = Session(gateway, lines.append)
    for frame in frames:
        session.receive(json.dumps(frame).encode())
        if "id" in frame:
            with anyio.fail_after(REPLY_TIMEOUT_S):
                while not any(_answers(line, frame["id"]) for line in lines):
                    await anyio.sleep(0.01)
    await session.drain()
    return [json.loads(line) for line in lines]


def _answers(line: bytes, request_id: Any) -> bool:
    frame = json.loads(line)
    return frame.get("id") == request_id and "method" not in frame
