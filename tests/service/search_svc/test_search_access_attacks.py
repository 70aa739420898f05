"""An attacker holding alice's valid token (project alpha) against a real team server
(store_svc, vector_svc, search_svc with user_tokens): every SearchService RPC and the relayed
StoreService door aimed at project beta. Nothing of beta may come back (its marker word never
appears in any reply or error), and what a beta id or name gets is what a nonexistent one gets."""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import grpc
import pytest

from mnemo.grpc_client import open_channel
from mnemo.logs import configure_logging
from mnemo.v1 import common_pb2, search_pb2, search_pb2_grpc, store_pb2, store_pb2_grpc, vector_pb2, vector_pb2_grpc
from tests.service.search_svc.stack_support import private_stack

pytestmark = [pytest.mark.service, pytest.mark.chroma]

SERVICE_TOKEN = "service-secret-for-attack-tests"
MARK = "narwhal"  # only beta's records contain it; queries use WORD, which they also contain
WORD = "tusk"


@pytest.fixture(scope="module")
def server():
    with private_stack(auth_token=SERVICE_TOKEN, user_tokens=True) as stack:
        admin, channel = stack.store, stack.channel
        secrets = {user: admin.stub.AddToken(store_pb2.AddTokenRequest(user=user, projects=[project])).secret
                   for user, project in (("alice", "alpha"), ("bob", "beta"))}
        search = stack.search_addr
        bob = search_pb2_grpc.SearchServiceStub(channel(search, secrets["bob"]))
        bob.SaveMemory(search_pb2.SaveMemoryRequest(text=f"the {MARK} {WORD} migration plan of beta", project="beta"))
        ids = list(admin.stub.AddObservations(store_pb2.AddObservationsRequest(observations=[common_pb2.Observation(
            memory_session_id="bob-s1", project="beta", type="discovery", title=f"{MARK} tusk {i}",
            narrative=f"the {MARK} of beta, part {i}", external_id=f"beta-ext-{i}") for i in range(3)])).ids)
        tool = admin.stub.RecordToolUse(store_pb2.RecordToolUseRequest(tool_use=common_pb2.ToolUse(
            content_session_id="bob-s1", project="beta", tool_use_id="tu-bob", tool_name="Read",
            tool_input=f'{{"file": "{MARK}.py"}}', observation_ids=ids[:1])))
        bob.WriteWorkState(search_pb2.WorkStateWriteRequest(project="beta", key="plan", content=f"{MARK} {WORD} next"))
        bob.BuildCorpus(search_pb2.BuildCorpusRequest(name="beta-corpus", filter=store_pb2.CorpusFilter(
            project="beta", query=WORD)))
        job = bob.ObservationRecordEvent(search_pb2.ObservationEventRequest(
            event_type="PostToolUse", project_id="beta", content_session_id="bob-s1", generate=True,
            payload_json=f'{{"tool_name": "Edit", "tool_input": {{"file_path": "{MARK}.py"}}, "tool_response": "ok"}}'))
        stack.vector.stub.Sync(vector_pb2.VectorSyncRequest(), timeout=60)
        alice = search_pb2_grpc.SearchServiceStub(channel(search, secrets["alice"]))
        alice.SaveMemory(search_pb2.SaveMemoryRequest(text="the alpha walrus notes", project="alpha"))
        yield SimpleNamespace(
            home=stack.home, settings=stack.settings, channels=stack.channels, ids=ids, tool=tool.id, job=job.job_id,
            alice=alice, bob=bob, secrets=secrets,
            alice_hooks=store_pb2_grpc.StoreServiceStub(channel(search, secrets["alice"])),
            alice_vector=vector_pb2_grpc.VectorServiceStub(channel(stack.vector_addr, secrets["alice"])),
            admin=admin)


def _outcome(call: Callable[[Any], Any], request: Any) -> str:
    """The reply, or the error's code and message, as text."""
    try:
        reply = call(request)
        if not hasattr(reply, "ListFields"):  # a stream
            return "\n".join(str(event) for event in reply)
        return str(reply)
    except grpc.RpcError as err:
        return f"{err.code()}: {err.details()}"


def test_no_search_rpc_returns_anything_of_another_project(server):
    a, beta_id = server.alice, server.ids[0]
    calls = [
        (a.Search, search_pb2.SearchRequest(query=WORD, project="beta")),
        (a.Search, search_pb2.SearchRequest(query=WORD)),
        (a.MemSearch, search_pb2.MemSearchRequest(query=WORD, project="beta")),
        (a.MemSearch, search_pb2.MemSearchRequest(query=WORD, selected_ids=[f"#{beta_id}"])),
        (a.Timeline, search_pb2.TimelineRequest(anchor=f"#{beta_id}")),
        (a.Timeline, search_pb2.TimelineRequest(query=WORD)),
        (a.GetObservations, search_pb2.GetObservationsRequest(ids=server.ids, project="beta")),
        (a.GetToolUses, search_pb2.GetToolUsesToolRequest(ids=[f"T{server.tool}"], project="beta")),
        (a.GetToolUses, search_pb2.GetToolUsesToolRequest(observation_ids=server.ids)),
        (a.GetToolUses, search_pb2.GetToolUsesToolRequest(content_session_id="bob-s1")),
        (a.GetRecordDetail, search_pb2.RecordDetailRequest(id=f"#{beta_id}")),
        (a.ReadWorkState, search_pb2.WorkStateReadRequest(project="beta", key="plan", history=5)),
        (a.SessionStartContext, search_pb2.SessionStartContextRequest(project="beta")),
        (a.Overview, search_pb2.OverviewRequest(project="beta")),
        (a.Overview, search_pb2.OverviewRequest()),
        (a.ListCorpora, search_pb2.ListCorporaToolRequest()),
        (a.QueryCorpus, search_pb2.QueryCorpusToolRequest(name="beta-corpus", question=WORD)),
        (a.PrimeCorpus, search_pb2.CorpusNameRequest(name="beta-corpus")),
        (a.ReprimeCorpus, search_pb2.CorpusNameRequest(name="beta-corpus")),
        (a.ObservationSearch, search_pb2.ObservationSearchRequest(query=WORD, project_id="beta")),
        (a.ObservationSearch, search_pb2.ObservationSearchRequest(query=WORD)),
        (a.ObservationContext, search_pb2.ObservationSearchRequest(query=WORD, project_id="beta")),
        (a.ObservationGenerationStatus, search_pb2.ObservationJobRequest(job_id=server.job)),
        (a.GetCapabilities, search_pb2.GetCapabilitiesRequest()),
    ]
    for call, request in calls:
        seen = _outcome(call, request)
        assert MARK not in seen and "beta-ext" not in seen, (call, request, seen)
    # Asked without naming beta, no reply names it either.
    for call, request in ((a.Search, search_pb2.SearchRequest(query=WORD)), (a.Overview, search_pb2.OverviewRequest()),
                          (a.ListCorpora, search_pb2.ListCorporaToolRequest()),
                          (a.GetCapabilities, search_pb2.GetCapabilitiesRequest()),
                          (a.MemSearch, search_pb2.MemSearchRequest(query=WORD)),
                          (a.ObservationSearch, search_pb2.ObservationSearchRequest(query=WORD))):
        seen = _outcome(call, request)
        assert "beta" not in seen and "bob" not in seen, (call, seen)
    # The admin sees it all: the marker is there to be found.
    assert MARK in str(server.bob.Search(search_pb2.SearchRequest(query=WORD, project="beta")))


def test_beta_ids_and_names_answer_like_nonexistent_ones(server):
    a, beta_id = server.alice, server.ids[0]
    pairs = [
        (a.GetRecordDetail, search_pb2.RecordDetailRequest(id=f"#{beta_id}"),
         search_pb2.RecordDetailRequest(id="#987654"), (str(beta_id), "987654")),
        (a.EditObservation, store_pb2.EditObservationRequest(id=beta_id, title="mine"),
         store_pb2.EditObservationRequest(id=987654, title="mine"), (str(beta_id), "987654")),
        (a.MarkWrong, search_pb2.MarkWrongToolRequest(ids=[f"#{beta_id}"]),
         search_pb2.MarkWrongToolRequest(ids=["#987654"]), (str(beta_id), "987654")),
        (a.Forget, search_pb2.ForgetToolRequest(ids=[f"#{beta_id}"]),
         search_pb2.ForgetToolRequest(ids=["#987654"]), (str(beta_id), "987654")),
        (a.Forget, search_pb2.ForgetToolRequest(sessions=["bob-s1"]),
         search_pb2.ForgetToolRequest(sessions=["nobody-s1"]), ("bob-s1", "nobody-s1")),
        (a.ObservationGenerationStatus, search_pb2.ObservationJobRequest(job_id=server.job),
         search_pb2.ObservationJobRequest(job_id="0" * 32 + ".beta"), (server.job, "0" * 32 + ".beta")),
        (a.PrimeCorpus, search_pb2.CorpusNameRequest(name="beta-corpus"),
         search_pb2.CorpusNameRequest(name="no-such-corpus"), ("beta-corpus", "no-such-corpus")),
    ]
    for call, theirs, missing, (their_word, missing_word) in pairs:
        other = _outcome(call, theirs).replace(their_word, "X")
        none = _outcome(call, missing).replace(missing_word, "X")
        assert other == none, (call, other, none)
    # And nothing was changed by those attempts.
    kept = server.admin.stub.GetRecords(store_pb2.GetRecordsRequest(refs=[common_pb2.Ref(
        kind=common_pb2.DOC_KIND_OBSERVATION, id=beta_id)])).records
    assert kept and kept[0].observation.title == f"{MARK} tusk 0"
    status = server.bob.ObservationGenerationStatus(search_pb2.ObservationJobRequest(job_id=server.job))
    assert status.job_id == server.job


def test_the_relayed_store_door_reaches_only_what_hooks_need(server):
    hooks = server.alice_hooks
    for call, request in ((hooks.Export, store_pb2.ExportRequest()),
                          (hooks.ReadChanges, store_pb2.ReadChangesRequest()),
                          (hooks.Import, store_pb2.ImportRequest()),
                          (hooks.AddToken, store_pb2.AddTokenRequest(user="eve", all_projects=True)),
                          (hooks.AcquireLease, store_pb2.AcquireLeaseRequest(name="x", holder="h")),
                          (hooks.DeleteRecords, store_pb2.DeleteRecordsRequest())):
        seen = _outcome(call, request)
        assert seen.startswith("StatusCode.UNIMPLEMENTED"), seen
    # What it does relay carries alice's token, not the service token: beta stays invisible.
    got = hooks.GetRecords(store_pb2.GetRecordsRequest(refs=[common_pb2.Ref(
        kind=common_pb2.DOC_KIND_OBSERVATION, id=i) for i in server.ids]))
    assert not got.records
    recent = hooks.ListRecent(store_pb2.ListRecentRequest(filters=common_pb2.Filters(project="beta")))
    assert recent.total == 0 and MARK not in str(recent)
    assert not hooks.GetToolUses(store_pb2.GetToolUsesRequest(ids=[server.tool])).tool_uses
    # A relayed call without a token is refused at the front door.
    bare = open_channel(server.settings.address("search"))
    try:
        seen = _outcome(store_pb2_grpc.StoreServiceStub(bare).ListRecent, store_pb2.ListRecentRequest())
    finally:
        bare.close()
    assert seen.startswith("StatusCode.UNAUTHENTICATED"), seen


def test_a_user_token_cannot_reach_vector_svc(server):
    v = server.alice_vector
    for call, request in ((v.Rebuild, vector_pb2.VectorRebuildRequest()),
                          (v.Sync, vector_pb2.VectorSyncRequest()),
                          (v.Query, vector_pb2.VectorQueryRequest(text=MARK)),
                          (v.QueryCorpus, vector_pb2.QueryCorpusRequest(corpus="beta-corpus", project="beta",
                                                                        text=MARK)),
                          (v.DropCorpus, vector_pb2.DropCorpusRequest(corpus="beta-corpus", project="beta"))):
        seen = _outcome(call, request)
        assert seen.startswith("StatusCode.UNAUTHENTICATED"), seen


def test_no_token_reaches_a_log_line_or_a_file(server):
    log_file = server.home / "logs" / "attack.log"
    configure_logging("debug", log_file, service="test")  # every call logged, into a file under home
    try:
        _attack_and_log(server)
    finally:
        configure_logging("warning")
    logged = log_file.read_text()
    assert "rpc_error" in logged and "PERMISSION_DENIED" in logged  # the servers did log these calls
    secrets = [*server.secrets.values(), SERVICE_TOKEN, "mnemo_" + "q" * 43]
    assert not [s for s in secrets if s in logged]
    for path in server.home.rglob("*"):  # database, WAL, index, logs, run files
        if path.is_file():
            data = path.read_bytes()
            assert not [s for s in secrets if s.encode() in data], path


def _attack_and_log(server) -> None:
    channel = open_channel(server.settings.address("search"), auth_token="mnemo_" + "q" * 43)
    server.channels.append(channel)
    stranger = search_pb2_grpc.SearchServiceStub(channel)
    for call, request in ((server.alice.SaveMemory, search_pb2.SaveMemoryRequest(text="x", project="beta")),
                          (server.alice.Timeline, search_pb2.TimelineRequest(anchor="#424242")),
                          (server.alice_hooks.UpsertSession, store_pb2.UpsertSessionRequest(
                              content_session_id="bob-s1", project="beta")),  # bob's id is free in alpha
                          (stranger.Search, search_pb2.SearchRequest(query=WORD))):
        assert _outcome(call, request).startswith("StatusCode.")  # each one an error, each one logged
    refused = _outcome(stranger.PrimeCorpus, search_pb2.CorpusNameRequest(name="beta-corpus"))  # a stream too
    assert refused.startswith("StatusCode.UNAUTHENTICATED"), refused
    assert server.alice.Search(search_pb2.SearchRequest(query=WORD)).counts.total >= 0
