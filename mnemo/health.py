"""A gRPC health check over a Unix socket with the standard library alone (no grpc import).

Why: the supervisor checks health and nothing else, and it stays up for as long as the stack
does, idle included; `import grpc` is most of its memory (about 44 against 21 MiB RSS,
measured). A local service listens on a Unix socket in cleartext and answers
/grpc.health.v1.Health/Check without a token (mnemo.grpc_server), so one call over the hooks'
lean HTTP/2 channel (mnemo.h2c) does. Anything but SERVING (an error status, a reset, a closed
or refused socket, the timeout) is not healthy. TCP and TLS addresses go through grpc.
"""

from __future__ import annotations

from mnemo.h2c import CallFailed, H2Channel, Refused

CHECK_PATH = "/grpc.health.v1.Health/Check"
SERVING = b"\x08\x01"  # HealthCheckResponse.status = 1; the request is empty (check the server)


def unix_healthy(path: str, timeout: float = 1.0) -> bool:
    """True when the server on the Unix socket `path` answers the health check SERVING."""
    try:
        channel = H2Channel(path, timeout)
    except (Refused, OSError):
        return False
    try:
        return channel.unary(CHECK_PATH, b"", timeout) == SERVING
    except (CallFailed, OSError, ValueError):
        return False
    finally:
        channel.close()
