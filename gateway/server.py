"""The MCP server: one session of JSON-RPC messages in, replies and notifications out.

Everything it says is generated: `initialize` from the protocol versions below and the
server's name, version and instructions; `tools/list` from the tool table (gateway/tools.py,
each entry by `tool_entry`) filtered by profile and backend capabilities (gateway/core.py);
`tools/call` results by the core. The MCP SDK is the oracle in tests
(tests/e2e/test_gateway_sdk_oracle.py): the SDK's server built from the same table answers
the same frames the same way, for every protocol version it negotiates.

Methods: `initialize` (the client's protocol version when it is one of PROTOCOL_VERSIONS,
else the latest), `ping`, `tools/list`, `tools/call`; the cancellation notification. Any other
method is "Method not found" (-32601, data = the method); tools/list and tools/call before
initialize, and params of the wrong shape, are "Invalid request parameters" (-32602), as the
SDK answers them. One difference is left on purpose: the SDK checks the params of an MCP method
it does not serve against the spec first (completion/complete without its fields is -32602
there), where this server says "Method not found" whatever the params; no client sends those
methods to a server that declared no such capability. A frame that is no JSON-RPC message is answered by the frame guard
(gateway/frames.py). A request the client cancels is not answered (the MCP spec); every
other request gets exactly one reply. The transport (gateway/stdio.py) hands lines in with
`receive` and takes whole lines out through `send`; at EOF it awaits `drain`.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

from gateway.core import Gateway, UnknownTool
from gateway.frames import INVALID_PARAMS, METHOD_NOT_FOUND, Frame, error_reply, judge_bytes
from gateway.prime import PrimeRelay
from gateway.redact import shorten
from gateway.spec import ToolSpec
from gateway.tools import QUERY_CORPUS_TIMEOUT_S
from mnemo import __version__ as VERSION
from mnemo.logs import get_logger

log = get_logger(__name__)

# The versions the MCP SDK negotiates in its handshake (mcp_types.version, pinned by the oracle
# test): a client asking for one of them gets it, any other client the latest.
PROTOCOL_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
LATEST_PROTOCOL_VERSION = PROTOCOL_VERSIONS[-1]
SERVER_NAME = "mnemo"
INSTRUCTIONS = "Persistent memory of earlier coding sessions. Use mem_search for all memory search."
INVALID_PARAMS_MESSAGE = "Invalid request parameters"
CLOSED_MESSAGE = "Connection closed: stdin ended before this request finished"
# How long requests running at EOF may take to finish: the longest unary deadline a tool has,
# and a little more (each call is bounded by its own deadline anyway; this is a backstop).
EOF_GRACE_S = QUERY_CORPUS_TIMEOUT_S + 5.0
RequestKey = tuple[type, Any]  # 1 and "1" are different ids


def negotiate(requested: str) -> str:
    return requested if requested in PROTOCOL_VERSIONS else LATEST_PROTOCOL_VERSION


def initialize_result(version: str) -> Frame:
    """The InitializeResult: the tools capability declares listChanged (the list follows the
    running stack, gateway/core.py), and nothing else is served."""
    return {
        "protocolVersion": version,
        "capabilities": {"tools": {"listChanged": True}},
        "serverInfo": {"name": SERVER_NAME, "version": VERSION},
        "instructions": INSTRUCTIONS,
    }


def tool_entry(spec: ToolSpec, structured: bool = False) -> Frame:
    """The tool as tools/list declares it. An outputSchema obliges every result to carry
    structuredContent (MCP), so it is declared only when the gateway sends structure
    (setting mcp_structured_content)."""
    entry: Frame = {"name": spec.name, "description": spec.description, "inputSchema": spec.input_schema}
    if structured and spec.output_schema is not None:
        entry["outputSchema"] = spec.output_schema
    if spec.annotations:
        entry["annotations"] = spec.annotations
    return entry


def host_view(specs: list[ToolSpec], structured: bool = False) -> list[Frame]:
    """The tools array of tools/list exactly as the host receives it; its JSON size is the context cost."""
    return [tool_entry(spec, structured) for spec in specs]


class Refused(Exception):
    """A request answered with a JSON-RPC error instead of a result."""

    def __init__(self, code: int, message: str, data: Any = None):
        super().__init__(message)
        self.code, self.message, self.data = code, message, data


def _invalid_params() -> Refused:
    return Refused(INVALID_PARAMS, INVALID_PARAMS_MESSAGE, "")


class Session:
    """One client's session over the gateway's core. `send` takes one whole line (bytes with
    its newline) and must not block: the transport writes it."""

    def __init__(self, gateway: Gateway, send: Callable[[bytes], None]):
        self.gateway, self.send = gateway, send
        self.version: str | None = None  # None until initialize is answered
        self.running: dict[RequestKey, asyncio.Task[None]] = {}
        self.cancelled: set[RequestKey] = set()
        self.jobs: set[RequestKey] = set()  # running corpus jobs: cancelled, not awaited, at EOF
        self.eof_grace_s = EOF_GRACE_S
        gateway.attach(self._list_changed)

    # -- frames in -----------------------------------------------------------------------
    def receive(self, raw: bytes) -> None:
        """One line from the client (without its newline)."""
        verdict = judge_bytes(raw)
        verdict.log()
        for reply in verdict.replies:
            self._write(reply)
        message = verdict.message
        if message is None or not isinstance(message.get("method"), str):
            return  # refused, or a response: this server sends no requests, so nothing to match
        method, params = message["method"], message.get("params")
        if "id" not in message:
            self._notified(method, params)
            return
        request_id = message["id"]
        key = _key(request_id)
        task = asyncio.ensure_future(self._answer(request_id, method, params or {}))
        self.running[key] = task
        if method == "tools/call" and self._is_job(params):
            self.jobs.add(key)
        task.add_done_callback(lambda done: self._finished(key, request_id, done))

    def _notified(self, method: str, params: Frame | None) -> None:
        if method == "notifications/cancelled" and isinstance(params, dict):
            key = _key(params.get("requestId"))
            task = self.running.get(key)
            if task is not None:
                self.cancelled.add(key)
                task.cancel()
        # initialized, progress, roots/list_changed and the rest need nothing from this server

    async def drain(self) -> None:
        """At EOF: a corpus job stops with its gRPC call at once (its progress has no reader);
        every other running request finishes and is answered (docs/gateway.md), or, past
        eof_grace_s, is cancelled and answered CLOSED_MESSAGE."""
        for key in self.jobs & set(self.running):
            self.running[key].cancel()
        running = list(self.running.values())
        if not running:
            return
        _, late = await asyncio.wait(running, timeout=self.eof_grace_s)
        for task in late:
            task.cancel()
        if late:
            await asyncio.wait(late)

    def close(self) -> None:
        """The session is over (stdout broke, or the process stops): nothing more will be sent."""
        for task in list(self.running.values()):
            task.cancel()

    # -- requests ------------------------------------------------------------------------
    def _is_job(self, params: Any) -> bool:
        """Whether a tools/call runs a corpus job (the prime relay streams progress for minutes)."""
        name = params.get("name") if isinstance(params, dict) else None
        spec = self.gateway.by_name.get(name) if isinstance(name, str) else None
        return spec is not None and isinstance(spec.handler, PrimeRelay)

    def _finished(self, key: RequestKey, request_id: Any, task: asyncio.Task[None]) -> None:
        """A cancelled request is answered here, not in _answer: a task cancelled before its
        first step never runs its own except clause, and it still owes the client a reply."""
        self.running.pop(key, None)
        self.jobs.discard(key)
        by_client = key in self.cancelled
        self.cancelled.discard(key)
        if task.cancelled() and not by_client:
            self._write(error_reply(request_id, -32000, CLOSED_MESSAGE))

    async def _answer(self, request_id: Any, method: str, params: Frame) -> None:
        try:
            result = await self._result(method, params)
        except Refused as refused:
            self._write(error_reply(request_id, refused.code, refused.message, refused.data))
            return
        except Exception as exc:  # noqa: BLE001 - a request always gets its reply
            log.error("request_failed", method=shorten(method, 40), exc_info=exc)
            self._write(error_reply(request_id, -32603, "Internal error"))
            return
        self._write({"jsonrpc": "2.0", "id": request_id, "result": result})

    async def _result(self, method: str, params: Frame) -> Frame:
        if method == "initialize":
            return self._initialize(params)
        if method == "ping":
            return {}
        if method not in ("tools/list", "tools/call"):
            raise Refused(METHOD_NOT_FOUND, "Method not found", method)
        if self.version is None or not isinstance(params.get("_meta", {}), dict):  # as the SDK answers them
            raise _invalid_params()
        if method == "tools/call":
            return await self._call_tool(params)
        if not isinstance(params.get("cursor"), str | None):
            raise _invalid_params()
        return {"tools": [tool_entry(spec, self.gateway.structured) for spec in await self.gateway.list_tools()]}

    def _initialize(self, params: Frame) -> Frame:
        """The client's protocol version when this server speaks it, else the latest."""
        info, version = params.get("clientInfo"), params.get("protocolVersion")
        if not (
            isinstance(version, str)
            and isinstance(params.get("capabilities"), dict)
            and isinstance(info, dict)
            and isinstance(info.get("name"), str)
            and isinstance(info.get("version"), str)
        ):
            raise _invalid_params()
        self.version = negotiate(version)
        return initialize_result(self.version)

    async def _call_tool(self, params: Frame) -> Frame:
        name, arguments = params.get("name"), params.get("arguments")
        if not isinstance(name, str) or not isinstance(arguments, dict | None):
            raise _invalid_params()
        token = _progress_token(params)

        async def progress(done: float, total: float | None, message: str | None) -> None:
            if token is not None:
                self._notify(
                    "notifications/progress",
                    {"progressToken": token, "progress": done, **_present(total=total, message=message)},
                )

        try:
            result = await self.gateway.call_tool(name, dict(arguments or {}), progress)
        except UnknownTool as unknown:
            raise Refused(INVALID_PARAMS, str(unknown)) from None
        return result.wire()

    # -- frames out ----------------------------------------------------------------------
    async def _list_changed(self) -> None:
        self._notify("notifications/tools/list_changed", None)

    def _notify(self, method: str, params: Frame | None) -> None:
        self._write({"jsonrpc": "2.0", "method": method, **({"params": params} if params is not None else {})})

    def _write(self, frame: Frame) -> None:
        # A lone surrogate in a text cannot be written as UTF-8; it becomes U+FFFD, not a crash.
        line = json.dumps(frame, ensure_ascii=False, separators=(",", ":"))
        self.send(line.encode("utf-8", "replace") + b"\n")


def _key(request_id: Any) -> RequestKey:
    return type(request_id), request_id


def _progress_token(params: Frame) -> str | int | None:
    """params._meta.progressToken, as the SDK reads it (a bool is no token)."""
    meta = params.get("_meta")
    token = meta.get("progressToken") if isinstance(meta, dict) else None
    return token if isinstance(token, str | int) and not isinstance(token, bool) else None


def _present(**values: Any) -> Frame:
    return {name: value for name, value in values.items() if value is not None}
