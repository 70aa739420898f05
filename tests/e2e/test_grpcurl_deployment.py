"""The services deployed one by one on loopback TCP, each reachable with grpcurl:
store first, then vector and search given their peers' addresses by flag."""

from __future__ import annotations

import json
import time

import pytest

from tests.grpcurl_support import grpcurl, grpcurl_json, serve, stop

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


@pytest.fixture
def deployed(settings):
    store, store_addr = serve(settings, "store")
    vector, vector_addr = serve(settings, "vector", "--store-addr", store_addr)
    search, search_addr = serve(settings, "search", "--store-addr", store_addr, "--vector-addr", vector_addr)
    yield {"store": store_addr, "vector": vector_addr, "search": search_addr}
    for proc in (search, vector, store):
        stop(proc)


def _wait_for_vector_catch_up(address: str) -> dict:
    deadline = time.monotonic() + 30
    while True:
        status = grpcurl_json(address, "mnemo.v1.VectorService/Status")
        if int(status.get("lag", "0")) == 0 and int(status.get("documents", "0")) > 0:
            return status
        assert time.monotonic() < deadline, status
        grpcurl_json(address, "mnemo.v1.VectorService/Sync")


def test_vector_and_search_are_listed_described_and_called_with_grpcurl(deployed):
    for service, name in (("vector", "mnemo.v1.VectorService"), ("search", "mnemo.v1.SearchService")):
        assert name in grpcurl(deployed[service], "list").split()
        assert "rpc " in grpcurl(deployed[service], "describe", name)
        assert grpcurl_json(deployed[service], "grpc.health.v1.Health/Check")["status"] == "SERVING"

    saved = grpcurl_json("-d", json.dumps({"text": "The flaky checkout test was a timezone bug", "project": "shop"}),
                         deployed["search"], "mnemo.v1.SearchService/SaveMemory")
    status = _wait_for_vector_catch_up(deployed["vector"])
    assert status["model"]

    hits = grpcurl_json("-d", json.dumps({"text": "timezone bug in checkout", "filters": {"project": "shop"}}),
                        deployed["vector"], "mnemo.v1.VectorService/Query")
    assert hits["hits"][0]["ref"]["id"] == saved["id"]

    found = grpcurl_json("-d", json.dumps({"query": "why was checkout flaky?", "project": "shop"}),
                         deployed["search"], "mnemo.v1.SearchService/Search")
    assert found["rows"][0]["display_id"] == f"#{saved['id']}"
    assert found["strategy"] == "hybrid"
