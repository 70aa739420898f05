"""JSON-RPC frames the gateway tests send, as objects (json.dumps them for a raw wire)."""

from __future__ import annotations

from typing import Any

INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def initialize(request_id: Any, version: str, **params: Any) -> dict:
    """An initialize request as a host writes it (`params` replace or add fields)."""
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "initialize",
        "params": {
            "protocolVersion": version,
            "capabilities": {"roots": {"listChanged": True}},
            "clientInfo": {"name": "gateway-test", "version": "1"},
            **params,
        },
    }


def request(request_id: Any, method: str, params: dict | None = None) -> dict:
    frame: dict = {"jsonrpc": "2.0", "id": request_id, "method": method}
    return frame if params is None else {**frame, "params": params}
