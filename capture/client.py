"""The client hooks use for their few unary calls.

Hooks start a fresh interpreter per event, so every import counts. On the default local
path (Unix socket, no token, no TLS) calls go through mnemo.h2c, which speaks
HTTP/2 with the standard library and does not import grpc at all. Any call that path
cannot complete is made again through grpc proper (every hook write is idempotent:
external ids, tool_use_id, content hashes), which also yields the typed error. With a
token or TLS configured, grpc is used from the start. The grpc path is a
mnemo.grpc_client.ServiceClient like every other client's (deadlines, request ids, the
one mapping to typed errors); it is imported only when needed, since it pulls in grpc.

When nothing listens (connection refused), the stack is started under the shared
spawn lock (mnemo.stack.ensure_stack) and the call is retried once: no service saw the
first request, so the retry cannot duplicate a write.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from mnemo.errors import MnemoError, Unavailable, is_refusal

if TYPE_CHECKING:
    from google.protobuf.message import Message

    from capture.rpcs import Rpc
    from capture.wire import WireRpc
    from mnemo.grpc_client import ServiceClient
    from mnemo.h2c import H2Channel

    RequestT = TypeVar("RequestT", bound=Message)
    ReplyT = TypeVar("ReplyT", bound=Message)

ParsedT = TypeVar("ParsedT")

STACK_START_TIMEOUT_S = 20.0


class UnaryCaller:
    """The grpc twin of mnemo.h2c.H2Channel: serialized request in, serialized reply out
    (no serializers: grpc passes bytes through), so both transports carry the same bytes."""

    def __init__(self, channel: Any):
        self._channel = channel

    def __call__(self, path: str, body: bytes, timeout: float) -> bytes:
        reply: bytes = self._channel.unary_unary(path)(body, timeout=timeout)
        return reply


class HookClients:
    """Connections to store_svc and search_svc, opened on first use and closed together."""

    def __init__(self, settings: Any, timeout: float | None = None, may_start_stack: bool = True):
        self.settings = settings
        self.timeout = timeout or min(settings.rpc_timeout_s, 10.0)
        self._clients: dict[str, ServiceClient[UnaryCaller]] = {}
        # A hook on the agent's critical path (PreToolUse) must not wait for a stack to start,
        # and the server runtime (mnemo.remote) never starts one.
        self._stack_started = not may_start_stack or bool(getattr(settings, "server_url", ""))
        self._lean: dict[str, H2Channel] = {}
        self.lean_failures: list[str] = []
        """Calls the lean path could not complete (then made through grpc); logged by hooks."""

    def call(self, rpc: Rpc[RequestT, ReplyT], request: RequestT) -> ReplyT:
        """Make one call, on the lean path when possible; typed errors (mnemo.errors) on failure."""
        return self._call(rpc.service, rpc.path, request.SerializeToString(), rpc.reply.FromString)

    def call_wire(self, rpc: WireRpc, request: dict[str, Any]) -> dict[str, Any]:
        """`call` without the protobuf runtime, for the RPCs the agent waits on (capture.wire):
        the request's fields by name in, the reply's fields by name out."""
        return self._call(rpc.service, rpc.path, rpc.request.encode(request), rpc.reply.decode)

    def _call(self, service: str, path: str, body: bytes, parse: Callable[[bytes], ParsedT]) -> ParsedT:
        if self._lean_possible(service):
            try:
                return parse(self._lean_call(service, path, body))
            except Exception as err:  # noqa: BLE001 - any surprise: ask grpc proper (writes are idempotent)
                self.lean_failures.append(f"{path}: {type(err).__name__}: {err}")
        return parse(self._grpc_call(service, path, body))

    def close(self) -> None:
        for lean in self._lean.values():
            lean.close()
        self._lean.clear()
        for client in self._clients.values():
            client.close()
        self._clients.clear()

    # -----------------------------------------------------------------------------------
    def _grpc_call(self, service: str, path: str, body: bytes) -> bytes:
        try:
            return self._client(service).stub(path, body, self.timeout)
        except MnemoError as err:
            if not (is_refusal(err) and self._start_stack()):
                raise
        return self._client(service).stub(path, body, self.timeout)

    def _client(self, service: str) -> ServiceClient[UnaryCaller]:
        if service not in self._clients:
            from mnemo.grpc_client import ServiceClient, open_channel

            channel = open_channel(self.settings.address(service), tls_ca=self.settings.tls_ca,
                                   auth_token=self.settings.auth_token)
            self._clients[service] = ServiceClient(UnaryCaller, channel, timeout=self.timeout)
        return self._clients[service]

    # -- the lean path: HTTP/2 by hand, no grpc import (see mnemo.h2c) ----------
    def _lean_possible(self, service: str) -> bool:
        address = self.settings.address(service)
        return (address.startswith("unix:") and not address.startswith("unix://")
                and not self.settings.auth_token and not self.settings.tls_ca)

    def _lean_call(self, service: str, path: str, body: bytes) -> bytes:
        from mnemo.h2c import Refused

        try:
            channel = self._lean_channel(service)
        except Refused:
            if not self._start_stack():
                raise
            channel = self._lean_channel(service)
        return channel.unary(path, body, self.timeout)

    def _lean_channel(self, service: str) -> H2Channel:
        if service not in self._lean:
            from mnemo.h2c import H2Channel

            self._lean[service] = H2Channel(self.settings.address(service)[len("unix:"):], self.timeout)
        return self._lean[service]

    def _start_stack(self) -> bool:
        """Start the local stack (once per hook); True when it came up."""
        if self._stack_started:
            return False
        self._stack_started = True
        try:
            from mnemo.stack import ensure_stack
        except ImportError as err:
            raise Unavailable(f"the stack is down and cannot be started here: {err}") from None
        if not ensure_stack(self.settings, STACK_START_TIMEOUT_S):
            raise Unavailable(f"the stack did not become healthy within {STACK_START_TIMEOUT_S:.0f} s")
        self.close()  # reconnect: channels to a missing socket may sit in backoff
        return True
