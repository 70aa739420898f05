"""A private stack for a test module: store_svc, vector_svc and search_svc in a fresh home."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import grpc

from mnemo.config import ensure_private_dirs, load_settings, with_overrides
from mnemo.grpc_client import connect, open_channel
from mnemo.v1 import store_pb2_grpc, vector_pb2_grpc
from tests.conftest import start_service


@contextmanager
def private_stack(**overrides: Any) -> Iterator[SimpleNamespace]:
    """The three services (hash embedder, fast vector polling) and clients of them, all stopped and
    the home removed on exit. Yields home, settings, the service token's `store` and `vector`
    clients, the services' addresses (`store_addr`, `vector_addr`, `search_addr`), and
    `channel(address, token)`, which opens a channel closed on exit (as is any added to `channels`)."""
    home = Path(tempfile.mkdtemp(prefix="mnemo-"))
    base = load_settings({"home": str(home)}, environ={})
    ensure_private_dirs(base)
    settings = with_overrides(base, embedder="hash", vector_poll_ms=50, log_level="warning", **overrides)
    started = [start_service(name, settings) for name in ("store", "vector", "search")]
    store = connect(settings, "store", store_pb2_grpc.StoreServiceStub)
    vector = connect(settings, "vector", vector_pb2_grpc.VectorServiceStub)
    channels: list[grpc.Channel] = []

    def channel(address: str, token: str = "") -> grpc.Channel:
        opened = open_channel(address, auth_token=token)
        channels.append(opened)
        return opened

    try:
        yield SimpleNamespace(home=home, settings=settings, store=store, vector=vector, channel=channel,
                              channels=channels, store_addr=started[0][0].address,
                              vector_addr=started[1][0].address, search_addr=started[2][0].address)
    finally:
        for opened in channels:
            opened.close()
        store.close()
        vector.close()
        for handle, on_stop in reversed(started):
            handle.stop(0)
            on_stop()
        shutil.rmtree(home, ignore_errors=True)
