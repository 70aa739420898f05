"""One URL for the server runtime: search_svc relays the StoreService RPCs hooks make.

A hook in the server runtime has one address, the server's search_svc (mnemo.remote), yet
writes sessions, prompts and tool uses through StoreService. This generic handler accepts
`/mnemo.v1.StoreService/<method>` for the methods hooks use (capture.rpcs, capture.wire)
and sends the request bytes unchanged to this search_svc's store_svc: no parsing, so the
store validates exactly what it would have received directly. The caller's
`authorization` metadata and request id go along, and so does its deadline (what is left
of it), so the store checks the caller's own token and scope. Every other StoreService
method (Export, Import, Forget, ReadChanges...) is UNIMPLEMENTED here: only what hooks
need is reachable through the front door.

The server's token interceptor (mnemo.grpc_server) runs before this handler as for every
RPC, and store errors come back with their own status and message.
"""

from __future__ import annotations

from typing import Any

import grpc

from mnemo.config import Settings
from mnemo.grpc_client import open_channel
from mnemo.rpc_context import REQUEST_ID_KEY

SERVICE = "mnemo.v1.StoreService"
FORWARDED = frozenset({
    "UpsertSession", "CompleteSession", "RecordPrompt", "RecordToolUse", "AddObservations", "AddSummaries",
    "GetToolUses", "ListRecent", "GetRecords",
})
PASSED_METADATA = ("authorization", REQUEST_ID_KEY)
NO_DEADLINE_S = 86400.0


class StoreForwarder(grpc.GenericRpcHandler):
    def __init__(self, settings: Settings):
        # A channel of its own, without the service token: each call carries its caller's.
        self._channel = open_channel(settings.address("store"), tls_ca=settings.tls_ca, setting="store_addr")
        self._default_timeout = settings.rpc_timeout_s
        self._handlers: dict[str, grpc.RpcMethodHandler] = {
            f"/{SERVICE}/{name}": grpc.unary_unary_rpc_method_handler(self._forward(name)) for name in FORWARDED}

    def service(self, handler_call_details: grpc.HandlerCallDetails) -> grpc.RpcMethodHandler | None:
        return self._handlers.get(handler_call_details.method)

    def _forward(self, name: str) -> Any:
        relay: grpc.UnaryUnaryMultiCallable[bytes, bytes] = self._channel.unary_unary(f"/{SERVICE}/{name}")

        def forward(request: bytes, context: grpc.ServicerContext) -> bytes:
            metadata = tuple((k, v) for k, v in context.invocation_metadata() if k in PASSED_METADATA)
            # No deadline reads as None or as a huge number of seconds (gRPC's "infinite").
            remaining = context.time_remaining()
            no_deadline = remaining is None or remaining > NO_DEADLINE_S
            timeout = self._default_timeout if no_deadline else max(0.0, remaining)
            try:
                reply: bytes = relay(request, timeout=timeout, metadata=metadata)
            except grpc.RpcError as err:
                # The store's status as it is: the caller reads the same code and message.
                context.abort(err.code(), err.details() or "")
            return reply

        return forward

    def close(self) -> None:
        self._channel.close()
