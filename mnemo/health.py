"""A gRPC health check over a Unix socket with the standard library alone (no grpc import).

Why: the supervisor checks health and nothing else, and it stays up for as long as the stack
does, idle included; `import grpc` is most of its memory (about 44 against 21 MiB RSS,
measured). A local service listens on a Unix socket in cleartext and answers
/grpc.health.v1.Health/Check without a token (mnemo.grpc_server), so one HTTP/2 stream does.

Scope: one call per connection, cleartext HTTP/2, headers as HPACK literals, the server's
headers never decoded. SERVING is the reply message `08 01` (HealthCheckResponse.status = 1);
anything else (an error status sent as trailers only, a reset, a closed or refused socket,
the timeout) is not healthy. TCP and TLS addresses go through grpc (mnemo.grpc_client).
"""

from __future__ import annotations

import socket
import struct
import time

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
DATA, HEADERS, RST_STREAM, SETTINGS, PING, GOAWAY = 0, 1, 3, 4, 6, 7
END_STREAM, ACK, END_HEADERS, PADDED = 0x1, 0x1, 0x4, 0x8
CHECK_PATH = "/grpc.health.v1.Health/Check"
SERVING_REPLY = b"\x00\x00\x00\x00\x02\x08\x01"  # one uncompressed message: field 1 (status) = 1


def unix_healthy(path: str, timeout: float = 1.0) -> bool:
    """True when the server on the Unix socket `path` answers the health check SERVING."""
    deadline = time.monotonic() + timeout
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(max(0.001, timeout))
        sock.connect(path)
        headers = _hpack([(":method", "POST"), (":scheme", "http"), (":path", CHECK_PATH),
                          (":authority", "localhost"), ("content-type", "application/grpc"), ("te", "trailers"),
                          ("grpc-timeout", f"{max(1, int(timeout * 1000))}m")])
        sock.sendall(PREFACE + _frame(SETTINGS, 0, 0, b"") + _frame(HEADERS, END_HEADERS, 1, headers)
                     + _frame(DATA, END_STREAM, 1, b"\x00\x00\x00\x00\x00"))  # an empty HealthCheckRequest
        return _reply(_Reader(sock, deadline)) == SERVING_REPLY
    except (OSError, ValueError):
        return False
    finally:
        sock.close()


def _reply(reader: _Reader) -> bytes | None:
    """The body of stream 1 once it ends; None when the server reset it or went away."""
    body = bytearray()
    while True:
        kind, flags, stream, payload = reader.frame()
        if kind == SETTINGS and not flags & ACK:
            reader.sock.sendall(_frame(SETTINGS, ACK, 0, b""))
        elif kind == PING and not flags & ACK:
            reader.sock.sendall(_frame(PING, ACK, 0, payload))
        elif kind == GOAWAY or (kind == RST_STREAM and stream == 1):
            return None
        elif kind == DATA and stream == 1:
            body += payload[1: len(payload) - payload[0]] if flags & PADDED else payload
        if stream == 1 and kind in (DATA, HEADERS) and flags & END_STREAM:
            return bytes(body)


class _Reader:
    def __init__(self, sock: socket.socket, deadline: float):
        self.sock, self.deadline, self.buffer = sock, deadline, b""

    def frame(self) -> tuple[int, int, int, bytes]:
        header = self._exactly(9)
        length = int.from_bytes(header[:3], "big")
        (stream,) = struct.unpack(">I", header[5:9])
        return header[3], header[4], stream & 0x7FFFFFFF, self._exactly(length)

    def _exactly(self, n: int) -> bytes:
        while len(self.buffer) < n:
            left = self.deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("health check timed out")
            self.sock.settimeout(left)
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("the server closed the connection")
            self.buffer += chunk
        data, self.buffer = self.buffer[:n], self.buffer[n:]
        return data


def _frame(kind: int, flags: int, stream: int, payload: bytes) -> bytes:
    return len(payload).to_bytes(3, "big") + bytes((kind, flags)) + struct.pack(">I", stream) + payload


def _hpack(headers: list[tuple[str, str]]) -> bytes:
    """Literal header fields without indexing, new names, no Huffman (RFC 7541 6.2.2); every
    name and value here is shorter than 127 bytes, so each length is one byte."""
    out = bytearray()
    for name, value in headers:
        out.append(0x00)
        for text in (name.encode(), value.encode()):
            out.append(len(text))
            out += text
    return bytes(out)
