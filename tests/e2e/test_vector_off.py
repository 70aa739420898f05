"""`vector = "off"`: the local stack runs store_svc and search_svc only, and search is full-text."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from mnemo.config import with_overrides
from mnemo.grpc_client import connect
from mnemo.stack import read_pid, run_down, service_healthy
from mnemo.v1 import common_pb2, search_pb2, search_pb2_grpc, store_pb2, store_pb2_grpc
from tests.conftest import REPO_ROOT, processes_of, subprocess_env

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


@pytest.fixture
def off_settings(settings):
    off = with_overrides(settings, vector="off")
    yield off
    run_down(off, None)
    for pid, argv in processes_of(off.home):
        if b"serve" in argv or b"supervise" in argv:
            os.kill(pid, signal.SIGKILL)


def test_vector_off_starts_no_vector_svc_and_searches_full_text(off_settings):
    settings = off_settings
    up = subprocess.run([sys.executable, "-m", "mnemo.cli", "up"], cwd=str(REPO_ROOT), capture_output=True,
                        text=True, timeout=120, env=subprocess_env(settings, MNEMO_VECTOR="off"))
    assert up.returncode == 0, up.stdout + up.stderr
    assert 'vector: off' in up.stdout and service_healthy(settings, "search")
    assert read_pid(settings, "vector") is None and not service_healthy(settings, "vector")
    assert not [argv for _, argv in processes_of(settings.home) if b"serve" in argv and b"vector" in argv]

    store = connect(settings, "store", store_pb2_grpc.StoreServiceStub)
    search = connect(settings, "search", search_pb2_grpc.SearchServiceStub)
    try:
        store.stub.AddObservations(store_pb2.AddObservationsRequest(observations=[common_pb2.Observation(
            memory_session_id="s1", project="p", type="bugfix", title="Fixed the flaky websocket reconnect",
            narrative="the reconnect loop now backs off")]))
        reply = search.stub.Search(search_pb2.SearchRequest(query="websocket reconnect", limit=5))
        capabilities = search.stub.GetCapabilities(search_pb2.GetCapabilitiesRequest()).capabilities
    finally:
        store.close()
        search.close()
    assert (reply.strategy, reply.notice) == ("lexical", "")  # never asked, so nothing to apologise for
    assert [row.title for row in reply.rows] == ["Fixed the flaky websocket reconnect"]
    assert "vector" not in capabilities and "search" in capabilities
