"""The services search_svc depends on, as typed clients with deadlines."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from mnemo import wake
from mnemo.config import Settings
from mnemo.errors import Unavailable
from mnemo.grpc_client import ServiceClient, connect
from mnemo.v1 import store_pb2_grpc, vector_pb2_grpc

Reply = TypeVar("Reply")
# How long a call that has no lexical fallback (the corpus tools) waits for a resting vector_svc
# to start: its start takes seconds (Chroma opens, the follower resumes).
VECTOR_WAKE_WAIT_S = 60.0

StoreClient = ServiceClient[store_pb2_grpc.StoreServiceStub]
VectorClient = ServiceClient[vector_pb2_grpc.VectorServiceStub]


@dataclass
class Backend:
    """store is required; vector may be unreachable at any moment (callers degrade to lexical)."""

    store: StoreClient
    vector: VectorClient
    # Where a local supervisor is asked to wake a vector_svc that idled out (mnemo/wake.py);
    # None when vector_svc is remote or off: then nobody here can start it.
    run_dir: Path | None = None

    @classmethod
    def connect(cls, settings: Settings) -> Backend:
        local_vector = settings.vector == "on" and not settings.vector_addr
        return cls(
            # With user tokens, store calls present the caller's token (search_svc.access).
            store=connect(settings, "store", store_pb2_grpc.StoreServiceStub, forward_caller=settings.user_tokens),
            vector=connect(settings, "vector", vector_pb2_grpc.VectorServiceStub),
            run_dir=settings.run_dir if local_vector else None,
        )

    def wake_vector(self) -> bool:
        """Ask for a vector_svc that idled out; True while it rests or warms up (down on purpose)."""
        return self.run_dir is not None and wake.request(self.run_dir, "vector")

    def call_vector(self, method: Callable[..., Reply], request: Any) -> Reply:
        """`method(request)` on vector_svc; when it rests (idled out), wake it and wait for it once.
        For calls that have no lexical answer to give meanwhile (the corpus tools)."""
        try:
            return method(request)
        except Unavailable:
            if not self.wake_vector():
                raise
        return method(request, wait_for_ready=True, timeout=VECTOR_WAKE_WAIT_S)

    def vector_resting(self) -> bool:
        """True while vector_svc idled out or warms up: it is there for whoever asks."""
        return self.run_dir is not None and wake.warming(self.run_dir, "vector")

    def close(self) -> None:
        self.store.close()
        self.vector.close()
