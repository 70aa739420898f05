"""A minimal gRPC-unary client over cleartext HTTP/2 on a Unix socket, standard library only.

Why: a hook is a fresh interpreter per event, and `import grpc` alone costs more than the
whole latency budget of a hook (bench/hooks.py prints it). Hooks on the default local
path (Unix socket, no token, no TLS) send their few unary calls through this client;
everything else, and any reply this client cannot read, goes through grpc proper
(capture.client falls back; every hook write is idempotent, so a repeat is safe).

Scope, deliberately small: one connection, sequential unary calls, no compression. It
sends headers as HPACK literals and never decodes the server's headers: a call succeeds
when the stream ends after exactly one response message; a stream that ends without one
(a gRPC error is sent as trailers only), RST_STREAM or GOAWAY raise CallFailed, and the
caller retries through grpc to learn the status. Flow control: the client advertises a
2 GiB receive window, and sends within the server's windows, waiting for WINDOW_UPDATE.
"""

from __future__ import annotations

import contextlib
import socket
import struct

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
DATA, HEADERS, RST_STREAM, SETTINGS, PING, GOAWAY, WINDOW_UPDATE, CONTINUATION = 0, 1, 3, 4, 6, 7, 8, 9
END_STREAM, ACK, END_HEADERS, PADDED = 0x1, 0x1, 0x4, 0x8
SETTINGS_INITIAL_WINDOW_SIZE, SETTINGS_MAX_FRAME_SIZE, SETTINGS_ENABLE_PUSH = 0x4, 0x5, 0x2
BIG_WINDOW = 2**31 - 1


class Refused(Exception):
    """Nothing listens at the socket: no server saw anything."""


class CallFailed(Exception):
    """The call did not produce one response message (or the connection broke)."""


class H2Channel:
    def __init__(self, socket_path: str, timeout: float):
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._sock.settimeout(timeout)
        try:
            self._sock.connect(socket_path)
        except (FileNotFoundError, ConnectionRefusedError) as err:
            self._sock.close()
            raise Refused(str(err)) from None
        self._buffer = b""
        self._next_stream = 1
        self._conn_window = 65535
        self._stream_window: dict[int, int] = {}
        self._peer_initial_window = 65535
        self._peer_max_frame = 16384
        settings = struct.pack(">HI", SETTINGS_ENABLE_PUSH, 0) + struct.pack(
            ">HI", SETTINGS_INITIAL_WINDOW_SIZE, BIG_WINDOW
        )
        self._sock.sendall(
            PREFACE
            + _frame(SETTINGS, 0, 0, settings)
            + _frame(WINDOW_UPDATE, 0, 0, struct.pack(">I", BIG_WINDOW - 65535))
        )

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._sock.close()

    def unary(self, path: str, request: bytes, timeout: float) -> bytes:
        """Call `path` (/package.Service/Method) with a serialized request; the serialized reply."""
        stream = self._next_stream
        self._next_stream += 2
        self._stream_window[stream] = self._peer_initial_window
        headers = _hpack(
            [
                (":method", "POST"),
                (":scheme", "http"),
                (":path", path),
                (":authority", "localhost"),
                ("content-type", "application/grpc"),
                ("te", "trailers"),
                ("grpc-timeout", f"{max(1, int(timeout * 1000))}m"),
                ("user-agent", "mnemo"),
            ]
        )
        try:
            self._sock.sendall(_frame(HEADERS, END_HEADERS, stream, headers))
            self._send_data(stream, b"\x00" + struct.pack(">I", len(request)) + request)
            return self._read_reply(stream)
        except OSError as err:
            raise CallFailed(f"connection: {err}") from None

    # -----------------------------------------------------------------------------------
    def _send_data(self, stream: int, body: bytes) -> None:
        offset = 0
        while True:
            room = min(self._conn_window, self._stream_window[stream], self._peer_max_frame)
            if room <= 0 and offset < len(body):
                self._handle(self._read_frame(), stream, None)  # wait for a WINDOW_UPDATE
                continue
            chunk = body[offset : offset + room]
            offset += len(chunk)
            last = offset >= len(body)
            self._sock.sendall(_frame(DATA, END_STREAM if last else 0, stream, chunk))
            self._conn_window -= len(chunk)
            self._stream_window[stream] -= len(chunk)
            if last:
                return

    def _read_reply(self, stream: int) -> bytes:
        body = bytearray()
        while True:
            frame = self._read_frame()
            if self._handle(frame, stream, body):
                break
        if len(body) < 5 or body[0] != 0:
            raise CallFailed("no response message (the server answered with an error status)")
        (length,) = struct.unpack(">I", body[1:5])
        if len(body) != 5 + length:
            raise CallFailed("the response is not exactly one message")
        return bytes(body[5:])

    def _handle(self, frame: tuple[int, int, int, bytes], stream: int, body: bytearray | None) -> bool:
        """Process one frame; True when `stream` has ended."""
        kind, flags, stream_id, payload = frame
        if kind == SETTINGS and not flags & ACK:
            self._apply_settings(payload)
            self._sock.sendall(_frame(SETTINGS, ACK, 0, b""))
        elif kind == PING and not flags & ACK:
            self._sock.sendall(_frame(PING, ACK, 0, payload))
        elif kind == WINDOW_UPDATE:
            (increment,) = struct.unpack(">I", payload[:4])
            if stream_id == 0:
                self._conn_window += increment & 0x7FFFFFFF
            elif stream_id in self._stream_window:
                self._stream_window[stream_id] += increment & 0x7FFFFFFF
        elif kind == GOAWAY:
            raise CallFailed("the server closed the connection (GOAWAY)")
        elif kind == RST_STREAM and stream_id == stream:
            raise CallFailed("the server reset the stream")
        elif kind == DATA and stream_id == stream:
            if body is None:
                raise CallFailed("response data before the request was sent")
            if flags & PADDED:
                payload = payload[1 : len(payload) - payload[0]]
            body.extend(payload)
        elif kind == HEADERS and stream_id == stream and body is None and flags & END_STREAM:
            raise CallFailed("the server answered before the request was complete")
        return stream_id == stream and kind in (DATA, HEADERS, CONTINUATION) and bool(flags & END_STREAM)

    def _apply_settings(self, payload: bytes) -> None:
        for i in range(0, len(payload) - 5, 6):
            key, value = struct.unpack(">HI", payload[i : i + 6])
            if key == SETTINGS_INITIAL_WINDOW_SIZE:
                delta = value - self._peer_initial_window
                self._peer_initial_window = value
                for sid in self._stream_window:
                    self._stream_window[sid] += delta
            elif key == SETTINGS_MAX_FRAME_SIZE:
                self._peer_max_frame = value

    def _read_frame(self) -> tuple[int, int, int, bytes]:
        header = self._read_exactly(9)
        length = int.from_bytes(header[:3], "big")
        kind, flags = header[3], header[4]
        (stream_id,) = struct.unpack(">I", header[5:9])
        return kind, flags, stream_id & 0x7FFFFFFF, self._read_exactly(length)

    def _read_exactly(self, n: int) -> bytes:
        while len(self._buffer) < n:
            chunk = self._sock.recv(max(65536, n - len(self._buffer)))
            if not chunk:
                raise CallFailed("the server closed the connection")
            self._buffer += chunk
        data, self._buffer = self._buffer[:n], self._buffer[n:]
        return data


def _frame(kind: int, flags: int, stream: int, payload: bytes) -> bytes:
    return len(payload).to_bytes(3, "big") + bytes((kind, flags)) + struct.pack(">I", stream) + payload


def _hpack(headers: list[tuple[str, str]]) -> bytes:
    """Literal header fields without indexing, new names, no Huffman (RFC 7541 6.2.2)."""
    out = bytearray()
    for name, value in headers:
        out.append(0x00)
        for text in (name.encode(), value.encode()):
            out += _hpack_int(len(text), 7)
            out += text
    return bytes(out)


def _hpack_int(value: int, prefix_bits: int) -> bytes:
    limit = (1 << prefix_bits) - 1
    if value < limit:
        return bytes((value,))
    out = bytearray((limit,))
    value -= limit
    while value >= 128:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)
