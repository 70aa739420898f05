"""Small pieces both gRPC sides share, kept free of heavy imports (grpc, structlog)."""

from __future__ import annotations

import contextvars
import ipaddress
from collections.abc import Callable

REQUEST_ID_KEY = "x-request-id"
# VectorService.Query's trailing metadata: the index's watermark read before the query (whatever it
# covers, the query searched) and its embedding model, so a search needs no Status call of its own.
INDEX_WATERMARK_KEY = "mnemo-index-watermark"
INDEX_MODEL_KEY = "mnemo-index-model"

# Seconds left of the RPC being served on this thread (None outside an RPC). Clients read it
# so a downstream call never outlives the caller's deadline (gRPC Python does not propagate it).
time_remaining: contextvars.ContextVar[Callable[[], float | None] | None] = contextvars.ContextVar(
    "time_remaining", default=None
)


def remaining_budget() -> float | None:
    """Seconds left of the current RPC's deadline, or None when there is none."""
    probe = time_remaining.get()
    return probe() if probe else None


def is_loopback(address: str) -> bool:
    """True for unix sockets and loopback TCP addresses (`127.0.0.1:PORT`, `[::1]:PORT`, `localhost:PORT`)."""
    if address.startswith("unix:"):
        return True
    host = address.rsplit(":", 1)[0].strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
