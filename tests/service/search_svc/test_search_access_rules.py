"""Every SearchService RPC, called by a token confined to project `beta`, against a team
server whose project `alpha` holds a secret: each RPC has a rule (search_svc.access.RULES),
none answers INTERNAL, none shows the secret, none changes alpha; an RPC without a rule is
refused to user tokens by the server itself."""

from __future__ import annotations

import tempfile
from pathlib import Path

import grpc
import pytest
from google.protobuf import message_factory

from mnemo.grpc_client import open_channel
from mnemo.grpc_server import build_server
from mnemo.identity import Identity
from mnemo.v1 import common_pb2, search_pb2, search_pb2_grpc, store_pb2, store_pb2_grpc
from search_svc import access
from tests.conftest import add_observation
from tests.server_runtime_support import TeamServer

pytestmark = [pytest.mark.service, pytest.mark.slow]

SERVICE_TOKEN = "search-rules-service-token"
SECRET = "zanzibar quokka"  # the words the requests ask for (a refusal may repeat them)
HIDDEN = "7741-XK"  # what only alpha's record holds
SEARCH_METHODS = list(search_pb2.DESCRIPTOR.services_by_name["SearchService"].methods)
# What a refusal may be; a reply that is not refused must hold nothing of alpha.
REFUSALS = {grpc.StatusCode.NOT_FOUND, grpc.StatusCode.PERMISSION_DENIED, grpc.StatusCode.INVALID_ARGUMENT,
            grpc.StatusCode.FAILED_PRECONDITION}


def _requests(oid: int) -> dict[str, dict]:
    """The fields of one request per RPC, each aimed at alpha's record, corpus or project."""
    ref = f"#{oid}"
    return {
        "GetCapabilities": dict(),
        "Search": dict(query=SECRET),
        "Timeline": dict(anchor=ref, query=SECRET),
        "GetObservations": dict(ids=[oid]),
        "MemSearch": dict(query=SECRET, selected_ids=[ref]),
        "GetToolUses": dict(observation_ids=[oid]),
        "SaveMemory": dict(text="planted", project="alpha"),
        "WriteWorkState": dict(project="alpha", content="planted"),
        "ReadWorkState": dict(project="alpha"),
        "SessionStartContext": dict(project="alpha"),
        "BuildCorpus": dict(name="alpha-kb", filter={"project": "alpha"}),
        "ListCorpora": dict(),
        "RebuildCorpus": dict(name="alpha-kb"),
        "PrimeCorpus": dict(name="alpha-kb"),
        "ReprimeCorpus": dict(name="alpha-kb"),
        "QueryCorpus": dict(name="alpha-kb", question=SECRET),
        "Forget": dict(ids=[ref]),
        "EditObservation": dict(id=oid, title="planted"),
        "GetRecordDetail": dict(id=ref),
        "Overview": dict(project="alpha"),
        "MarkWrong": dict(ids=[ref]),
        "ObservationAdd": dict(project_id="alpha", content="planted"),
        "ObservationRecordEvent": dict(project_id="alpha", event_type="note",
                                                            payload_json='{"text": "planted"}'),
        "ObservationSearch": dict(query=SECRET),
        "ObservationContext": dict(project_id="alpha", query=SECRET),
        "ObservationGenerationStatus": dict(job_id="alpha:job"),
    }


def _request(method, oid: int):
    return message_factory.GetMessageClass(method.input_type)(**_requests(oid)[method.name])


def test_every_search_rpc_has_a_rule():
    assert {m.name for m in SEARCH_METHODS} == set(access.RULES), "a SearchService RPC without a rule"
    assert set(_requests(1)) == set(access.RULES), "the scope test below must call every RPC"


@pytest.fixture(scope="module")
def team():
    with tempfile.TemporaryDirectory(prefix="mnemo-srv-") as home:
        server = TeamServer.start(Path(home), SERVICE_TOKEN, user_tokens=True, token_cache_s=0.0)
        channels = [open_channel(server.store_addr, auth_token=SERVICE_TOKEN),
                    open_channel(server.url, auth_token=SERVICE_TOKEN)]
        try:
            store = store_pb2_grpc.StoreServiceStub(channels[0])
            oid = add_observation(store, project="alpha", title=f"The {SECRET} launch codes",
                                  narrative=f"{SECRET} launch code {HIDDEN}")
            search = search_pb2_grpc.SearchServiceStub(channels[1])
            search.BuildCorpus(search_pb2.BuildCorpusRequest(name="alpha-kb",
                                                             filter=store_pb2.CorpusFilter(project="alpha")))
            secret = store.AddToken(store_pb2.AddTokenRequest(user="bob", projects=["beta"])).secret
            yield server, store, oid, secret
        finally:
            for channel in channels:
                channel.close()
            server.stop()


@pytest.mark.parametrize("method", SEARCH_METHODS, ids=lambda m: m.name)
def test_a_confined_token_learns_and_changes_nothing_of_another_project(team, method):
    server, store, oid, secret = team
    before = store.Stats(store_pb2.StatsRequest(project="alpha"))
    channel = open_channel(server.url, auth_token=secret)
    try:
        call = getattr(search_pb2_grpc.SearchServiceStub(channel), method.name)
        request = _request(method, oid)
        try:
            reply = list(call(request, timeout=30)) if method.server_streaming else call(request, timeout=30)
            shown = str(reply)
        except grpc.RpcError as err:
            assert err.code() in REFUSALS, f"{method.name}: {err.code()} {err.details()}"
            shown = err.details() or ""
    finally:
        channel.close()
    assert HIDDEN not in shown and "launch codes" not in shown, shown
    if method.name == "ListCorpora":
        assert "alpha-kb" not in shown, shown
    after = store.Stats(store_pb2.StatsRequest(project="alpha"))
    assert (after.observations, after.summaries, after.prompts) == (
        before.observations, before.summaries, before.prompts)
    record = store.GetRecords(store_pb2.GetRecordsRequest(refs=[
        common_pb2.Ref(kind=common_pb2.DOC_KIND_OBSERVATION, id=oid)])).records
    assert record and record[0].observation.title == f"The {SECRET} launch codes"  # not forgotten, edited, marked
    assert store.ReadWorkState(store_pb2.ReadWorkStateRequest(project="alpha")).current.content == ""


def test_an_rpc_without_a_rule_is_refused_to_user_tokens(tmp_path):
    """The server's own check: user tokens reach only the methods it was given."""
    user = Identity("eve", frozenset({"p"}))

    class Open(search_pb2_grpc.SearchServiceServicer):
        def GetCapabilities(self, request, context):
            return search_pb2.GetCapabilitiesResponse()

    def register(server):
        search_pb2_grpc.add_SearchServiceServicer_to_server(Open(), server)
        return ["mnemo.v1.SearchService"]

    handle = build_server(f"unix:{tmp_path}/s.sock", register, auth_token="svc", resolve_token=lambda s: user,
                          user_methods=frozenset())
    try:
        with open_channel(handle.address, auth_token="user-secret") as channel:
            with pytest.raises(grpc.RpcError) as refused:
                search_pb2_grpc.SearchServiceStub(channel).GetCapabilities(search_pb2.GetCapabilitiesRequest())
            assert refused.value.code() == grpc.StatusCode.PERMISSION_DENIED
            assert "GetCapabilities needs the service (admin) token" in (refused.value.details() or "")
        with open_channel(handle.address, auth_token="svc") as channel:
            assert search_pb2_grpc.SearchServiceStub(channel).GetCapabilities(search_pb2.GetCapabilitiesRequest())
    finally:
        handle.stop(0)
