"""The gateway's stdio transport: the MCP SDK's stdio server with the frame guard in front.

Like the SDK's transport it claims the standard streams while serving: the wire is read
and written through private duplicates, fd 0 points at the null device and fd 1 at
stderr, so a child process or a stray print can neither eat a frame nor corrupt one.
Unlike it, every line first goes through `gateway.frames.judge`, so a frame the SDK
would drop in silence gets its JSON-RPC error, and a line longer than MAX_FRAME_BYTES is
refused without being held in memory whole. One writer task owns stdout, so the guard's
replies and the server's never interleave within a line.

After a fast start (gateway/fast.py) it continues from the handover: the replayed handshake
first (the reply to the replayed initialize is dropped: the client has its answer already),
then the frames read but not answered, then the rest of the wire.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, BinaryIO

import anyio
import mcp_types as types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage

from gateway.fast import Claim, Handover
from gateway.frames import Verdict, judge
from gateway.lines import MAX_FRAME_BYTES, LineReader, Prefixed, log_verdict, read_line, too_large
from gateway.redact import shorten
from mnemo.logs import get_logger

log = get_logger(__name__)

@asynccontextmanager
async def guarded_stdio_server(
    handover: Handover | None = None,
) -> AsyncIterator[tuple[MemoryObjectReceiveStream, MemoryObjectSendStream]]:
    """(read_stream, write_stream) for `Server.run`, served over the process's stdin/stdout."""
    claim = handover.claim if handover else Claim()
    wire_in: LineReader = os.fdopen(claim.wire_in, "rb", buffering=64 * 1024, closefd=False)
    wire_out = handover.wire_out if handover else os.fdopen(claim.wire_out, "wb", closefd=False)
    if handover is not None and handover.prefix:
        wire_in = Prefixed(handover.prefix, wire_in)
    to_server, from_guard = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    to_client, outgoing = anyio.create_memory_object_stream[SessionMessage](0)
    guard_replies = to_client.clone()  # the server may close its end; the guard keeps answering
    try:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(_read_frames, wire_in, to_server, guard_replies, handover)
            tasks.start_soon(_write_frames, wire_out, outgoing, handover.replay_id if handover else None)
            yield from_guard, to_client
            tasks.cancel_scope.cancel()
    finally:
        claim.release()


async def _read_frames(wire: LineReader, to_server: MemoryObjectSendStream, replies: MemoryObjectSendStream,
                       handover: Handover | None = None) -> None:
    async with to_server, replies:
        if handover is not None:
            for message in handover.replay:
                await to_server.send(SessionMessage(types.jsonrpc_message_adapter.validate_python(message)))
            for line in handover.pending:
                await _act_on(_judged(line), to_server, replies)
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


async def _write_frames(wire: BinaryIO, outgoing: MemoryObjectReceiveStream, drop_id: str | None = None) -> None:
    async with outgoing:
        async for session_message in outgoing:
            message: types.JSONRPCMessage = session_message.message
            if drop_id is not None and _reply_id(message) == drop_id:
                drop_id = None  # the replayed initialize: the fast start answered the client already
                if isinstance(message, types.JSONRPCError):
                    log.warning("replayed_initialize_refused", error=shorten(message.error.message, 200))
                continue
            data = message.model_dump_json(by_alias=True, exclude_unset=True).encode() + b"\n"
            await anyio.to_thread.run_sync(_write_all, wire, data)


def _reply_id(message: Any) -> Any:
    return getattr(message, "id", None) if isinstance(message, types.JSONRPCResponse | types.JSONRPCError) else None


def _write_all(wire: BinaryIO, data: bytes) -> None:
    wire.write(data)  # a buffered writer writes everything, whatever the pipe takes at once
    wire.flush()
