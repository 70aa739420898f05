"""vector_svc against a Chroma server (`chroma run`) started and stopped by the test."""

from __future__ import annotations

from pathlib import Path

import pytest

from mnemo.config import with_overrides
from mnemo.grpc_client import open_channel
from mnemo.v1 import common_pb2, store_pb2, vector_pb2, vector_pb2_grpc
from tests.conftest import start_service
from tests.server_support import start_chroma, stop_process

pytestmark = [pytest.mark.service, pytest.mark.chroma, pytest.mark.slow]

@pytest.fixture
def chroma_url(home: Path):
    process, url = start_chroma(home)
    try:
        yield url
    finally:
        stop_process(process)


def test_index_and_query_through_a_chroma_server(settings, store_stub, chroma_url):
    store_stub.UpsertSession(store_pb2.UpsertSessionRequest(content_session_id="s1", project="alpha"))
    ids = store_stub.AddObservations(store_pb2.AddObservationsRequest(observations=[
        common_pb2.Observation(memory_session_id="s1", project="alpha", type="bugfix",
                               narrative="the websocket reconnect loop spins", facts=["backoff missing"]),
        common_pb2.Observation(memory_session_id="s1", project="alpha", type="decision", narrative="use postgres"),
    ])).ids
    server_settings = with_overrides(settings, chroma_url=chroma_url)
    handle, on_stop = start_service("vector", server_settings)
    channel = open_channel(handle.address)
    try:
        stub = vector_pb2_grpc.VectorServiceStub(channel)
        synced = stub.Sync(vector_pb2.VectorSyncRequest())
        assert (synced.applied, synced.documents) == (2, 3)
        status = stub.Status(vector_pb2.VectorStatusRequest())
        assert status.backend == chroma_url and status.lag == 0
        hits = stub.Query(vector_pb2.VectorQueryRequest(
            text="websocket reconnect", filters=common_pb2.Filters(obs_types=["bugfix"]))).hits
        assert [h.ref.id for h in hits] == [ids[0]]
        assert stub.UpsertCorpusDocuments(vector_pb2.UpsertCorpusDocumentsRequest(
            corpus="c1", documents=[vector_pb2.CorpusDocument(id="a", text="hello", observation_id=1)])).documents == 1
        assert not settings.chroma_dir.exists() or not any(settings.chroma_dir.iterdir())  # nothing embedded locally
    finally:
        channel.close()
        handle.stop(0)
        on_stop()
