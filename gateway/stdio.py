"""The MCP SDK's stdio server with the frame guard in front: the transport of a session served
by the SDK (no handshake record: fast start switched off, the server runtime).

Like the SDK's transport it claims the standard streams while serving: the wire is read
and written through private duplicates, fd 0 points at the null device and fd 1 at
stderr, so a child process or a stray print can neither eat a frame nor corrupt one.
Unlike it, every line first goes through `gateway.frames.judge`, so a frame the SDK
would drop in silence gets its JSON-RPC error, and a line longer than MAX_FRAME_BYTES is
refused without being held in memory whole. One writer task owns stdout, so the guard's
replies and the server's never interleave within a line.
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


@asynccontextmanager
async def guarded_stdio_server() -> AsyncIterator[tuple[MemoryObjectReceiveStream, MemoryObjectSendStream]]:
    """(read_stream, write_stream) for `Server.run`, served over the process's stdin/stdout."""
    claim = Claim()
    wire_in: LineReader = os.fdopen(claim.wire_in, "rb", buffering=64 * 1024, closefd=False)
    wire_out = os.fdopen(claim.wire_out, "wb", closefd=False)
    to_server, from_guard = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    to_client, outgoing = anyio.create_memory_object_stream[SessionMessage](0)
    guard_replies = to_client.clone()  # the server may close its end; the guard keeps answering
    try:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(_read_frames, wire_in, to_server, guard_replies)
            tasks.start_soon(_write_frames, wire_out, outgoing)
            yield from_guard, to_client
            tasks.cancel_scope.cancel()
    finally:
        claim.release()


async def _read_frames(wire: LineReader, to_server: MemoryObjectSendStream, replies: MemoryObjectSendStream) -> None:
    async with to_server, replies:
        while True:
            raw = await anyio.to_thread.run_sync(read_line, wire, abandon_on_cancel=True)
            if raw is None:
                return  # EOF: closing to_server ends the session
            await _act_on(_judged(raw), to_server, replies)


def _judged(raw: bytes) -> Verdict:
    return too_large(raw) if len(raw) > MAX_FRAME_BYTES else judge(raw.decode("utf-8", "replace"))


async def _act_on(verdict: Verdict, to_server: MemoryObjectSendStream, replies: MemoryObjectSendStream) -> None:
    log_verdict(verdict)
    for reply in verdict.replies:
        await replies.send(SessionMessage(reply))
    if verdict.message is not None:
        await to_server.send(SessionMessage(verdict.message))


async def _write_frames(wire: BinaryIO, outgoing: MemoryObjectReceiveStream) -> None:
    async with outgoing:
        async for session_message in outgoing:
            message: types.JSONRPCMessage = session_message.message
            data = message.model_dump_json(by_alias=True, exclude_unset=True).encode() + b"\n"
            await anyio.to_thread.run_sync(_write_all, wire, data)


def _write_all(wire: BinaryIO, data: bytes) -> None:
    wire.write(data)  # a buffered writer writes everything, whatever the pipe takes at once
    wire.flush()
