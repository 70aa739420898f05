"""Lines off the wire, for both transports (gateway/stdio.py for the SDK, gateway/session.py
after a fast start): the size cap, the bytes the fast start read past its last whole line, and
the guard's verdicts in the log. No SDK import: the gateway's own session runs without it.
"""

from __future__ import annotations

from typing import Protocol

from gateway.frames import INVALID_REQUEST, Verdict, error_reply, recover_id
from gateway.redact import shorten
from mnemo.logs import get_logger

log = get_logger(__name__)

# Larger than any honest request (a 4 MB argument still reaches validation and gets a
# field-naming error); a longer line is answered and skipped in chunks.
MAX_FRAME_BYTES = 16 * 1024 * 1024
_SKIP_CHUNK = 1024 * 1024


class LineReader(Protocol):
    def readline(self, size: int = -1, /) -> bytes: ...


class Prefixed:
    """The wire, after the bytes the fast phase read past its last whole line."""

    def __init__(self, prefix: bytes, wire: LineReader):
        self.prefix, self.wire = prefix, wire

    def readline(self, size: int = -1, /) -> bytes:
        if not self.prefix:
            return self.wire.readline(size)
        limit = len(self.prefix) + 1 if size < 0 else size
        newline = self.prefix.find(b"\n", 0, limit)
        if newline >= 0 or len(self.prefix) >= limit:
            cut = newline + 1 if newline >= 0 else limit
            line, self.prefix = self.prefix[:cut], self.prefix[cut:]
            return line
        line, self.prefix = self.prefix, b""
        return line + self.wire.readline(size - len(line) if size >= 0 else -1)


def read_line(wire: LineReader) -> bytes | None:
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


def too_large(raw: bytes) -> Verdict:
    request_id = recover_id(raw[:4096].decode("utf-8", "replace"))
    reason = f"Invalid Request: the frame is larger than {MAX_FRAME_BYTES} bytes"
    return Verdict(replies=[error_reply(request_id, INVALID_REQUEST, reason)])


def log_verdict(verdict: Verdict) -> None:
    """What the guard dropped or refused, in the log (bounded: never the whole frame)."""
    for reason in verdict.dropped:
        log.warning("frame_dropped", reason=shorten(reason, 200))
    for reply in verdict.replies:
        log.warning("frame_refused", id=shorten(str(reply.id), 40), code=reply.error.code,
                    reason=shorten(reply.error.message, 200))
