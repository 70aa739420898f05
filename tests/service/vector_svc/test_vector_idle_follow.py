"""vector_svc rests only with nothing left to follow: the follower asks the store's change feed
at that moment, and applying changes is use (vector_svc.idle)."""

from __future__ import annotations

import pytest

from mnemo.grpc_client import connect
from mnemo.v1 import common_pb2, store_pb2, store_pb2_grpc, vector_pb2
from vector_svc.corpus import Corpora
from vector_svc.embedders import HashEmbedder
from vector_svc.follower import Follower
from vector_svc.idle import Activity
from vector_svc.index import ChromaConnection, VectorIndex
from vector_svc.servicer import VectorServicer

pytestmark = [pytest.mark.service, pytest.mark.chroma]


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def add(store_stub, *narratives: str) -> None:
    store_stub.AddObservations(store_pb2.AddObservationsRequest(observations=[
        common_pb2.Observation(memory_session_id="s1", project="p", type="discovery", narrative=text)
        for text in narratives]))


def test_a_backlog_in_the_feed_keeps_it_up_and_applying_it_is_use(settings, store_server, store_stub):
    add(store_stub, "first record", "second record")
    store = connect(settings, "store", store_pb2_grpc.StoreServiceStub)
    connection = ChromaConnection(settings)
    clock = Clock()
    activity = Activity(clock)
    try:
        follower = Follower(VectorIndex(connection, HashEmbedder()), store, 50, activity=activity)
        assert not follower.nothing_to_follow()
        clock.now += 900.0
        follower.sync()
        assert follower.nothing_to_follow() and activity.idle_for() == 0.0
        add(store_stub, "a record written after the catch-up")
        assert not follower.nothing_to_follow()
    finally:
        connection.close()
        store.close()


def test_queries_are_use_and_the_background_status_and_count_are_not(settings, store_server, store_stub):
    add(store_stub, "a record to find")
    store = connect(settings, "store", store_pb2_grpc.StoreServiceStub)
    connection = ChromaConnection(settings)
    clock = Clock()
    activity = Activity(clock)
    try:
        embedder = HashEmbedder()
        index = VectorIndex(connection, embedder)
        follower = Follower(index, store, 50)
        servicer = VectorServicer(index, follower, Corpora(connection, embedder), activity)
        clock.now += 900.0
        servicer.Status(vector_pb2.VectorStatusRequest(), None)
        servicer.Count(vector_pb2.VectorCountRequest(), None)
        assert activity.idle_for() == 900.0  # what search_svc and gateways ask in the background
        servicer.Sync(vector_pb2.VectorSyncRequest(), None)
        assert activity.idle_for() == 0.0
        clock.now += 900.0
        servicer.Query(vector_pb2.VectorQueryRequest(text="a record", limit=5), None)
        assert activity.idle_for() == 0.0
    finally:
        connection.close()
        store.close()
