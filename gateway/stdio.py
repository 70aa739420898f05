"""The MCP SDK's stdio server with the frame guard in front: the transport of a session served
by the SDK (no handshake record: fast start switched off, the server runtime).

Like the SDK's transport it claims the standard streams while serving: the wire is read
and written through private duplicates, fd 0 points at the null device and fd 1 at
stderr, so a child process or a stray print can neither eat a frame nor corrupt one.
Unlike it, every line first goes through `gateway.frames.judge`, so a frame the SDK
would drop in silence gets its JSON-RPC error, and a line longer than MAX_FRAME_BYTES is
refused without being held in memory whole. One writer task owns stdout, so the guard's
replies and the server's never interleave within a line. At EOF the server's input stays open
until every request it was given is answered (at most EOF_GRACE_S), as in the gateway's own
session: the SDK would otherwise cancel them all with "Connection closed".
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import BinaryIO

import anyio
import mcp_types as types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage

from gateway.fast import Claim
from gateway.frames import Verdict, judge
from gateway.lines import MAX_FRAME_BYTES, LineReader, log_verdict, read_line, too_large
from gateway.prime import PrimeRelay
from gateway.session import EOF_GRACE_S
from gateway.tools import BY_NAME


@asynccontextmanager
async def guarded_stdio_server() -> AsyncIterator[tuple[MemoryObjectReceiveStream, MemoryObjectSendStream]]:
    """(read_stream, write_stream) for `Server.run`, served over the process's stdin/stdout."""
    claim = Claim()
    wire_in: LineReader = os.fdopen(claim.wire_in, "rb", buffering=64 * 1024, closefd=False)
    wire_out = os.fdopen(claim.wire_out, "wb", closefd=False)
    to_server, from_guard = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    to_client, outgoing = anyio.create_memory_object_stream[SessionMessage](0)
    guard_replies = to_client.clone()  # the server may close its end; the guard keeps answering
    unanswered = Unanswered()
    try:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(_read_frames, wire_in, to_server, guard_replies, unanswered)
            tasks.start_soon(_write_frames, wire_out, outgoing, unanswered)
            yield from_guard, to_client
            tasks.cancel_scope.cancel()
    finally:
        claim.release()


class Unanswered:
    """The ids of requests passed to the server and not yet answered (or cancelled by the client)."""

    def __init__(self) -> None:
        self.ids: set[tuple[type, object]] = set()
        self.changed = anyio.Event()

    def note(self, message: types.JSONRPCMessage, *, outgoing: bool) -> None:
        if outgoing and isinstance(message, types.JSONRPCResponse | types.JSONRPCError):
            self._drop(message.id)
        elif not outgoing and isinstance(message, types.JSONRPCRequest) and not _is_job(message):
            self.ids.add((type(message.id), message.id))
        elif not outgoing and isinstance(message, types.JSONRPCNotification) \
                and message.method == "notifications/cancelled" and isinstance(message.params, dict):
            self._drop(message.params.get("requestId"))

    def _drop(self, request_id: object) -> None:
        self.ids.discard((type(request_id), request_id))
        self.changed.set()
        self.changed = anyio.Event()

    async def drained(self) -> None:
        while self.ids:
            await self.changed.wait()


def _is_job(request: types.JSONRPCRequest) -> bool:
    """A corpus job (the prime relay) is not waited for at EOF: nobody reads its progress, and
    the SDK cancels it with its gRPC call, as the gateway's own session does."""
    params = request.params if isinstance(request.params, dict) else {}
    name = params.get("name")
    spec = BY_NAME.get(name) if request.method == "tools/call" and isinstance(name, str) else None
    return spec is not None and isinstance(spec.handler, PrimeRelay)


async def _read_frames(wire: LineReader, to_server: MemoryObjectSendStream, replies: MemoryObjectSendStream,
                       unanswered: Unanswered) -> None:
    async with to_server, replies:
        while True:
            raw = await anyio.to_thread.run_sync(read_line, wire, abandon_on_cancel=True)
            if raw is None:
                # EOF: closing to_server ends the session, and the SDK cancels what still runs;
                # the requests it was given finish and are answered first.
                with anyio.move_on_after(EOF_GRACE_S):
                    await unanswered.drained()
                return
            verdict = _judged(raw)
            if verdict.message is not None:
                unanswered.note(verdict.message, outgoing=False)
            await _act_on(verdict, to_server, replies)


def _judged(raw: bytes) -> Verdict:
    return too_large(raw) if len(raw) > MAX_FRAME_BYTES else judge(raw.decode("utf-8", "replace"))


async def _act_on(verdict: Verdict, to_server: MemoryObjectSendStream, replies: MemoryObjectSendStream) -> None:
    log_verdict(verdict)
    for reply in verdict.replies:
        await replies.send(SessionMessage(reply))
    if verdict.message is not None:
        await to_server.send(SessionMessage(verdict.message))


async def _write_frames(wire: BinaryIO, outgoing: MemoryObjectReceiveStream, unanswered: Unanswered) -> None:
    async with outgoing:
        async for session_message in outgoing:
            message: types.JSONRPCMessage = session_message.message
            data = message.model_dump_json(by_alias=True, exclude_unset=True).encode() + b"\n"
            await anyio.to_thread.run_sync(_write_all, wire, data)
            unanswered.note(message, outgoing=True)


def _write_all(wire: BinaryIO, data: bytes) -> None:
    wire.write(data)  # a buffered writer writes everything, whatever the pipe takes at once
    wire.flush()
