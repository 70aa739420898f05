"""The gRPC server bootstrap every service uses.

`build_server` binds the address, adds health and reflection, and installs one
interceptor that authenticates (when a token is configured), logs each call, stamps a
request id, and maps `MnemoError` to status codes: the only place that mapping exists
on the server side. `serve_forever` blocks until SIGTERM/SIGINT, then drains.
"""

from __future__ import annotations

import hmac
import os
import secrets
import signal
import stat
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent import futures
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import structlog
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from mnemo import identity
from mnemo.errors import InvalidArgument, MnemoError, PermissionDenied, downstream_unavailable
from mnemo.identity import Identity, TokenResolver
from mnemo.logs import get_logger
from mnemo.privacy import clean
from mnemo.rpc_context import REQUEST_ID_KEY, is_loopback, time_remaining

log = get_logger("mnemo.grpc")
BEARER = "Bearer "

@dataclass
class ServerHandle:
    """A started server: what tests and entry points need to talk to it and stop it."""

    server: grpc.Server
    address: str  # the bound address, with the real port when port 0 was asked
    health: health.HealthServicer

    def stop(self, grace: float = 2.0) -> None:
        self.health.enter_graceful_shutdown()
        self.server.stop(grace).wait()


# A status message quotes at most this much of an error's text (privacy-filtered): a
# rejected value can be megabytes, and it must reach neither a log nor the wire whole.
MESSAGE_MAX_CHARS = 1000


def quoted(text: str, limit: int = MESSAGE_MAX_CHARS) -> str:
    """`text` privacy-filtered and cut to `limit` characters, for a log line or a status message."""
    cut = clean(text[: limit * 4])
    return cut if len(cut) <= limit else cut[: limit - 1] + "…"


def _abort_with(exc: Exception, context: grpc.ServicerContext, method: str) -> None:
    """The server side of the one error mapping: MnemoError -> its status code; anything
    else -> INTERNAL with a reference, the traceback only in the log."""
    if isinstance(exc, MnemoError):
        exc = downstream_unavailable(exc, _service_of(method))
        message = quoted(exc.message)
        log.info("rpc_error", method=method, code=exc.code, error=message)
        context.abort(getattr(grpc.StatusCode, exc.code, grpc.StatusCode.INTERNAL), message)
    # code() is public (experimental) in grpcio but missing from types-grpcio's ServicerContext.
    if type(exc) is Exception and context.code() is not None:  # type: ignore[attr-defined]
        raise exc  # context.abort() raises a bare Exception after setting the code: let it through
    ref = secrets.token_hex(4)
    log.error("rpc_crashed", method=method, ref=ref, exc_info=exc)
    context.abort(grpc.StatusCode.INTERNAL, f"internal error (ref={ref})")


def _service_of(method: str) -> str:
    """`/mnemo.v1.SearchService/Search` -> `SearchService`."""
    return method.strip("/").split("/", 1)[0].rsplit(".", 1)[-1]


def _guard_unary(behavior: Callable, method: str) -> Callable:
    def wrapper(request: Any, context: grpc.ServicerContext) -> Any:
        started = time.perf_counter()
        try:
            reply = behavior(request, context)
        except Exception as exc:
            _abort_with(exc, context, method)
        log.debug("rpc", method=method, ms=round((time.perf_counter() - started) * 1000, 2))
        return reply

    return wrapper


def _guard_stream(behavior: Callable, method: str) -> Callable:
    def wrapper(request: Any, context: grpc.ServicerContext) -> Iterator[Any]:
        try:
            yield from behavior(request, context)
        except Exception as exc:
            _abort_with(exc, context, method)

    return wrapper


class _Caller:
    """Who called, as far as the metadata tells before the handler runs: the service token
    (resolved at once), a user token (resolved in the handler thread, where a lookup's
    errors are mapped like any other), or nobody when the server has no token."""

    def __init__(self, secret: str, who: Identity | None, resolve: TokenResolver | None, forward: bool,
                 method: str = "", open_to_users: bool = True):
        self.secret = secret
        self.who = who
        self.resolve = resolve
        self.forward = forward
        self.method = method
        self.open_to_users = open_to_users

    def _identity(self) -> Identity | None:
        who = self.who if self.resolve is None else self.resolve(self.secret)
        if who is not None and not who.admin and not self.open_to_users:
            raise PermissionDenied(f"{_service_of(self.method)}/{self.method.rsplit('/', 1)[-1]} needs the "
                                   "service (admin) token")
        return who

    def bind(self, fn: Callable) -> Callable:
        def bound(request: Any, context: grpc.ServicerContext) -> Any:
            with _bound(self._identity(), self.secret if self.forward else ""):
                return fn(request, context)
        return bound

    def bind_stream(self, fn: Callable) -> Callable:
        def bound(request: Any, context: grpc.ServicerContext) -> Iterator[Any]:
            with _bound(self._identity(), self.secret if self.forward else ""):
                yield from fn(request, context)
        return bound


@contextmanager
def _bound(who: Identity | None, secret: str) -> Iterator[None]:
    """The caller's identity (and, for a forwarding server, its token) for the call; always
    set, then reset, so a pooled thread never carries one call's caller into the next."""
    who_reset = identity.current.set(who)
    secret_reset = identity.caller_token.set(secret)
    try:
        yield
    finally:
        try:
            identity.caller_token.reset(secret_reset)
            identity.current.reset(who_reset)
        except ValueError:  # reset from another context (a stream resumed elsewhere): clear instead
            identity.caller_token.set("")
            identity.current.set(None)


class _Interceptor(grpc.ServerInterceptor):
    """Authentication, request ids, logging and error mapping for every RPC.

    With a token, every call must present `authorization: Bearer <secret>`: the service
    token is the administrator; with `resolve`, other secrets are per-user tokens it looks
    up. `forward` keeps the caller's secret for the server's own calls to store_svc.
    `user_methods` (full method paths) are the only ones a per-user token may call; None = all
    (store_svc, whose own table, store_svc.access, rules each RPC).
    """

    def __init__(self, token: str = "", resolve: TokenResolver | None = None, forward: bool = False,
                 user_methods: frozenset[str] | None = None):
        self._token = token.encode()
        self._resolve = resolve
        self._forward = forward
        self._user_methods = user_methods

    def _caller(self, details: grpc.HandlerCallDetails) -> _Caller | None:
        if not self._token:
            return _Caller("", None, None, False)
        if details.method.startswith("/grpc.health.v1.Health/"):
            return _Caller("", identity.SERVICE, None, False)
        metadata = dict(details.invocation_metadata or ())
        presented = str(metadata.get("authorization", ""))
        # Only `authorization: Bearer <token>`: a bare token is refused, not guessed at.
        if not presented.startswith(BEARER) or not presented.removeprefix(BEARER):
            return None
        secret = presented.removeprefix(BEARER)
        if hmac.compare_digest(secret.encode(), self._token):
            return _Caller(secret, identity.SERVICE, None, self._forward)
        if self._resolve is None:
            return None
        open_to_users = self._user_methods is None or details.method in self._user_methods
        return _Caller(secret, None, self._resolve, self._forward, details.method, open_to_users)

    def intercept_service(self, continuation, handler_call_details):
        handler = continuation(handler_call_details)
        if handler is None:
            return None
        method = handler_call_details.method
        caller = self._caller(handler_call_details)
        if caller is None:
            def deny(request, context):
                context.abort(grpc.StatusCode.UNAUTHENTICATED, "missing or wrong bearer token")
            return grpc.unary_unary_rpc_method_handler(deny)
        request_id = dict(handler_call_details.invocation_metadata or ()).get(REQUEST_ID_KEY, "")

        def bind(fn: Callable) -> Callable:
            def inner(request, context):
                structlog.contextvars.bind_contextvars(request_id=request_id or secrets.token_hex(6))
                time_remaining.set(context.time_remaining)
                return fn(request, context)
            return inner

        if handler.unary_unary:
            return handler._replace(unary_unary=bind(_guard_unary(caller.bind(handler.unary_unary), method)))
        if handler.unary_stream:
            guarded = _guard_stream(caller.bind_stream(handler.unary_stream), method)

            def stream(request, context):
                structlog.contextvars.bind_contextvars(request_id=request_id or secrets.token_hex(6))
                time_remaining.set(context.time_remaining)
                yield from guarded(request, context)
            return handler._replace(unary_stream=stream)
        # Client-streaming handlers (none of ours today; server reflection is one) still run
        # with the caller's identity: without it a user token would get the local stack's.
        if handler.stream_unary:
            return handler._replace(stream_unary=_guard_unary(caller.bind(handler.stream_unary), method))
        if handler.stream_stream:
            return handler._replace(stream_stream=_guard_stream(caller.bind_stream(handler.stream_stream), method))
        return handler


def _prepare_unix_socket(address: str) -> None:
    path = Path(address.removeprefix("unix:").removeprefix("//"))
    path.parent.mkdir(parents=True, exist_ok=True)
    info = path.parent.stat()
    # Only the user may reach the socket, so its directory is made 0700; a directory that is not
    # ours, or a shared one such as /tmp (sticky), is never chmodded: the socket must live elsewhere.
    if info.st_uid != os.getuid() or info.st_mode & stat.S_ISVTX:
        raise InvalidArgument("listen", f"{path.parent} is shared with other users: put the socket in a "
                                        "directory of your own (the default is under $MNEMO_HOME/run)")
    os.chmod(path.parent, 0o700)
    if path.exists():
        path.unlink()  # a stale socket from a crashed run; the caller checked nobody serves it


INSECURE_FLAG = "--insecure-no-auth"


def check_bind_policy(listen: str, *, tls_cert: str = "", tls_key: str = "", auth_token: str = "",
                      insecure_no_auth: bool = False) -> None:
    """Every TCP listener needs a bearer token, loopback included: any user of the machine can
    connect to 127.0.0.1, so without one they would read and write this user's memory. Beyond
    loopback it needs TLS too. A Unix socket needs neither: it lives in a 0700 directory.
    `insecure_no_auth` (the user's explicit choice) lifts the token rule on loopback only, with
    a warning. Checked before a service opens anything, so a refused start leaves no database
    created or migrated behind."""
    if listen.startswith("unix:"):
        return
    if not is_loopback(listen):
        if not (tls_cert and tls_key and auth_token):
            raise InvalidArgument("listen", f"{listen} is beyond loopback: set tls_cert, tls_key and auth_token")
        return
    if not auth_token and not insecure_no_auth:
        raise InvalidArgument("listen", f"{listen} is TCP, which every user of this machine can reach: give it a "
                                        "bearer token (`mnemo server token service-file FILE`, then "
                                        f"--auth-token-file FILE), or pass {INSECURE_FLAG} to serve without one")


def check_token_policy(*, user_tokens: bool, auth_token: str) -> None:
    """Per-user tokens need a service token (the administrator's). Checked before a service
    opens anything, like the bind policy."""
    if user_tokens and not auth_token:
        raise InvalidArgument("user_tokens", "needs auth_token: the service (admin) token")


def build_server(
    listen: str,
    register: Callable[[grpc.Server], Iterable[str]],
    *,
    tls_cert: str = "",
    tls_key: str = "",
    auth_token: str = "",
    max_workers: int = 16,
    resolve_token: TokenResolver | None = None,
    forward_caller: bool = False,
    insecure_no_auth: bool = False,
    user_methods: frozenset[str] | None = None,
) -> ServerHandle:
    """Create, bind and start a server. `register` adds servicers and returns their full names.

    `resolve_token` makes it accept per-user tokens besides `auth_token` (the service token);
    `forward_caller` keeps each caller's token for the calls the server makes to store_svc;
    `insecure_no_auth` allows loopback TCP without a token (see check_bind_policy);
    `user_methods` limits what per-user tokens may call (the rest needs the service token).
    """
    check_bind_policy(listen, tls_cert=tls_cert, tls_key=tls_key, auth_token=auth_token,
                      insecure_no_auth=insecure_no_auth)
    check_token_policy(user_tokens=resolve_token is not None, auth_token=auth_token)
    if not listen.startswith("unix:") and not auth_token:  # allowed only by insecure_no_auth: say so at start
        log.warning("unauthenticated_listener", address=listen, flag=INSECURE_FLAG,
                    risk="any user of this machine can read and write this memory through this port")
    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="rpc"),
        interceptors=[_Interceptor(auth_token, resolve_token, forward_caller, user_methods)],
        options=[("grpc.so_reuseport", 0), ("grpc.max_receive_message_length", 64 * 1024 * 1024),
                 ("grpc.max_send_message_length", 64 * 1024 * 1024)],
    )
    names = tuple(register(server))
    health_servicer = health.HealthServicer(experimental_non_blocking=True)
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    reflection.enable_server_reflection((*names, health.SERVICE_NAME, reflection.SERVICE_NAME), server)
    if listen.startswith("unix:"):
        _prepare_unix_socket(listen)
    if tls_cert and tls_key:
        creds = grpc.ssl_server_credentials([(Path(tls_key).read_bytes(), Path(tls_cert).read_bytes())])
        port = server.add_secure_port(listen, creds)
    else:
        port = server.add_insecure_port(listen)
    if not listen.startswith("unix:") and port == 0:
        raise InvalidArgument("listen", f"could not bind {listen}")
    server.start()
    address = listen if listen.startswith("unix:") else f"{listen.rsplit(':', 1)[0]}:{port}"
    for name in (*names, ""):
        health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
    log.info("serving", address=address, services=list(names))
    return ServerHandle(server, address, health_servicer)


def serve_forever(handle: ServerHandle, on_stop: Callable[[], None] | None = None, grace: float = 3.0) -> None:
    """Block until SIGTERM or SIGINT, then stop taking calls, drain, and run `on_stop`."""
    received: list[int] = []

    def request_stop(signum, _frame):
        # Only append here: a signal handler that sets a threading.Event can deadlock with
        # the main thread waiting on that same Event's lock.
        received.append(signum)

    signal.signal(signal.SIGTERM, request_stop)
    signal.signal(signal.SIGINT, request_stop)
    while not received:
        time.sleep(0.2)
    log.info("stopping", signal=signal.Signals(received[0]).name)
    handle.stop(grace)
    if on_stop:
        on_stop()
    if handle.address.startswith("unix:"):
        Path(handle.address.removeprefix("unix:")).unlink(missing_ok=True)
    log.info("stopped", address=handle.address)
