"""The gateway's stdio transport: the MCP SDK's stdio server with the frame guard in front.

Like the SDK's transport it claims the standard streams while serving: the wire is read
and written through private duplicates, fd 0 points at the null device and fd 1 at
stderr, so a child process or a stray print can neither eat a frame nor corrupt one.
Unlike it, every line first goes through `gateway.frames.judge`, so a frame the SDK
would drop in silence gets its JSON-RPC error, and a line longer than MAX_FRAME_BYTES is
refused without being held in memory whole. One writer task owns stdout, so the guard's
replies and the server's never interleave within a line.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import BinaryIO

import anyio
import mcp_types as types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage

from gateway.frames import INVALID_REQUEST, Verdict, error_reply, judge, recover_id
from gateway.redact import shorten
from mnemo.logs import get_logger

log = get_logger(__name__)

# Larger than any honest request (a 4 MB argument still reaches validation and gets a
# field-naming error); a longer line is answered and skipped in chunks.
MAX_FRAME_BYTES = 16 * 1024 * 1024
_SKIP_CHUNK = 1024 * 1024


class _Claim:
    """fd 0 and fd 1 diverted for as long as the transport serves; restored on release."""

    def __init__(self) -> None:
        self.wire_in = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
        self.wire_out = fcntl.fcntl(1, fcntl.F_DUPFD_CLOEXEC, 3)
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.close(devnull)
        os.dup2(2, 1)

    def release(self) -> None:
        # The descriptors stay open: a worker thread may still block reading wire_in, and
        # closing it would let the number be reused under that thread.
        os.dup2(self.wire_in, 0)
        os.dup2(self.wire_out, 1)


@asynccontextmanager
async def guarded_stdio_server() -> AsyncIterator[tuple[MemoryObjectReceiveStream, MemoryObjectSendStream]]:
    """(read_stream, write_stream) for `Server.run`, served over the process's stdin/stdout."""
    claim = _Claim()
    wire_in = os.fdopen(claim.wire_in, "rb", buffering=64 * 1024, closefd=False)
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


async def _read_frames(wire: BinaryIO, to_server: MemoryObjectSendStream, replies: MemoryObjectSendStream) -> None:
    async with to_server, replies:
        while True:
            raw = await anyio.to_thread.run_sync(_read_line, wire, abandon_on_cancel=True)
            if raw is None:
                return  # EOF: closing to_server ends the session
            verdict = _too_large(raw) if len(raw) > MAX_FRAME_BYTES else judge(raw.decode("utf-8", "replace"))
            await _act_on(verdict, to_server, replies)


async def _act_on(verdict: Verdict, to_server: MemoryObjectSendStream, replies: MemoryObjectSendStream) -> None:
    for reason in verdict.dropped:
        log.warning("frame_dropped", reason=shorten(reason, 200))
    for reply in verdict.replies:
        log.warning("frame_refused", id=shorten(str(reply.id), 40), code=reply.error.code,
                    reason=shorten(reply.error.message, 200))
        await replies.send(SessionMessage(reply))
    if verdict.message is not None:
        await to_server.send(SessionMessage(verdict.message))


def _read_line(wire: BinaryIO) -> bytes | None:
    """The next line without its newline, None at EOF. A line past MAX_FRAME_BYTES comes back
    as its first MAX_FRAME_BYTES + 1 bytes, the rest read and thrown away."""
    line = wire.readline(MAX_FRAME_BYTES + 1)
    if not line:
        return None
    if len(line) > MAX_FRAME_BYTES and not line.endswith(b"\n"):
        while True:
            rest = wire.readline(_SKIP_CHUNK)
            if not rest or rest.endswith(b"\n"):
                break
    return line.rstrip(b"\r\n")


def _too_large(raw: bytes) -> Verdict:
    request_id = recover_id(raw[:4096].decode("utf-8", "replace"))
    reason = f"Invalid Request: the frame is larger than {MAX_FRAME_BYTES} bytes"
    return Verdict(replies=[error_reply(request_id, INVALID_REQUEST, reason)])


async def _write_frames(wire: BinaryIO, outgoing: MemoryObjectReceiveStream) -> None:
    async with outgoing:
        async for session_message in outgoing:
            message: types.JSONRPCMessage = session_message.message
            data = message.model_dump_json(by_alias=True, exclude_unset=True).encode() + b"\n"
            await anyio.to_thread.run_sync(_write_all, wire, data)


def _write_all(wire: BinaryIO, data: bytes) -> None:
    wire.write(data)  # a buffered writer writes everything, whatever the pipe takes at once
    wire.flush()
