"""Smoke test with the real grpcurl binary against `mnemo serve store` running as a subprocess:
reflection (list, describe), a call with -d, and the standard health check."""

from __future__ import annotations

import json

import pytest

from tests.conftest import BOTH_BACKENDS
from tests.grpcurl_support import grpcurl as _run
from tests.grpcurl_support import serve, stop

pytestmark = [pytest.mark.service, pytest.mark.slow, BOTH_BACKENDS]


@pytest.fixture
def served_store(settings):
    proc, address = serve(settings, "store")
    yield address
    stop(proc)


def test_grpcurl_lists_describes_calls_and_checks_health(served_store):
    listed = _run(served_store, "list").split()
    assert {"mnemo.v1.StoreService", "grpc.health.v1.Health", "grpc.reflection.v1alpha.ServerReflection"} <= set(listed)
    described = _run(served_store, "describe", "mnemo.v1.StoreService")
    assert "rpc AddObservations" in described and "rpc Search" in described
    added = json.loads(_run("-d", json.dumps({"observations": [{
        "memory_session_id": "grpcurl", "project": "demo", "type": "discovery",
        "title": "grpcurl can call the store", "narrative": "reflection works"}]}),
        served_store, "mnemo.v1.StoreService/AddObservations"))
    assert added["created"] == [True]
    found = json.loads(_run("-d", '{"query": "how can grpcurl call it?"}', served_store,
                            "mnemo.v1.StoreService/Search"))
    assert found["hits"][0]["display_id"] == f"#{added['ids'][0]}", found
    stats = json.loads(_run(served_store, "mnemo.v1.StoreService/Stats"))
    assert stats["observations"] == "1"
    health = json.loads(_run(served_store, "grpc.health.v1.Health/Check"))
    assert health["status"] == "SERVING"
