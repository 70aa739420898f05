"""The server side of trust: only `Bearer <token>` passes, a refused bind touches no file,
and a refusal met downstream never looks like the caller's own refused connection."""

from __future__ import annotations

import subprocess
import sys

import grpc
import pytest

from mnemo.config import with_overrides
from mnemo.errors import Unavailable, downstream_unavailable, is_connection_refused, is_refusal
from mnemo.grpc_client import open_channel
from mnemo.v1 import store_pb2, store_pb2_grpc
from tests.conftest import BOTH_BACKENDS, REPO_ROOT, start_service, subprocess_env

pytestmark = pytest.mark.service

TOKEN = "s3cret-token-for-tests"


@pytest.fixture
def guarded_store(settings):
    """store_svc on a Unix socket that requires the bearer token."""
    guarded = with_overrides(settings, auth_token=TOKEN)
    handle, on_stop = start_service("store", guarded)
    yield handle
    handle.stop(0.2)
    on_stop()


def stats_with(address: str, authorization: str | None):
    channel = grpc.insecure_channel(address)
    metadata = [("authorization", authorization)] if authorization is not None else None
    try:
        return store_pb2_grpc.StoreServiceStub(channel).Stats(store_pb2.StatsRequest(), metadata=metadata, timeout=5)
    finally:
        channel.close()


@BOTH_BACKENDS
@pytest.mark.parametrize("authorization", [None, TOKEN, f"bearer {TOKEN}", f"Bearer  {TOKEN}", "Bearer wrong",
                                           f"Basic {TOKEN}", f"{TOKEN}Bearer "])
def test_anything_but_bearer_and_the_token_is_unauthenticated(guarded_store, authorization):
    with pytest.raises(grpc.RpcError) as failure:
        stats_with(guarded_store.address, authorization)
    assert failure.value.code() == grpc.StatusCode.UNAUTHENTICATED


@BOTH_BACKENDS
def test_bearer_and_the_token_pass(guarded_store):
    assert stats_with(guarded_store.address, f"Bearer {TOKEN}") is not None
    channel = open_channel(guarded_store.address, auth_token=TOKEN)  # what every client of ours sends
    assert store_pb2_grpc.StoreServiceStub(channel).Stats(store_pb2.StatsRequest(), timeout=5) is not None
    channel.close()


def test_a_refused_bind_beyond_loopback_creates_no_database(settings):
    result = subprocess.run([sys.executable, "-m", "mnemo.cli", "serve", "store", "--listen", "0.0.0.0:0"],
                            env=subprocess_env(settings), cwd=str(REPO_ROOT), capture_output=True, text=True,
                            timeout=60)
    assert result.returncode != 0
    assert "beyond loopback" in result.stderr
    assert not settings.database.exists()  # refused before the store opened (and migrated) anything


def test_a_downstream_refusal_is_restated_without_the_refusal_markers():
    refused = Unavailable("failed to connect to all addresses; last error: UNAVAILABLE: unix:/x: Connection refused")
    assert is_refusal(refused)
    restated = downstream_unavailable(refused, "SearchService")
    assert isinstance(restated, Unavailable) and not is_refusal(restated)
    assert restated.message.startswith("SearchService could not reach a service it depends on")
    other = Unavailable("socket closed")
    assert downstream_unavailable(other, "SearchService") is other


def test_search_with_its_store_down_answers_unavailable_but_not_refused(settings):
    """search_svc up, store_svc down: the gateway must not read the answer as its own refusal."""
    handle, on_stop = start_service("search", settings)
    try:
        channel = open_channel(handle.address)
        from mnemo.v1 import search_pb2, search_pb2_grpc

        with pytest.raises(grpc.RpcError) as failure:
            search_pb2_grpc.SearchServiceStub(channel).SaveMemory(
                search_pb2.SaveMemoryRequest(text="a memory while the store is down"), timeout=10)
        channel.close()
    finally:
        handle.stop(0.2)
        on_stop()
    assert failure.value.code() == grpc.StatusCode.UNAVAILABLE
    assert "could not reach a service it depends on" in failure.value.details()
    assert not is_connection_refused(failure.value)


def test_an_error_text_reaches_the_wire_and_the_log_filtered_and_short():
    from mnemo.grpc_server import MESSAGE_MAX_CHARS, quoted

    text = "type: must be one of a, b; got 'x<private>zqhidden</private>" + "y" * 4_000_000
    shown = quoted(text)
    assert "zqhidden" not in shown and len(shown) <= MESSAGE_MAX_CHARS
    assert shown.startswith("type: must be one of a, b; got 'x")
