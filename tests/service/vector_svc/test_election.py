"""vector_svc.election against a real store_svc: one leader at a time, handed on at a stop or an expiry."""

from __future__ import annotations

import time

import pytest

from mnemo.grpc_client import connect
from mnemo.v1 import store_pb2_grpc
from vector_svc.election import Election

pytestmark = pytest.mark.service


@pytest.fixture
def store_client(settings, store_server):
    client = connect(settings, "store", store_pb2_grpc.StoreServiceStub)
    yield client
    client.close()


def test_one_leader_then_the_standby_after_a_graceful_stop(store_client):
    first, second = (Election(store_client, 60_000, 0.05, holder=h) for h in ("replica-a", "replica-b"))
    first.tick()
    second.tick()
    assert (first.may_follow(), second.may_follow()) == (True, False)
    first.tick()  # a renewal keeps it
    assert first.may_follow()
    first.stop()  # released at once, not after 60 s
    assert not first.may_follow()
    second.tick()
    assert second.may_follow()


def test_an_expired_leader_is_replaced_and_stops_following(store_client):
    old, new = Election(store_client, 300, 0.05, holder="old"), Election(store_client, 60_000, 0.05, holder="new")
    old.tick()
    assert old.may_follow()
    deadline = time.monotonic() + 5
    while not new.may_follow():  # the old leader renews no more (as if paused or killed)
        assert time.monotonic() < deadline, "the standby never took the expired lease"
        new.tick()
        time.sleep(0.02)
    assert not old.may_follow()  # its own clock already told it the lease was gone
    old.tick()
    assert not old.leader and new.may_follow()


def test_an_unreachable_store_stops_the_leader_before_its_lease_can_lapse(settings, store_client, store_server):
    leader = Election(store_client, 400, 0.05, holder="lonely")
    leader.tick()
    assert leader.may_follow()
    store_server.stop(0)  # the store goes away: no renewal can succeed
    deadline = time.monotonic() + 5
    while leader.may_follow():
        leader.tick()
        assert time.monotonic() < deadline, "a leader that cannot renew kept following"
        time.sleep(0.02)
    leader.tick()  # the next failed renewal also drops the title
    assert not leader.leader and not leader.may_follow()
