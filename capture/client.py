"""The client hooks use for their few unary calls.

Hooks start a fresh interpreter per event, so every import counts. On the default local
path (Unix socket, no token, no TLS) calls go through capture.h2c, which speaks
HTTP/2 with the standard library and does not import grpc at all. Any call that path
cannot complete is made again through grpc proper (every hook write is idempotent:
external ids, tool_use_id, content hashes), which also yields the typed error. With a
token or TLS configured, grpc is used from the start, through
mnemo.grpc_client.open_channel (mnemo.grpc_client itself is not imported on the default
path: it pulls in the server bootstrap, structlog and rich).

When nothing listens (connection refused), the stack is started under the shared
spawn lock (mnemo.stack.ensure_stack) and the call is retried once: no service saw the
first request, so the retry cannot duplicate a write.
"""

from __future__ import annotations

from typing import Any

from mnemo.errors import MnemoError, Unavailable, from_code

STACK_START_TIMEOUT_S = 20.0
_OPTIONS = [("grpc.max_send_message_length", 64 * 1024 * 1024),
            ("grpc.max_receive_message_length", 64 * 1024 * 1024)]
_REFUSED = ("connection refused", "no such file or directory", "failed to connect to all addresses")


class HookClients:
    """Stubs for store_svc and search_svc, opened on first use and closed together."""

    def __init__(self, settings: Any, timeout: float | None = None):
        self.settings = settings
        self.timeout = timeout or min(settings.rpc_timeout_s, 10.0)
        self._channels: dict[str, Any] = {}
        self._stubs: dict[str, Any] = {}
        self._stack_started = False
        self._lean: dict[str, Any] = {}
        self.lean_failures: list[str] = []
        """Calls the lean path could not complete (then made through grpc); logged by hooks."""

    def store(self, method: str, request: Any) -> Any:
        return self._call("store", method, request)

    def search(self, method: str, request: Any) -> Any:
        return self._call("search", method, request)

    def close(self) -> None:
        for lean in self._lean.values():
            lean.close()
        self._lean.clear()
        for channel in self._channels.values():
            channel.close()
        self._channels.clear()
        self._stubs.clear()

    # -----------------------------------------------------------------------------------
    def _call(self, service: str, method: str, request: Any) -> Any:
        if self._lean_possible(service):
            try:
                return self._lean_call(service, method, request)
            except Exception as err:  # noqa: BLE001 - any surprise: ask grpc proper (writes are idempotent)
                self.lean_failures.append(f"{service}.{method}: {type(err).__name__}: {err}")
        import grpc

        for attempt in (1, 2):
            try:
                return getattr(self._stub(service), method)(request, timeout=self.timeout)
            except grpc.RpcError as err:
                if attempt == 1 and _refused(err) and self._start_stack():
                    continue
                raise _typed(err) from None
        raise Unavailable(f"{service} is not reachable")  # pragma: no cover - loop always returns or raises

    # -- the lean path: HTTP/2 by hand, no grpc import (see capture.h2c) ----------
    def _lean_possible(self, service: str) -> bool:
        address = self.settings.address(service)
        return (address.startswith("unix:") and not address.startswith("unix://")
                and not self.settings.auth_token and not self.settings.tls_ca)

    def _lean_call(self, service: str, method: str, request: Any) -> Any:
        from capture.h2c import Refused

        try:
            channel = self._lean_channel(service)
        except Refused:
            if not self._start_stack():
                raise
            channel = self._lean_channel(service)
        name, reply_class = _method(service, method)
        data = channel.unary(f"/mnemo.v1.{name}/{method}", request.SerializeToString(), self.timeout)
        return reply_class.FromString(data)

    def _lean_channel(self, service: str) -> Any:
        if service not in self._lean:
            from capture.h2c import H2Channel

            self._lean[service] = H2Channel(self.settings.address(service)[len("unix:"):], self.timeout)
        return self._lean[service]

    def _stub(self, service: str) -> Any:
        if service not in self._stubs:
            channel = self._open(self.settings.address(service))
            self._channels[service] = channel
            if service == "store":
                from mnemo.v1 import store_pb2_grpc

                self._stubs[service] = store_pb2_grpc.StoreServiceStub(channel)
            else:
                from mnemo.v1 import search_pb2_grpc

                self._stubs[service] = search_pb2_grpc.SearchServiceStub(channel)
        return self._stubs[service]

    def _open(self, address: str) -> Any:
        import grpc

        if address.startswith("unix:") and not self.settings.auth_token and not self.settings.tls_ca:
            return grpc.insecure_channel(address, _OPTIONS)
        from mnemo.grpc_client import open_channel

        return open_channel(address, tls_ca=self.settings.tls_ca, auth_token=self.settings.auth_token)

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


_SERVICES = {"store": "StoreService", "search": "SearchService"}


def _method(service: str, method: str) -> tuple[str, Any]:
    """(service name, reply message class) of a method, from the generated descriptors."""
    if service == "store":
        from mnemo.v1 import common_pb2
        from mnemo.v1 import store_pb2 as module
    else:
        from mnemo.v1 import common_pb2
        from mnemo.v1 import search_pb2 as module
    name = _SERVICES[service]
    descriptor = module.DESCRIPTOR.services_by_name[name].methods_by_name[method]
    reply = descriptor.output_type.name
    return name, getattr(module, reply, None) or getattr(common_pb2, reply)


def _refused(err: Any) -> bool:
    import grpc

    if err.code() != grpc.StatusCode.UNAVAILABLE:
        return False
    details = (err.details() or "").lower()
    return any(marker in details for marker in _REFUSED) and "reset" not in details


def _typed(err: Any) -> MnemoError:
    code = err.code().name if callable(getattr(err, "code", None)) else "UNKNOWN"
    return from_code(code, (err.details() if callable(getattr(err, "details", None)) else "") or code)
