"""The MCP session after a fast start, served without the SDK.

Once the fast start (gateway/fast.py) has answered `initialize` from the SDK's recorded answers,
the rest of a stdio session is a handful of methods: `tools/call`, `tools/list`, `ping`, the
cancellation notification, and errors for everything else. Serving them here keeps the SDK's
per-call cost (pydantic models both ways, a thread hop per line read and per line written,
its middleware) off every tool call, and the SDK out of the gateway's memory.

Answers keep the SDK's shapes: results as the SDK dumps them (gateway.spec.ToolResult.wire,
the recorded tools/list entries), "Method not found" (-32601, data = the method) for a method
it does not serve, "Invalid request parameters" (-32602) for tools/call params of the wrong
shape, the same text for an unknown tool. A frame that is not a plain JSON-RPC message goes
through the frame guard (gateway/frames.py), as on the SDK path. A request the client cancels
is not answered (as the MCP spec says); every other request gets exactly one reply. At EOF the
client has said all it will: the requests still running finish and are answered before the
session ends (each within its own deadline, and EOF_GRACE_S at most); a corpus job is cancelled
at once (its progress has no reader), answered with an error.

Lines are read by one thread and written by another, each handing over through a queue, so a
client that stops reading never blocks the event loop.
"""

from __future__ import annotations

import asyncio
import json
import os
import queue
import threading
from collections.abc import Callable
from typing import Any

from gateway.core import Gateway, UnknownTool
from gateway.fast import Handover
from gateway.frames import INVALID_PARAMS, METHOD_NOT_FOUND, Verdict, judge, plain_message
from gateway.lines import MAX_FRAME_BYTES, LineReader, Prefixed, log_verdict, read_line, too_large
from gateway.prime import PrimeRelay
from gateway.redact import shorten
from gateway.tools import QUERY_CORPUS_TIMEOUT_S
from mnemo.logs import get_logger

log = get_logger(__name__)

INVALID_PARAMS_MESSAGE = "Invalid request parameters"
CLOSED_MESSAGE = "Connection closed: stdin ended before this request finished"
SERVED = frozenset({"tools/call", "tools/list"})  # besides initialize and ping
# How long requests running at EOF may take to finish: the longest unary deadline a tool has,
# and a little more (each call is bounded by its own deadline anyway; this is a backstop).
EOF_GRACE_S = QUERY_CORPUS_TIMEOUT_S + 5.0
RequestKey = tuple[type, Any]  # 1 and "1" are different ids
WRITER_DRAIN_S = 5.0  # a client that stopped reading must not keep the process alive


class Session:
    def __init__(self, gateway: Gateway, handover: Handover):
        self.gateway, self.handover, self.answers = gateway, handover, handover.answers
        self.version = handover.version  # None until initialize is answered
        self.outbox: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self.running: dict[RequestKey, asyncio.Task[None]] = {}
        self.cancelled: set[RequestKey] = set()
        self.jobs: set[RequestKey] = set()  # running corpus jobs: cancelled, not awaited, at EOF
        self.eof_grace_s = EOF_GRACE_S
        self.writer: threading.Thread | None = None

    async def run(self) -> str:
        """Serve until EOF (or a broken stdout); returns why the session ended."""
        loop = asyncio.get_running_loop()
        inbox: asyncio.Queue[bytes | None] = asyncio.Queue()
        ended = loop.create_future()
        wire_in: LineReader = os.fdopen(self.handover.claim.wire_in, "rb", buffering=64 * 1024, closefd=False)
        if self.handover.prefix:
            wire_in = Prefixed(self.handover.prefix, wire_in)
        _daemon(_read_lines, wire_in, lambda raw: loop.call_soon_threadsafe(inbox.put_nowait, raw))
        self.writer = _daemon(_write_lines, self.handover.wire_out, self.outbox,
                              lambda: loop.call_soon_threadsafe(_settle, ended, "stdout closed"))
        self.gateway.attach(self._list_changed)
        try:
            for raw in self.handover.pending:
                self._receive(raw)
            reader = asyncio.ensure_future(self._read(inbox))
            await asyncio.wait([reader, ended], return_when=asyncio.FIRST_COMPLETED)
            if ended.done():
                reader.cancel()
                return str(ended.result())
            await self._stop_running()
            return "stdin closed"
        finally:
            for task in list(self.running.values()):
                task.cancel()
            self.outbox.put(None)
            if self.writer is not None:  # the replies just queued reach stdout before the process exits
                await asyncio.to_thread(self.writer.join, WRITER_DRAIN_S)

    async def _read(self, inbox: asyncio.Queue[bytes | None]) -> None:
        while (raw := await inbox.get()) is not None:
            try:
                self._receive(raw)
            except Exception as exc:  # noqa: BLE001 - one bad frame must not end the session
                log.error("frame_failed", exc_info=exc)

    async def _stop_running(self) -> None:
        """At EOF: a corpus job stops with its gRPC call at once; every other running request
        finishes and is answered (docs/gateway.md), or, past eof_grace_s, is cancelled and
        answered CLOSED_MESSAGE."""
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

    # -- frames in -----------------------------------------------------------------------
    def _receive(self, raw: bytes) -> None:
        if len(raw) > MAX_FRAME_BYTES:
            self._refuse(too_large(raw))
            return
        text = raw.decode("utf-8", "replace")
        message = plain_message(text)
        if message is None or not {"method", "result", "error"} & set(message):
            self._refuse(judge(text))  # not a plain message: the guard says why (with the SDK's types)
            return
        method = message.get("method")
        if not isinstance(method, str):
            return  # a response: this server sends no requests, so there is nothing to match
        params = message.get("params")
        if "id" not in message:
            self._notified(method, params)
            return
        request_id = message["id"]
        key = _key(request_id)
        task = asyncio.ensure_future(self._answer(request_id, method, params))
        self.running[key] = task
        if method == "tools/call" and self._is_job(params):
            self.jobs.add(key)
        task.add_done_callback(lambda done: self._finished(key, request_id, done))

    def _refuse(self, verdict: Verdict) -> None:
        log_verdict(verdict)
        for reply in verdict.replies:
            self._send(reply.model_dump(by_alias=True, mode="json", exclude_unset=True))

    def _notified(self, method: str, params: dict[str, Any] | None) -> None:
        if method == "notifications/cancelled" and isinstance(params, dict):
            key = _key(params.get("requestId"))
            task = self.running.get(key)
            if task is not None:
                self.cancelled.add(key)
                task.cancel()
        # initialized, progress, roots/list_changed and the rest need nothing from this server

    # -- requests ------------------------------------------------------------------------
    def _is_job(self, params: Any) -> bool:
        """Whether a tools/call runs a corpus job (the prime relay streams progress for minutes)."""
        name = params.get("name") if isinstance(params, dict) else None
        spec = getattr(self.gateway, "by_name", {}).get(name) if isinstance(name, str) else None
        return spec is not None and isinstance(spec.handler, PrimeRelay)

    def _finished(self, key: RequestKey, request_id: Any, task: asyncio.Task[None]) -> None:
        """A cancelled request is answered here, not in _answer: a task cancelled before its
        first step never runs its own except clause, and it still owes the client a reply."""
        self.running.pop(key, None)
        self.jobs.discard(key)
        by_client = key in self.cancelled
        self.cancelled.discard(key)
        # A request the client cancelled gets no reply, as the MCP spec says; any other owes one.
        if task.cancelled() and not by_client:
            self._error(request_id, -32000, CLOSED_MESSAGE)

    async def _answer(self, request_id: Any, method: str, params: dict[str, Any] | None) -> None:
        try:
            result = await self._result(method, params or {})
        except _Refused as refused:
            self._error(request_id, refused.code, refused.message, refused.data)
            return
        except Exception as exc:  # noqa: BLE001 - a request always gets its reply
            log.error("request_failed", method=shorten(method, 40), exc_info=exc)
            self._error(request_id, -32603, "Internal error")
            return
        self._send({"jsonrpc": "2.0", "id": request_id, "result": result})

    async def _result(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method == "initialize":
            return self._initialize(params)
        if method == "ping":
            return self.answers.ping[self.version or self.answers.latest]
        if method not in SERVED:
            raise _Refused(METHOD_NOT_FOUND, "Method not found", method)
        if self.version is None:  # before initialize, as the SDK answers it
            raise _Refused(INVALID_PARAMS, INVALID_PARAMS_MESSAGE, "")
        if method == "tools/call":
            return await self._call_tool(params)
        tools = self.answers.tools[self.version]
        listed = [tools[spec.name] for spec in await self.gateway.list_tools()]
        return {**self.answers.tools_rest[self.version], "tools": listed}

    def _initialize(self, params: dict[str, Any]) -> dict[str, Any]:
        """The recorded answer for the version the client asks for (the latest when unknown)."""
        info, version = params.get("clientInfo"), params.get("protocolVersion")
        if not (isinstance(version, str) and isinstance(params.get("capabilities"), dict)
                and isinstance(info, dict) and isinstance(info.get("name"), str)
                and isinstance(info.get("version"), str)):
            raise _Refused(INVALID_PARAMS, INVALID_PARAMS_MESSAGE, "")
        self.version = self.answers.negotiate(version)
        return self.answers.initialize[self.version]

    async def _call_tool(self, params: dict[str, Any]) -> dict[str, Any]:
        name, arguments = params.get("name"), params.get("arguments")
        if not isinstance(name, str) or not isinstance(arguments, dict | None):
            raise _Refused(INVALID_PARAMS, INVALID_PARAMS_MESSAGE, "")
        token = _progress_token(params)

        async def progress(done: float, total: float | None, message: str | None) -> None:
            if token is not None:
                self._notify("notifications/progress", {"progressToken": token, "progress": done,
                                                        **_present(total=total, message=message)})

        try:
            result = await self.gateway.call_tool(name, dict(arguments or {}), progress)
        except UnknownTool as unknown:
            raise _Refused(INVALID_PARAMS, str(unknown)) from None
        return result.wire()

    # -- frames out ----------------------------------------------------------------------
    async def _list_changed(self) -> None:
        self._notify("notifications/tools/list_changed", None)

    def _notify(self, method: str, params: dict[str, Any] | None) -> None:
        self._send({"jsonrpc": "2.0", "method": method, **({"params": params} if params is not None else {})})

    def _error(self, request_id: Any, code: int, message: str, data: Any = None) -> None:
        error = {"code": code, "message": message, **({"data": data} if data is not None else {})}
        self._send({"jsonrpc": "2.0", "id": request_id, "error": error})

    def _send(self, frame: dict[str, Any]) -> None:
        # A lone surrogate in a text cannot be written as UTF-8; it becomes U+FFFD, not a crash.
        line = json.dumps(frame, ensure_ascii=False, separators=(",", ":"))
        self.outbox.put(line.encode("utf-8", "replace") + b"\n")


class _Refused(Exception):
    def __init__(self, code: int, message: str, data: Any = None):
        super().__init__(message)
        self.code, self.message, self.data = code, message, data


def _key(request_id: Any) -> RequestKey:
    return type(request_id), request_id


def _progress_token(params: dict[str, Any]) -> str | int | None:
    """params._meta.progressToken, as the SDK reads it (a bool is no token)."""
    meta = params.get("_meta")
    token = meta.get("progressToken") if isinstance(meta, dict) else None
    return token if isinstance(token, str | int) and not isinstance(token, bool) else None


def _present(**values: Any) -> dict[str, Any]:
    return {name: value for name, value in values.items() if value is not None}


def _settle(future: asyncio.Future[str], reason: str) -> None:
    if not future.done():
        future.set_result(reason)


def _daemon(target: Callable[..., None], *args: Any) -> threading.Thread:
    thread = threading.Thread(target=target, args=args, daemon=True, name=f"mcp-{target.__name__.strip('_')}")
    thread.start()
    return thread


def _read_lines(wire: LineReader, deliver: Callable[[bytes | None], Any]) -> None:
    """Every line to `deliver`, then None at EOF (or when stdin fails)."""
    try:
        while (raw := read_line(wire)) is not None:
            deliver(raw)
    except (OSError, ValueError) as exc:
        log.warning("stdin_failed", error=repr(exc))
    deliver(None)


def _write_lines(wire: Any, outbox: queue.SimpleQueue[bytes | None], broken: Callable[[], Any]) -> None:
    """Write each queued line whole, in order, until None; a failed write ends the session."""
    while (data := outbox.get()) is not None:
        try:
            wire.write(data)
            wire.flush()
        except (OSError, ValueError) as exc:
            log.warning("stdout_failed", error=repr(exc))
            broken()
            return
