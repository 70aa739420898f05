"""The services search_svc depends on, as typed clients with deadlines."""

from __future__ import annotations

from dataclasses import dataclass

from mnemo.config import Settings
from mnemo.grpc_client import ServiceClient, connect
from mnemo.v1 import store_pb2_grpc, vector_pb2_grpc

StoreClient = ServiceClient[store_pb2_grpc.StoreServiceStub]
VectorClient = ServiceClient[vector_pb2_grpc.VectorServiceStub]


@dataclass
class Backend:
    """store is required; vector may be unreachable at any moment (callers degrade to lexical)."""

    store: StoreClient
    vector: VectorClient

    @classmethod
    def connect(cls, settings: Settings) -> Backend:
        return cls(
            # With user tokens, store calls present the caller's token (search_svc.access).
            store=connect(settings, "store", store_pb2_grpc.StoreServiceStub, forward_caller=settings.user_tokens),
            vector=connect(settings, "vector", vector_pb2_grpc.VectorServiceStub),
        )

    def close(self) -> None:
        self.store.close()
        self.vector.close()
