"""SearchClient against real gRPC servers: retry only on refused, never after the service saw the call."""

from __future__ import annotations

import asyncio
import threading

import grpc
import pytest

from gateway.client import SearchClient
from mnemo.config import with_overrides
from mnemo.errors import DeadlineExceeded, Unavailable
from mnemo.v1 import search_pb2
from tests.service.gateway.mcp_support import FaultySearch, start_fake_search

pytestmark = pytest.mark.service


def test_refused_call_starts_the_stack_and_is_retried_once(settings):
    servicer = FaultySearch(delay_s=0.0)
    handles = []
    starts = []

    def start_stack(s, timeout):
        starts.append(timeout)
        handles.append(start_fake_search(servicer, s.address("search")))
        return True

    restarted = threading.Event()
    client = SearchClient(settings, start_stack=start_stack, on_restart=restarted.set)

    async def scenario():
        try:
            return await client.call(lambda stub: stub.Search, search_pb2.SearchRequest(query="x"))
        finally:
            await client.close()

    try:
        reply = asyncio.run(scenario())
    finally:
        for handle in handles:
            handle.stop(0)
    assert reply.text == "too late"
    assert len(starts) == 1 and servicer.search_calls == 1 and restarted.is_set()
    assert client.restarts == 1


def test_refused_twice_reports_unavailable_after_one_retry(settings):
    starts = []
    client = SearchClient(settings, start_stack=lambda s, t: starts.append(t) or False)

    async def scenario():
        try:
            await client.call(lambda stub: stub.Search, search_pb2.SearchRequest(query="x"))
        finally:
            await client.close()

    with pytest.raises(Unavailable):
        asyncio.run(scenario())
    assert len(starts) == 1


class SearchUntilTheDeadline(FaultySearch):
    """Search holds the call until the caller's deadline ends it: the service saw the call, and
    only the deadline (no fixed delay that a loaded machine could outlast) ends it."""

    def Search(self, request, context):
        with self._lock:
            self.search_calls += 1
        ended = threading.Event()
        context.add_callback(ended.set)  # run when the RPC terminates: here, at its deadline
        ended.wait(60)
        self.finished.set()
        return search_pb2.SearchReply(text="too late")


def test_deadline_in_the_service_is_not_retried(settings):
    servicer = SearchUntilTheDeadline()
    handle = start_fake_search(servicer, settings.address("search"))
    starts = []
    # Room for the call to reach the service first even on a loaded machine; then it expires there.
    client = SearchClient(with_overrides(settings, rpc_timeout_s=2.0), start_stack=lambda s, t: starts.append(t))

    async def scenario():
        try:
            await client.call(lambda stub: stub.Search, search_pb2.SearchRequest(query="x"))
        finally:
            await client.close()

    try:
        with pytest.raises(DeadlineExceeded):
            asyncio.run(scenario())
        assert servicer.finished.wait(30), "the service never saw its call end"
    finally:
        handle.stop(0)
    assert servicer.search_calls == 1 and starts == []


def test_a_stream_that_ends_in_an_error_status_raises_the_typed_error(settings):
    """The same mapping as unary calls: the job's status code survives (no in-band "failed" event)."""
    servicer = FaultySearch(prime_fails_with=(grpc.StatusCode.UNAVAILABLE, "vector_svc is not reachable"))
    handle = start_fake_search(servicer, settings.address("search"))
    client = SearchClient(settings, start_stack=lambda s, t: False)
    events: list[search_pb2.PrimeEvent] = []

    async def scenario():
        try:
            async for event in client.stream(lambda stub: stub.PrimeCorpus, search_pb2.CorpusNameRequest(name="n")):
                events.append(event)
        finally:
            await client.close()

    try:
        with pytest.raises(Unavailable, match="vector_svc is not reachable"):
            asyncio.run(scenario())
    finally:
        handle.stop(0)
    assert [e.message for e in events] == ["chunk 1/3"]
    assert client.restarts == 0  # the service saw the call: never sent again
