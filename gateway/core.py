"""The gateway's core, below the MCP server (gateway/server.py): tools/list from the profile's
tool table filtered by backend capabilities, and tools/call = validate -> the tool's handler
(one RPC, or local code) -> text + structuredContent, errors mapped once (gateway/errors.py).

The list follows the running stack: a background check (`watch_capabilities`) asks search_svc
what it can do every few seconds and, when the advertised list changes (vector_svc died or
came back), has the transport send `notifications/tools/list_changed` so the host asks again.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from gateway.client import SearchClient
from gateway.errors import error_message, error_result, unexpected_result
from gateway.observation_tools import refused_locally, runtime_tools
from gateway.redact import preview
from gateway.spec import ProgressFn, ToolCall, ToolResult
from gateway.tools import ToolSpec, answered_tools, profile_tools
from gateway.validation import validate_arguments
from mnemo.config import Settings
from mnemo.errors import MnemoError
from mnemo.logs import get_logger
from mnemo.privacy import strip_private
from mnemo.v1 import search_pb2

log = get_logger(__name__)

CAPABILITIES_TTL_S = 5.0
# How often the background check asks for capabilities while a client is connected.
CAPABILITIES_WATCH_S = 5.0
# What a healthy stack serves even before it says so: used only when the backend cannot be
# asked (it is starting, or down for good); calls then start it or report UNAVAILABLE.
CORE_CAPABILITIES = frozenset({"search", "mem_search", "tool_uses", "write", "work_state", "context"})

Notify = Callable[[], Awaitable[None]]


class UnknownTool(Exception):
    """tools/call named no tool this gateway answers: a JSON-RPC INVALID_PARAMS error."""


class Gateway:
    """Holds no business state: a client, a short-lived capability cache, the startup task."""

    def __init__(self, settings: Settings, client: SearchClient | None = None):
        self.settings = settings
        # An unknown profile stops the start here; the server runtime adds its own tools.
        self.profile = runtime_tools(settings, profile_tools(settings.mcp_profile))
        self.by_name = {spec.name: spec for spec in answered_tools(self.profile)}
        # What the model receives is the text: Claude Code forwards structuredContent instead of
        # it whenever a result carries one, so structure is sent only to programs that ask for it.
        self.structured = settings.mcp_structured_content
        self.project_root = Path(settings.project_root).expanduser().resolve() if settings.project_root \
            else Path.cwd()
        self.client = client or SearchClient(settings, on_restart=self.invalidate_capabilities)
        self._caps: frozenset[str] | None = None
        self._caps_at = 0.0
        self._notify: Notify | None = None  # sends list_changed to the client, once it spoke
        self._listed: list[str] | None = None  # names last advertised to the client

    def invalidate_capabilities(self) -> None:
        self._caps = None

    def attach(self, notify: Notify) -> None:
        """The server's way to send notifications/tools/list_changed to the client."""
        self._notify = notify

    async def capabilities(self, *, start_stack: bool = True) -> frozenset[str]:
        if self._caps is not None and time.monotonic() - self._caps_at < CAPABILITIES_TTL_S:
            return self._caps
        # No waiting for the background start-up check: a refused call starts the stack
        # itself (under the same spawn lock) and retries once; the background watch does not
        # (a stack stopped on purpose stays stopped until a client needs it).
        try:
            reply: search_pb2.GetCapabilitiesResponse = await self.client.call(
                lambda stub: stub.GetCapabilities, search_pb2.GetCapabilitiesRequest(), start_stack=start_stack
            )
        except MnemoError as err:
            log.warning("capabilities_unavailable", error=str(err))
            return CORE_CAPABILITIES
        self._caps, self._caps_at = frozenset(reply.capabilities), time.monotonic()
        return self._caps

    async def advertised(self, *, start_stack: bool = True) -> list[ToolSpec]:
        capabilities = await self.capabilities(start_stack=start_stack)
        return [spec for spec in self.profile if spec.served_by(capabilities)]

    # -- the list follows the stack ------------------------------------------------------
    async def watch_capabilities(self, interval: float = CAPABILITIES_WATCH_S) -> None:
        """Forever: refresh the capabilities and tell the client when its tool list is stale."""
        while True:
            await asyncio.sleep(interval)
            self.invalidate_capabilities()
            await self.notify_if_changed()

    async def notify_if_changed(self) -> bool:
        """Send notifications/tools/list_changed when the advertised names differ from the last
        list the client received; True when it was sent."""
        if self._notify is None or self._listed is None:
            return False  # the client has not listed the tools yet: nothing of its is stale
        names = [spec.name for spec in await self.advertised(start_stack=False)]
        if names == self._listed:
            return False
        log.info("tools_changed", added=sorted(set(names) - set(self._listed)),
                 removed=sorted(set(self._listed) - set(names)))
        self._listed = names
        try:
            await self._notify()
        except Exception as exc:  # noqa: BLE001 - a client gone mid-send ends the session elsewhere
            log.warning("list_changed_failed", error=repr(exc))
            return False
        return True

    # -- the two requests --------------------------------------------------------------
    async def list_tools(self) -> list[ToolSpec]:
        """The tools to list now; remembered as what the client last received."""
        tools = await self.advertised()
        self._listed = [spec.name for spec in tools]
        return tools

    async def call_tool(self, name: str, arguments: dict[str, Any], progress: ProgressFn) -> ToolResult:
        spec = self.by_name.get(name)
        if spec is None and (refused := refused_locally(name, self.settings)) is not None:
            return error_result(refused)
        if spec is None:
            raise UnknownTool(f"Unknown tool: {preview(name)}. Call tools/list for the tools.")
        arguments, ignored = split_unknown(spec, arguments)
        started = time.perf_counter()
        try:
            arguments = validate_arguments(spec.name, arguments, spec.byte_limits)
            call = ToolCall(self.client, progress, self.settings.heartbeat_interval_s, self.project_root)
            output = await spec.handler(call, arguments)
        except MnemoError as err:
            err = spec.public_error(err)
            log.info("tool_error", tool=spec.name, code=err.code, error=error_message(err))
            return error_result(err, spec)
        except Exception as exc:  # noqa: BLE001 - the one place a crash becomes a result
            return unexpected_result(spec.name, exc)
        log.debug("tool_ok", tool=spec.name, ms=round((time.perf_counter() - started) * 1000, 2))
        structured = output.structured if self.structured and spec.output_schema is not None else None
        # The last boundary before the model: a reply may quote what the caller typed (a query, a
        # question, a project), and <private> regions never reach a reply (records are stored
        # without them; this covers every echo at once, whichever service or tool wrote it).
        return ToolResult(private_free(output.text) + ignored_note(ignored), structured)


def private_free(text: str) -> str:
    """`text` without <private> regions; as it was (whitespace too) when it holds none."""
    if "<" not in text:
        return text
    stripped = strip_private(text)
    return text if stripped == text.strip() else stripped


def split_unknown(spec: ToolSpec, arguments: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """For a lenient tool, (the declared arguments, the names of the others); the others are
    left in place for a strict tool, whose validation refuses them by name."""
    if not spec.lenient:
        return arguments, []
    declared = spec.input_schema.get("properties", {})
    ignored = sorted(name for name in arguments if name not in declared)
    return {name: value for name, value in arguments.items() if name in declared}, ignored


IGNORED_SHOWN = 10


def ignored_note(ignored: list[str]) -> str:
    """One line naming the unknown arguments a lenient tool ignored (each name shortened)."""
    if not ignored:
        return ""
    shown = ", ".join(preview(name, 40) for name in ignored[:IGNORED_SHOWN])
    more = f" (and {len(ignored) - IGNORED_SHOWN} more)" if len(ignored) > IGNORED_SHOWN else ""
    return f"\n\nIgnored unknown arguments: {shown}{more}."
