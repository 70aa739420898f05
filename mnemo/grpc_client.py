"""Client channels with deadlines, tokens and typed errors (mnemo.errors.error_from_rpc: one mapping)."""

from __future__ import annotations

import secrets
from collections.abc import Callable
from pathlib import Path
from typing import Any, Generic, TypeVar

import grpc

from mnemo import addresses, identity
from mnemo.errors import Unavailable, error_from_rpc, is_connection_refused
from mnemo.rpc_context import REQUEST_ID_KEY, is_loopback, remaining_budget

_OPTIONS = [
    ("grpc.max_receive_message_length", 64 * 1024 * 1024),
    ("grpc.max_send_message_length", 64 * 1024 * 1024),
    # Fail fast when nothing listens, so "refused" is seen at once instead of after backoff.
    ("grpc.initial_reconnect_backoff_ms", 100),
    ("grpc.max_reconnect_backoff_ms", 1000),
]


def _credentials(target: addresses.Target, tls_ca: str) -> grpc.ChannelCredentials | None:
    if all(is_loopback(entry) for entry in target.entries) and not tls_ca:
        return None
    roots = Path(tls_ca).read_bytes() if tls_ca else None
    return grpc.ssl_channel_credentials(root_certificates=roots)


def open_channel(address: str, *, tls_ca: str = "", auth_token: str = "", setting: str = "address",
                 forward_caller: bool = False) -> grpc.Channel:
    """A blocking channel. Beyond loopback it is always TLS; with a token, every call carries it.

    `address` may list replicas (`h1:p1,h2:p2`, see mnemo.addresses): one channel balances
    over them; `setting` names the setting it came from in the error a bad list gets.
    With `forward_caller`, a call made while serving an RPC presents that RPC's caller's
    token (mnemo.identity.caller_token) instead of `auth_token`: search_svc -> store_svc.
    """
    target = addresses.parse(address, setting)
    creds = _credentials(target, tls_ca)
    options = [*_OPTIONS, *target.options]
    if creds:
        channel = grpc.secure_channel(target.target, creds, options)
    else:
        channel = grpc.insecure_channel(target.target, options)
    if auth_token:
        channel = grpc.intercept_channel(channel, _TokenInterceptor(auth_token, forward_caller))
    return channel


def open_aio_channel(address: str, *, tls_ca: str = "", auth_token: str = "",
                     setting: str = "address") -> grpc.aio.Channel:
    """An asyncio channel (the gateway); `address` as in open_channel."""
    target = addresses.parse(address, setting)
    creds = _credentials(target, tls_ca)
    options = [*_OPTIONS, *target.options]
    interceptors: list[Any] | None = [_AioUnaryToken(auth_token), _AioStreamToken(auth_token)] if auth_token else None
    if creds:
        return grpc.aio.secure_channel(target.target, creds, options, interceptors=interceptors)
    return grpc.aio.insecure_channel(target.target, options, interceptors=interceptors)


def call_metadata(request_id: str | None = None) -> tuple[tuple[str, str], ...]:
    return ((REQUEST_ID_KEY, request_id or secrets.token_hex(6)),)


def check_health(address: str, *, timeout: float = 1.0, service: str = "", tls_ca: str = "") -> bool:
    """One health check: True when the server answers SERVING."""
    # Imported here: the gateway opens channels without health checks and never loads it.
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    channel = open_channel(address, tls_ca=tls_ca)
    try:
        reply = health_pb2_grpc.HealthStub(channel).Check(
            health_pb2.HealthCheckRequest(service=service), timeout=timeout
        )
        return reply.status == health_pb2.HealthCheckResponse.SERVING
    except grpc.RpcError:
        return False
    finally:
        channel.close()


StubT = TypeVar("StubT")


class ServiceClient(Generic[StubT]):
    """A typed stub whose every call gets a deadline, a request id and typed errors.

    `client.stub.Search(request)` calls the generated stub itself, so a reader (or mypy)
    follows the call to its RPC. Interceptors on the channel give each call the smaller
    of the default timeout and what is left of the RPC being served (deadline
    propagation), stamp a request id, add the bearer token, and raise MnemoError
    subclasses instead of grpc.RpcError: unary calls at once, server streams while they
    are iterated (the returned call still supports `cancel()`).
    """

    def __init__(self, stub_class: Callable[[grpc.Channel], StubT], channel: grpc.Channel, *, timeout: float):
        self.timeout = timeout
        self._channel = channel
        self.stub: StubT = stub_class(grpc.intercept_channel(channel, _CallPolicy(self)))

    def deadline(self, timeout: float | None) -> float:
        """The timeout a call may use: its own (or the default), cut to the caller's remaining budget."""
        budget = timeout if timeout is not None else self.timeout
        left = remaining_budget()
        return max(0.05, min(budget, left)) if left is not None else budget

    def close(self) -> None:
        self._channel.close()


def connect(settings: Any, service: str, stub_class: Callable[[grpc.Channel], StubT], *,
            forward_caller: bool = False) -> ServiceClient[StubT]:
    """A ServiceClient for one of the stack's services, addressed and secured from settings."""
    channel = open_channel(settings.address(service), tls_ca=settings.tls_ca, auth_token=settings.auth_token,
                           setting=f"{service}_addr", forward_caller=forward_caller)
    return ServiceClient(stub_class, channel, timeout=settings.rpc_timeout_s)


class _CallPolicy(grpc.UnaryUnaryClientInterceptor, grpc.UnaryStreamClientInterceptor):
    """Deadline, request id and typed errors for every call of one ServiceClient."""

    def __init__(self, client: ServiceClient[Any]):
        self._client = client

    def _details(self, details: Any) -> Any:
        metadata = list(details.metadata or []) + list(call_metadata())
        return _Details(details, metadata, self._client.deadline(details.timeout))

    def intercept_unary_unary(self, continuation: Any, client_call_details: Any, request: Any) -> Any:
        outcome = continuation(self._details(client_call_details), request)
        error = outcome.exception()
        if error is not None:
            raise error_from_rpc(error) from None
        return outcome

    def intercept_unary_stream(self, continuation: Any, client_call_details: Any, request: Any) -> Any:
        return _MappedStream(continuation(self._details(client_call_details), request))


class _MappedStream:
    """A server-streaming call whose errors surface as MnemoError while it is iterated."""

    def __init__(self, call: Any):
        self._call = call

    def __iter__(self) -> _MappedStream:
        return self

    def __next__(self) -> Any:
        try:
            return next(self._call)
        except grpc.RpcError as err:
            raise error_from_rpc(err) from None

    def cancel(self) -> bool:
        return bool(self._call.cancel())

    def __getattr__(self, name: str) -> Any:  # the rest of grpc.Call (code, details, is_active...)
        return getattr(self._call, name)


class _TokenInterceptor(grpc.UnaryUnaryClientInterceptor, grpc.UnaryStreamClientInterceptor):
    def __init__(self, token: str, forward_caller: bool = False):
        self._header = ("authorization", f"Bearer {token}")
        self._forward = forward_caller

    def _with_token(self, details: Any) -> Any:
        caller = identity.caller_token.get() if self._forward else ""
        header = ("authorization", f"Bearer {caller}") if caller else self._header
        return _Details(details, list(details.metadata or []) + [header], details.timeout)

    def intercept_unary_unary(self, continuation: Any, client_call_details: Any, request: Any) -> Any:
        return continuation(self._with_token(client_call_details), request)

    def intercept_unary_stream(self, continuation: Any, client_call_details: Any, request: Any) -> Any:
        return continuation(self._with_token(client_call_details), request)


class _Details(grpc.ClientCallDetails):
    def __init__(self, base: Any, metadata: list[tuple[str, str]], timeout: float | None):
        self.method = base.method
        self.timeout = timeout
        self.metadata = tuple(metadata)
        self.credentials = base.credentials
        self.wait_for_ready = getattr(base, "wait_for_ready", None)
        self.compression = getattr(base, "compression", None)


class _AioTokenHeader:
    def __init__(self, token: str):
        self._header = ("authorization", f"Bearer {token}")

    def _with_token(self, details: Any) -> Any:
        metadata = grpc.aio.Metadata(*(tuple(details.metadata or ())), self._header)
        return details._replace(metadata=metadata)


# Two classes, not one with both bases: grpc.aio files each interceptor under the FIRST kind it
# is (an if/elif chain), so a class of both kinds never saw a streaming call, and
# prime_corpus/reprime_corpus reached the server without the token (UNAUTHENTICATED).
class _AioUnaryToken(_AioTokenHeader, grpc.aio.UnaryUnaryClientInterceptor):
    async def intercept_unary_unary(self, continuation, client_call_details, request):
        return await continuation(self._with_token(client_call_details), request)


class _AioStreamToken(_AioTokenHeader, grpc.aio.UnaryStreamClientInterceptor):
    async def intercept_unary_stream(self, continuation, client_call_details, request):
        return await continuation(self._with_token(client_call_details), request)


__all__ = [
    "ServiceClient",
    "Unavailable",
    "connect",
    "call_metadata",
    "check_health",
    "error_from_rpc",
    "is_connection_refused",
    "open_aio_channel",
    "open_channel",
]
