"""The stdio transport: the server's session (gateway/server.py) over the process's stdin and stdout.

While serving it claims the standard streams: the wire is read and written through private
duplicates, fd 0 points at the null device and fd 1 at stderr, so a child process or a stray
print can neither eat a frame nor corrupt one. Lines are read by one thread and written by
another, each handing over through a queue, so a client that stops reading never blocks the
event loop, and replies never interleave within a line. A line longer than MAX_FRAME_BYTES is
refused without being held in memory whole. At EOF the client has said all it will: the
requests still running finish and are answered before the session ends (Session.drain).
"""

from __future__ import annotations

import asyncio
import fcntl
import os
import queue
import threading
from collections.abc import Callable
from typing import Any, BinaryIO, Protocol

from gateway.core import Gateway
from gateway.frames import MAX_FRAME_BYTES
from gateway.server import Session
from mnemo.logs import get_logger

log = get_logger(__name__)

_SKIP_CHUNK = 1024 * 1024
WRITER_DRAIN_S = 5.0  # a client that stopped reading must not keep the process alive


class LineReader(Protocol):
    def readline(self, size: int = -1, /) -> bytes: ...


class Claim:
    """fd 0 and fd 1 diverted while the gateway serves; restored on release."""

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


async def serve_stdio(gateway: Gateway) -> str:
    """Serve one session on stdin/stdout until EOF (or a broken stdout); returns why it ended."""
    loop = asyncio.get_running_loop()
    claim = Claim()
    inbox: asyncio.Queue[bytes | None] = asyncio.Queue()
    outbox: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
    broken: asyncio.Future[Any] = loop.create_future()
    wire_in = os.fdopen(claim.wire_in, "rb", buffering=64 * 1024, closefd=False)
    wire_out = os.fdopen(claim.wire_out, "wb", closefd=False)
    _daemon(_read_lines, wire_in, lambda raw: loop.call_soon_threadsafe(inbox.put_nowait, raw))
    writer = _daemon(_write_lines, wire_out, outbox, lambda: loop.call_soon_threadsafe(_settle, broken))
    session = Session(gateway, outbox.put)
    try:
        reader: asyncio.Future[Any] = asyncio.ensure_future(_deliver(inbox, session))
        await asyncio.wait([reader, broken], return_when=asyncio.FIRST_COMPLETED)
        if broken.done():
            reader.cancel()
            return "stdout closed"
        await session.drain()
        return "stdin closed"
    finally:
        session.close()
        outbox.put(None)  # the replies queued so far reach stdout before the process exits
        await asyncio.to_thread(writer.join, WRITER_DRAIN_S)
        claim.release()


async def _deliver(inbox: asyncio.Queue[bytes | None], session: Session) -> None:
    while (raw := await inbox.get()) is not None:
        try:
            session.receive(raw)
        except Exception as exc:  # noqa: BLE001 - one bad frame must not end the session
            log.error("frame_failed", exc_info=exc)


def _settle(future: asyncio.Future[Any]) -> None:
    if not future.done():
        future.set_result("stdout closed")


def _daemon(target: Callable[..., None], *args: Any) -> threading.Thread:
    thread = threading.Thread(target=target, args=args, daemon=True, name=f"mcp-{target.__name__.strip('_')}")
    thread.start()
    return thread


def read_line(wire: LineReader) -> bytes | None:
    """The next line without its newline, None at EOF. A line past MAX_FRAME_BYTES comes back
    as its first MAX_FRAME_BYTES + 1 bytes (the guard refuses it), the rest read and thrown away."""
    line = wire.readline(MAX_FRAME_BYTES + 1)
    if not line:
        return None
    if len(line) > MAX_FRAME_BYTES and not line.endswith(b"\n"):
        while True:
            rest = wire.readline(_SKIP_CHUNK)
            if not rest or rest.endswith(b"\n"):
                break
    return line.rstrip(b"\r\n")


def _read_lines(wire: LineReader, deliver: Callable[[bytes | None], Any]) -> None:
    """Every line to `deliver`, then None at EOF (or when stdin fails)."""
    try:
        while (raw := read_line(wire)) is not None:
            deliver(raw)
    except (OSError, ValueError) as exc:
        log.warning("stdin_failed", error=repr(exc))
    deliver(None)


def _write_lines(wire: BinaryIO, outbox: queue.SimpleQueue[bytes | None], broken: Callable[[], Any]) -> None:
    """Write each queued line whole, in order, until None; a failed write ends the session."""
    while (data := outbox.get()) is not None:
        try:
            wire.write(data)
            wire.flush()
        except (OSError, ValueError) as exc:
            log.warning("stdout_failed", error=repr(exc))
            broken()
            return
