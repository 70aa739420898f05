"""Typed asyncio client of SearchService: deadlines on every call, retry only on refused.

A call is retried exactly once, after starting the stack, only when the connection was
refused or the socket file was missing: then no service saw the request, so sending it
again cannot run it twice. Timeouts, resets and errors a service returned are raised as
they are (mapped to MnemoError), since the service may already have acted.

Only the local stack is ever started. When search_addr names a service elsewhere, a refused
connection is reported as it is: what was refused, where, and what to do.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Callable
from contextlib import aclosing
from typing import Any, TypeVar, cast

import grpc

from mnemo.config import Settings
from mnemo.errors import Unavailable
from mnemo.grpc_client import call_metadata, error_from_rpc, is_connection_refused, open_aio_channel
from mnemo.logs import get_logger
from mnemo.v1 import search_pb2_grpc

log = get_logger(__name__)

# Priming a large corpus can take many minutes; the stream still gets a deadline.
STREAM_DEADLINE_S = 4 * 3600.0

RequestT = TypeVar("RequestT")
ReplyT = TypeVar("ReplyT")
# An RPC named by a reference to the generated stub's method, e.g. `lambda stub: stub.Search`,
# so a reader (and mypy) follows a tool to its RPC without a method name in a string.
UnaryRpc = Callable[[search_pb2_grpc.SearchServiceStub], grpc.aio.UnaryUnaryMultiCallable[RequestT, ReplyT]]
StreamRpc = Callable[[search_pb2_grpc.SearchServiceStub], grpc.aio.UnaryStreamMultiCallable[RequestT, ReplyT]]


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

    def refused_remotely(self) -> Unavailable:
        """The error of a refused call to a search_svc this gateway does not start."""
        if self.settings.server_url:
            return Unavailable(f"the mnemo server at server_url={self.settings.server_url} refused the connection "
                               "(it is down or unreachable); try again later, or ask its administrator")
        return Unavailable(
            f"search_svc refused the connection at search_addr={self.settings.address('search')} "
            "(nothing listens there). mnemo starts only the local stack; start search_svc at that "
            "address (`mnemo serve search --listen ...`), or unset search_addr to use the local one"
        )

    async def _restart(self) -> None:
        """Start the stack (spawn lock inside) and reconnect. Serialised across calls."""
        from mnemo.processes import is_local

        if not is_local(self.settings, "search"):
            raise self.refused_remotely()
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
    async def _invoke(
        self, rpc: UnaryRpc[RequestT, ReplyT], request: RequestT, timeout: float, *, after_restart: bool = False
    ) -> ReplyT:
        # After a restart, wait for the connection instead of failing fast: gRPC shares
        # subchannels between channels, and the one that was refused may still be backing off.
        return await rpc(self._get_stub())(request, timeout=timeout, metadata=call_metadata(),
                                           wait_for_ready=after_restart)

    async def call(self, rpc: UnaryRpc[RequestT, ReplyT], request: RequestT, *, timeout: float | None = None,
                   start_stack: bool = True) -> ReplyT:
        """One unary RPC; raises MnemoError. Retried once only when the connection was refused
        (after starting the stack; with start_stack=False a refusal is raised as it is)."""
        deadline = timeout if timeout is not None else self.settings.rpc_timeout_s
        try:
            return await self._invoke(rpc, request, deadline)
        except grpc.aio.AioRpcError as err:
            if not is_connection_refused(err) or not start_stack:
                raise error_from_rpc(err) from None
            log.info("rpc_refused", request=type(request).__name__, details=err.details())
        await self._restart()
        try:
            return await self._invoke(rpc, request, deadline, after_restart=True)
        except grpc.aio.AioRpcError as err:
            raise error_from_rpc(err) from None

    # -- server streaming ------------------------------------------------------------
    async def stream(
        self, rpc: StreamRpc[RequestT, ReplyT], request: RequestT, *, timeout: float = STREAM_DEADLINE_S
    ) -> AsyncGenerator[ReplyT, None]:
        """Events of a server-streaming RPC; its error status arrives as MnemoError (the same
        mapping as unary calls). Closing or cancelling the iteration cancels the call.

        Refused before the first event means nobody saw the request: restart and retry once.
        """
        for attempt in (1, 2):
            call = rpc(self._get_stub())(request, timeout=timeout, metadata=call_metadata(),
                                         wait_for_ready=attempt == 2)
            try:
                async with aclosing(self._events(call, retry_refused=attempt == 1)) as events:
                    async for event in events:
                        yield event
                return
            except _Refused as refused:
                log.info("rpc_refused", request=type(request).__name__, details=refused.details)
            finally:
                if not call.done():
                    call.cancel()
            await self._restart()

    @staticmethod
    async def _events(
        call: grpc.aio.UnaryStreamCall[Any, ReplyT], *, retry_refused: bool
    ) -> AsyncGenerator[ReplyT, None]:
        """Read a call to its end. A refusal before the first event raises _Refused when a retry is allowed."""
        received = False
        while True:
            try:
                event = await call.read()
            except grpc.aio.AioRpcError as err:
                if retry_refused and not received and is_connection_refused(err):
                    raise _Refused(err.details() or "") from None
                raise error_from_rpc(err) from None
            if event is grpc.aio.EOF:
                return
            received = True
            yield cast(ReplyT, event)  # read() gives EOF | ReplyT, and EOF returned above


class _Refused(Exception):
    """Nothing listened: no service saw the request, so it may be sent again."""

    def __init__(self, details: str):
        super().__init__(details)
        self.details = details
