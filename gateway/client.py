"""Typed asyncio client of SearchService: deadlines on every call, retry only on refused.

A call is retried exactly once, after starting the stack, only when the connection was
refused or the socket file was missing: then no service saw the request, so sending it
again cannot run it twice. Timeouts, resets and errors a service returned are raised as
they are (mapped to MnemoError), since the service may already have acted.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

import grpc

from mnemo.config import Settings
from mnemo.errors import Unavailable
from mnemo.grpc_client import call_metadata, error_from_rpc, is_connection_refused, open_aio_channel
from mnemo.logs import get_logger
from mnemo.v1 import search_pb2_grpc

log = get_logger(__name__)

# Priming a large corpus can take many minutes; the stream still gets a deadline.
STREAM_DEADLINE_S = 4 * 3600.0


def _default_start_stack(settings: Settings, timeout: float) -> bool:
    from mnemo.stack import ensure_stack

    return ensure_stack(settings, timeout)


class SearchClient:
    """One channel to search_svc. `on_restart` runs after the stack was (re)started."""

    def __init__(
        self,
        settings: Settings,
        *,
        start_stack: Callable[[Settings, float], bool] = _default_start_stack,
        on_restart: Callable[[], None] | None = None,
    ):
        self.settings = settings
        self._start_stack = start_stack
        self._on_restart = on_restart
        self._channel: grpc.aio.Channel | None = None
        self._stub: search_pb2_grpc.SearchServiceStub | None = None
        self._restart_lock = asyncio.Lock()
        self.restarts = 0

    # -- channel ---------------------------------------------------------------------
    def _get_stub(self) -> search_pb2_grpc.SearchServiceStub:
        if self._stub is None:
            self._channel = open_aio_channel(
                self.settings.address("search"), tls_ca=self.settings.tls_ca, auth_token=self.settings.auth_token
            )
            self._stub = search_pb2_grpc.SearchServiceStub(self._channel)
        return self._stub

    async def close(self) -> None:
        """Close the channel; calls still running are cancelled (the services see it)."""
        channel, self._channel, self._stub = self._channel, None, None
        if channel is not None:
            await channel.close(grace=None)

    async def _restart(self) -> None:
        """Start the stack (spawn lock inside) and reconnect. Serialised across calls."""
        async with self._restart_lock:
            log.info("stack_refused_starting", address=self.settings.address("search"))
            healthy = await asyncio.to_thread(self._start_stack, self.settings, self.settings.start_timeout_s)
            await self.close()
            self.restarts += 1
            if self._on_restart:
                self._on_restart()
            if not healthy:
                raise Unavailable(
                    f"the mnemo stack did not become healthy within {self.settings.start_timeout_s:g} s "
                    "(see $MNEMO_HOME/logs/)"
                )

    # -- unary -----------------------------------------------------------------------
    async def _invoke(self, method: str, request: Any, timeout: float, *, after_restart: bool = False) -> Any:
        rpc = getattr(self._get_stub(), method)
        # After a restart, wait for the connection instead of failing fast: gRPC shares
        # subchannels between channels, and the one that was refused may still be backing off.
        return await rpc(request, timeout=timeout, metadata=call_metadata(), wait_for_ready=after_restart)

    async def call(self, method: str, request: Any, *, timeout: float | None = None) -> Any:
        """One unary RPC; raises MnemoError. Retried once only when the connection was refused."""
        deadline = timeout if timeout is not None else self.settings.rpc_timeout_s
        try:
            return await self._invoke(method, request, deadline)
        except grpc.aio.AioRpcError as err:
            if not is_connection_refused(err):
                raise error_from_rpc(err) from None
            log.info("rpc_refused", method=method, details=err.details())
        await self._restart()
        try:
            return await self._invoke(method, request, deadline, after_restart=True)
        except grpc.aio.AioRpcError as err:
            raise error_from_rpc(err) from None

    # -- server streaming ------------------------------------------------------------
    async def stream(self, method: str, request: Any, *, timeout: float = STREAM_DEADLINE_S) -> AsyncIterator[Any]:
        """Events of a server-streaming RPC. Closing or cancelling the iteration cancels the call.

        Refused before the first event means nobody saw the request: restart and retry once.
        """
        for attempt in (1, 2):
            call = getattr(self._get_stub(), method)(request, timeout=timeout, metadata=call_metadata(),
                                                     wait_for_ready=attempt == 2)
            received = False
            try:
                while True:
                    try:
                        event = await call.read()
                    except grpc.aio.AioRpcError as err:
                        if attempt == 1 and not received and is_connection_refused(err):
                            log.info("rpc_refused", method=method, details=err.details())
                            break
                        raise error_from_rpc(err) from None
                    if event is grpc.aio.EOF:
                        return
                    received = True
                    yield event
            finally:
                if not call.done():
                    call.cancel()
            await self._restart()
