"""Per-user tokens through a real search_svc (with user_tokens) over a real store and vector
index: search_svc forwards each caller's token to store_svc, so vector hits, totals, cursors,
timelines and fetched records of other projects never reach the caller."""

from __future__ import annotations

from types import SimpleNamespace

import grpc
import pytest

from mnemo.v1 import common_pb2, search_pb2, search_pb2_grpc, store_pb2, store_pb2_grpc, vector_pb2
from tests.service.search_svc.stack_support import private_stack

pytestmark = [pytest.mark.service, pytest.mark.chroma]

SERVICE_TOKEN = "service-secret-for-search-tests"


def _seed(store, project: str, count: int) -> list[int]:
    session = f"{project}-s1"
    store.stub.UpsertSession(store_pb2.UpsertSessionRequest(content_session_id=session, project=project))
    observations = [common_pb2.Observation(
        memory_session_id=session, project=project, type="discovery", title=f"Quokka login loop {project} {i}",
        narrative=f"The quokka login redirect loops in {project}, step {i}.") for i in range(count)]
    return list(store.stub.AddObservations(store_pb2.AddObservationsRequest(observations=observations)).ids)


@pytest.fixture(scope="module")
def team():
    with private_stack(auth_token=SERVICE_TOKEN, user_tokens=True) as stack:
        admin_store = stack.store
        secrets = {user: admin_store.stub.AddToken(store_pb2.AddTokenRequest(user=user, projects=[project])).secret
                   for user, project in (("alice", "alpha"), ("bob", "beta"))}
        ids = {"alpha": _seed(admin_store, "alpha", 3), "beta": _seed(admin_store, "beta", 12)}
        stack.vector.stub.Sync(vector_pb2.VectorSyncRequest(), timeout=60)

        def search_as(token: str) -> search_pb2_grpc.SearchServiceStub:
            return search_pb2_grpc.SearchServiceStub(stack.channel(stack.search_addr, token))

        def store_via_search(token: str) -> store_pb2_grpc.StoreServiceStub:  # the hooks' door in the server runtime
            return store_pb2_grpc.StoreServiceStub(stack.channel(stack.search_addr, token))

        yield SimpleNamespace(ids=ids, alice=search_as(secrets["alice"]), bob=search_as(secrets["bob"]),
                              admin=search_as(SERVICE_TOKEN), stranger=search_as("mnemo_" + "z" * 43),
                              alice_hooks=store_via_search(secrets["alice"]), admin_store=admin_store)


def _refused(call, request) -> tuple[grpc.StatusCode, str]:
    with pytest.raises(grpc.RpcError) as caught:
        call(request)
    return caught.value.code(), caught.value.details() or ""


def test_search_hits_and_counts_are_only_the_callers_projects(team):
    reply = team.alice.Search(search_pb2.SearchRequest(query="quokka login redirect", limit=20))
    assert reply.rows and {r.project for r in reply.rows} == {"alpha"}
    assert reply.counts.total == 3 and "beta" not in reply.text
    assert team.alice.Search(search_pb2.SearchRequest(query="quokka", project="beta")).counts.total == 0
    everything = team.admin.Search(search_pb2.SearchRequest(query="quokka login redirect", limit=20))
    assert {r.project for r in everything.rows} == {"alpha", "beta"} and everything.counts.total == 15


def test_a_cursor_continues_only_for_the_user_who_made_it(team):
    first = team.bob.MemSearch(search_pb2.MemSearchRequest(query="quokka login", limit=5))
    assert first.has_more and first.continuation
    assert team.bob.MemSearch(search_pb2.MemSearchRequest(continuation=first.continuation)).rows
    stolen = _refused(team.alice.MemSearch, search_pb2.MemSearchRequest(continuation=first.continuation))
    unknown = _refused(team.alice.MemSearch, search_pb2.MemSearchRequest(continuation="ms_" + "Q" * 24))
    assert stolen == unknown and stolen[0] == grpc.StatusCode.NOT_FOUND
    own = team.alice.MemSearch(search_pb2.MemSearchRequest(query="quokka login", limit=20))
    assert {r.project for r in own.rows} == {"alpha"} and own.total == 3


def test_timelines_and_fetches_of_other_projects_look_nonexistent(team):
    theirs, mine = team.ids["beta"][0], team.ids["alpha"][0]
    other = _refused(team.alice.Timeline, search_pb2.TimelineRequest(anchor=f"#{theirs}"))
    missing = _refused(team.alice.Timeline, search_pb2.TimelineRequest(anchor="#999999"))
    assert other[0] == missing[0] == grpc.StatusCode.NOT_FOUND
    assert other[1].replace(str(theirs), "N") == missing[1].replace("999999", "N")
    around = team.alice.Timeline(search_pb2.TimelineRequest(anchor=f"#{mine}", depth_after=20, depth_before=20))
    assert {i.project for i in around.items} == {"alpha"}
    got = team.alice.GetObservations(search_pb2.GetObservationsRequest(ids=[theirs, mine]))
    assert [o.id for o in got.observations] == [mine]


def test_writes_through_search_are_confined_and_tokens_are_checked(team):
    code, message = _refused(team.alice.SaveMemory, search_pb2.SaveMemoryRequest(text="mine", project="beta"))
    assert code == grpc.StatusCode.PERMISSION_DENIED and "beta" in message
    saved = team.alice.SaveMemory(search_pb2.SaveMemoryRequest(text="a quokka note of alice", project="alpha"))
    assert saved.text
    code, message = _refused(team.stranger.Search, search_pb2.SearchRequest(query="quokka"))
    assert code == grpc.StatusCode.UNAUTHENTICATED and "mnemo server token add" in message


def test_the_overview_counts_only_the_callers_projects(team):
    mine = team.alice.Overview(search_pb2.OverviewRequest(days=2))
    alpha = team.admin.Overview(search_pb2.OverviewRequest(days=2, project="alpha")).stats
    assert mine.stats.observations == alpha.observations >= 3 and mine.stats.sessions == alpha.sessions
    assert [p.project for p in mine.activity.projects] == ["alpha"]
    assert not mine.HasField("vector")  # the index's counts cover every project
    everything = team.admin.Overview(search_pb2.OverviewRequest(days=2))
    assert everything.stats.observations >= 15 and everything.vector.documents > 0



def test_corpora_of_other_projects_are_invisible(team):
    beta = store_pb2.CorpusFilter(project="beta", query="quokka")
    team.bob.BuildCorpus(search_pb2.BuildCorpusRequest(name="beta-loops", filter=beta))
    assert [c.name for c in team.bob.ListCorpora(search_pb2.ListCorporaToolRequest()).corpora] == ["beta-loops"]
    assert not team.alice.ListCorpora(search_pb2.ListCorporaToolRequest()).corpora
    for call, request in ((team.alice.QueryCorpus, search_pb2.QueryCorpusToolRequest(name="beta-loops",
                                                                                    question="why?")),
                          (team.alice.RebuildCorpus, search_pb2.CorpusNameRequest(name="beta-loops"))):
        other = _refused(call, request)
        unknown = type(request)()
        unknown.CopyFrom(request)
        unknown.name = "no-such-corpus"
        missing = _refused(call, unknown)
        assert other[0] == missing[0] == grpc.StatusCode.NOT_FOUND
        assert other[1].replace("beta-loops", "X") == missing[1].replace("no-such-corpus", "X")
    code, message = _refused(team.alice.BuildCorpus, search_pb2.BuildCorpusRequest(name="mine", filter=beta))
    assert code == grpc.StatusCode.PERMISSION_DENIED and "beta" in message


def test_hooks_writing_through_search_svc_are_scoped_and_signed(team):
    hooks = team.alice_hooks
    code, message = _refused(hooks.UpsertSession, store_pb2.UpsertSessionRequest(content_session_id="h-1",
                                                                               project="beta"))
    assert code == grpc.StatusCode.PERMISSION_DENIED and "beta" in message
    hooks.UpsertSession(store_pb2.UpsertSessionRequest(content_session_id="h-2", project="alpha"))
    hooks.RecordPrompt(store_pb2.RecordPromptRequest(content_session_id="h-2", prompt_text="a wombat prompt"))
    rows = team.admin_store.stub.Search(store_pb2.StoreSearchRequest(query="wombat")).hits
    record = team.admin_store.stub.GetRecords(store_pb2.GetRecordsRequest(refs=[rows[0].ref])).records[0]
    assert record.prompt.writer == "alice" and record.prompt.project == "alpha"

