"""search_svc in the server runtime: the StoreService front door for hooks (whitelisted,
token checked, store errors passed through) and the observation RPCs, whose job state any
replica reads."""

from __future__ import annotations

import tempfile
from pathlib import Path

import grpc
import pytest

from mnemo.grpc_client import open_channel
from mnemo.v1 import common_pb2, search_pb2, search_pb2_grpc, store_pb2, store_pb2_grpc
from tests.conftest import start_service, wait_for
from tests.server_runtime_support import TeamServer

pytestmark = pytest.mark.service

TOKEN = "svc-token-5e1d"
BASH_EVENT = ('{"tool_name": "Bash", "tool_input": {"command": "pytest -q"}, '
              '"tool_response": {"stdout": "3 passed", "exit_code": 0}}')


@pytest.fixture
def server():
    with tempfile.TemporaryDirectory(prefix="mnemo-srv-") as home:
        team = TeamServer.start(Path(home), TOKEN)
        try:
            yield team
        finally:
            team.stop()


def _stubs(address: str, token: str = TOKEN):
    channel = open_channel(address, auth_token=token)
    return channel, store_pb2_grpc.StoreServiceStub(channel), search_pb2_grpc.SearchServiceStub(channel)


def test_hooks_reach_the_store_through_search_svc_and_nothing_else(server):
    channel, store, _ = _stubs(server.url)
    try:
        session = store.UpsertSession(store_pb2.UpsertSessionRequest(content_session_id="c1", project="p"))
        assert session.project == "p"
        added = store.AddObservations(store_pb2.AddObservationsRequest(observations=[common_pb2.Observation(
            memory_session_id=session.memory_session_id, project="p", type="discovery", title="t", narrative="n")]))
        assert added.created == [True]
        with pytest.raises(grpc.RpcError) as bad:  # the store's own validation, status and message
            store.AddObservations(store_pb2.AddObservationsRequest(observations=[common_pb2.Observation()]))
        assert bad.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "memory_session_id" in bad.value.details()
        for call, request in ((store.DeleteRecords, store_pb2.DeleteRecordsRequest()),
                              (store.ReadChanges, store_pb2.ReadChangesRequest()),
                              (store.Stats, store_pb2.StatsRequest())):
            with pytest.raises(grpc.RpcError) as refused:
                call(request)
            assert refused.value.code() == grpc.StatusCode.UNIMPLEMENTED
    finally:
        channel.close()
    stranger, store, _ = _stubs(server.url, token="wrong")
    try:
        with pytest.raises(grpc.RpcError) as denied:
            store.UpsertSession(store_pb2.UpsertSessionRequest(content_session_id="c2", project="p"))
        assert denied.value.code() == grpc.StatusCode.UNAUTHENTICATED
    finally:
        stranger.close()


def test_a_generation_job_is_answered_by_any_replica(server):
    second, stop_second = start_service("search", server.settings, "127.0.0.1:0")
    channel, _, search = _stubs(server.url)
    other, _, search_b = _stubs(second.address)
    try:
        reply = search.ObservationRecordEvent(search_pb2.ObservationEventRequest(
            project_id="p", event_type="Bash", generate=True, content_session_id="c9",
            payload_json=BASH_EVENT))
        assert reply.job_id.endswith(".p") and reply.event_id > 0
        done = wait_for(lambda: (s := search_b.ObservationGenerationStatus(
            search_pb2.ObservationJobRequest(job_id=reply.job_id))).status in ("done", "failed") and s, 30,
            "the job to finish")
        assert (done.status, done.events) == ("done", 1) and done.observations >= 1, done
        # The same event again: one event row, the same observations.
        again = search.ObservationRecordEvent(search_pb2.ObservationEventRequest(
            project_id="p", event_type="Bash", content_session_id="c9", payload_json=BASH_EVENT))
        assert again.event_id == reply.event_id
        with pytest.raises(grpc.RpcError) as bad:
            search_b.ObservationGenerationStatus(search_pb2.ObservationJobRequest(job_id="nope"))
        assert bad.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "jobId" in bad.value.details()
        with pytest.raises(grpc.RpcError) as bounds:
            search.ObservationSearch(search_pb2.ObservationSearchRequest(query="x", limit=101))
        assert "limit: must be between 1 and 100" in bounds.value.details()
        with pytest.raises(grpc.RpcError) as source:
            search.ObservationRecordEvent(search_pb2.ObservationEventRequest(event_type="x", source_type="cron"))
        assert "sourceType: must be one of hook, worker, provider, server, api" in source.value.details()
    finally:
        channel.close()
        other.close()
        second.stop(0.5)
        stop_second()



def test_the_front_door_presents_the_callers_own_token_to_the_store():
    with tempfile.TemporaryDirectory(prefix="mnemo-srv-") as home:
        team = TeamServer.start(Path(home), TOKEN, user_tokens=True)
        admin, admin_store, _ = _stubs(team.store_addr)
        try:
            secret = admin_store.AddToken(store_pb2.AddTokenRequest(user="bo", projects=["p"])).secret
            channel, store, _ = _stubs(team.url, token=secret)
            try:
                mine = store.UpsertSession(store_pb2.UpsertSessionRequest(content_session_id="c1", project="p"))
                assert mine.writer == "bo"
                with pytest.raises(grpc.RpcError) as denied:
                    store.UpsertSession(store_pb2.UpsertSessionRequest(content_session_id="c2", project="q"))
                assert denied.value.code() == grpc.StatusCode.PERMISSION_DENIED
            finally:
                channel.close()
        finally:
            admin.close()
            team.stop()
