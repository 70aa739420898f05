"""Per-user tokens on a real store_svc over gRPC: scope of every read and write path, writers,
hashed storage, revocation. Two users: alice may use project `alpha`, bob project `beta`."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import grpc
import pytest

from mnemo.config import Settings, with_overrides
from mnemo.grpc_client import open_channel
from mnemo.v1 import common_pb2, store_pb2, store_pb2_grpc
from store_svc.core import Store
from tests.conftest import BOTH_BACKENDS, start_service, wait_for

pytestmark = [pytest.mark.service, BOTH_BACKENDS]

SERVICE_TOKEN = "service-secret-for-tests"
OBS, SUM, PROMPT = common_pb2.DOC_KIND_OBSERVATION, common_pb2.DOC_KIND_SUMMARY, common_pb2.DOC_KIND_PROMPT


@dataclass
class Team:
    settings: Settings
    address: str
    admin: store_pb2_grpc.StoreServiceStub
    alice: store_pb2_grpc.StoreServiceStub
    bob: store_pb2_grpc.StoreServiceStub
    secrets: dict[str, str]
    channels: list[grpc.Channel]

    def stub(self, token: str) -> store_pb2_grpc.StoreServiceStub:
        channel = open_channel(self.address, auth_token=token)
        self.channels.append(channel)
        return store_pb2_grpc.StoreServiceStub(channel)


def secured(settings: Settings, **extra: object) -> Settings:
    return with_overrides(settings, auth_token=SERVICE_TOKEN, user_tokens=True, **extra)


@pytest.fixture
def team(settings: Settings):
    settings = secured(settings, token_cache_s=0.2)
    handle, on_stop = start_service("store", settings)
    channels: list[grpc.Channel] = []
    team = Team(settings, handle.address, None, None, None, {}, channels)  # type: ignore[arg-type]
    team.admin = team.stub(SERVICE_TOKEN)
    for user, project in (("alice", "alpha"), ("bob", "beta")):
        reply = team.admin.AddToken(store_pb2.AddTokenRequest(user=user, projects=[project]))
        team.secrets[user] = reply.secret
    team.alice, team.bob = team.stub(team.secrets["alice"]), team.stub(team.secrets["bob"])
    try:
        yield team
    finally:
        for channel in channels:
            channel.close()
        handle.stop(0.5)
        on_stop()


def fails(call, *args, code: grpc.StatusCode) -> str:
    with pytest.raises(grpc.RpcError) as caught:
        call(*args)
    assert caught.value.code() == code, caught.value.details()
    return caught.value.details() or ""


def seed(stub, project: str, session: str, word: str = "zebra") -> dict[str, int]:
    """A session with a prompt, an observation, a summary and a tool use, all mentioning `word`."""
    stub.UpsertSession(store_pb2.UpsertSessionRequest(content_session_id=session, project=project))
    prompt = stub.RecordPrompt(store_pb2.RecordPromptRequest(content_session_id=session, project=project,
                                                             prompt_text=f"look at the {word} please")).prompt
    obs = stub.AddObservations(store_pb2.AddObservationsRequest(observations=[common_pb2.Observation(
        memory_session_id=session, project=project, type="discovery", title=f"{word} stripes in {project}",
        narrative=f"the {word} of {project}")])).ids[0]
    summary = stub.AddSummaries(store_pb2.AddSummariesRequest(summaries=[common_pb2.Summary(
        memory_session_id=session, project=project, request=f"study the {word}")])).ids[0]
    tool = stub.RecordToolUse(store_pb2.RecordToolUseRequest(tool_use=common_pb2.ToolUse(
        content_session_id=session, project=project, tool_use_id=f"tu-{session}", tool_name="Read",
        tool_input='{"file": "z.py"}', observation_ids=[obs])))
    return {"prompt": prompt.id, "obs": obs, "summary": summary, "tool": tool.id}


def refs(ids: dict[str, int]) -> list[common_pb2.Ref]:
    return [common_pb2.Ref(kind=OBS, id=ids["obs"]), common_pb2.Ref(kind=SUM, id=ids["summary"]),
            common_pb2.Ref(kind=PROMPT, id=ids["prompt"])]


def table(settings: Settings, sql: str) -> list[tuple]:
    """Rows of the store's own tables, read beside the running server (either backend)."""
    store = Store.from_settings(settings)
    try:
        with store.reading() as conn:
            return [tuple(row) for row in conn.execute(sql).fetchall()]
    finally:
        store.close()


def test_tokens_are_stored_hashed_and_listed_without_secrets(team: Team):
    rows = table(team.settings, "SELECT user_name, token_hash, projects FROM access_tokens ORDER BY id")
    assert [(r[0], r[2]) for r in rows] == [("alice", '["alpha"]'), ("bob", '["beta"]')]
    assert rows[0][1] == hashlib.sha256(team.secrets["alice"].encode()).hexdigest()
    assert team.secrets["alice"].startswith("mnemo_") and len(team.secrets["alice"]) == 6 + 43
    for path in team.settings.home.glob("mnemo.db*"):  # the secret is in no file, WAL included
        assert team.secrets["alice"].encode() not in path.read_bytes()
    listed = team.admin.ListTokens(store_pb2.ListTokensRequest())
    assert [(t.user, list(t.projects)) for t in listed.tokens] == [("alice", ["alpha"]), ("bob", ["beta"])]
    assert team.secrets["alice"] not in str(listed)


def test_token_administration_needs_the_service_token(team: Team):
    for call, request in ((team.alice.AddToken, store_pb2.AddTokenRequest(user="eve", all_projects=True)),
                          (team.alice.ListTokens, store_pb2.ListTokensRequest()),
                          (team.bob.RevokeToken, store_pb2.RevokeTokenRequest(id=1)),
                          (team.alice.ReadChanges, store_pb2.ReadChangesRequest()),
                          (team.alice.DeleteRecords, store_pb2.DeleteRecordsRequest()),
                          (team.alice.AcquireLease, store_pb2.AcquireLeaseRequest(name="x", holder="h"))):
        assert "service (admin) token" in fails(call, request, code=grpc.StatusCode.PERMISSION_DENIED)
    assert team.alice.PurgeCursors(store_pb2.PurgeCursorsRequest()).purged == 0  # allowed, counts withheld
    message = fails(team.admin.AddToken, store_pb2.AddTokenRequest(user="eve"), code=grpc.StatusCode.INVALID_ARGUMENT)
    assert message.startswith("projects:")


def test_unknown_and_revoked_tokens_are_refused_with_what_to_do(team: Team):
    stranger = team.stub("mnemo_" + "x" * 43)
    message = fails(stranger.Stats, store_pb2.StatsRequest(), code=grpc.StatusCode.UNAUTHENTICATED)
    assert "mnemo server token add" in message
    assert team.alice.WhoAmI(store_pb2.WhoAmIRequest()).user == "alice"
    alice_id = team.admin.ListTokens(store_pb2.ListTokensRequest()).tokens[0].id
    assert team.admin.RevokeToken(store_pb2.RevokeTokenRequest(id=alice_id)).revoked_at_epoch > 0

    def refused() -> bool:
        try:
            team.alice.WhoAmI(store_pb2.WhoAmIRequest())
        except grpc.RpcError as err:
            return err.code() == grpc.StatusCode.UNAUTHENTICATED
        return False

    wait_for(refused, 5.0, "the revocation to take effect (token_cache_s)")
    assert [t.user for t in team.admin.ListTokens(store_pb2.ListTokensRequest()).tokens] == ["bob"]


def test_writes_into_another_project_are_refused_and_leave_nothing(team: Team):
    seed(team.bob, "beta", "bob-1")
    before = team.admin.Stats(store_pb2.StatsRequest())
    denied = grpc.StatusCode.PERMISSION_DENIED
    attempts = [
        (team.alice.UpsertSession, store_pb2.UpsertSessionRequest(content_session_id="a-1", project="beta")),
        (team.alice.RecordPrompt, store_pb2.RecordPromptRequest(content_session_id="a-2", project="beta",
                                                                prompt_text="hi")),
        (team.alice.AddObservations, store_pb2.AddObservationsRequest(observations=[
            common_pb2.Observation(memory_session_id="a-3", project="alpha", type="discovery", title="ok"),
            common_pb2.Observation(memory_session_id="a-3", project="beta", type="discovery", title="no")])),
        (team.alice.AddSummaries, store_pb2.AddSummariesRequest(summaries=[common_pb2.Summary(
            memory_session_id="a-4", project="beta", request="x")])),
        (team.alice.RecordToolUse, store_pb2.RecordToolUseRequest(tool_use=common_pb2.ToolUse(
            content_session_id="a-5", project="beta", tool_name="Read"))),
        (team.alice.WriteWorkState, store_pb2.WriteWorkStateRequest(project="beta", content="mine now")),
        (team.alice.PutCorpus, store_pb2.Corpus(name="c-beta", filter=store_pb2.CorpusFilter(project="beta"))),
        (team.alice.PutCorpus, store_pb2.Corpus(name="c-all")),
        (team.alice.Import, store_pb2.ImportRequest(items=[store_pb2.ExportItem(session=common_pb2.Session(
            content_session_id="a-6", project="beta"))])),
        (team.alice.Forget, store_pb2.ForgetRequest(project="beta")),
    ]
    for call, request in attempts:
        message = fails(call, request, code=denied)
        assert "beta" in message or "outside" in message, message
    # Naming bob's session is no way into it (tests/service/store_svc/test_session_projects.py:
    # alice's write makes a session of her own); completing it answers as for an unknown one.
    closed = fails(team.alice.CompleteSession, store_pb2.CompleteSessionRequest(content_session_id="bob-1"),
                   code=grpc.StatusCode.NOT_FOUND)
    unknown = fails(team.alice.CompleteSession, store_pb2.CompleteSessionRequest(content_session_id="nope-1"),
                    code=grpc.StatusCode.NOT_FOUND)
    assert closed.replace("bob-1", "X") == unknown.replace("nope-1", "X")
    after = team.admin.Stats(store_pb2.StatsRequest())
    assert (after.sessions, after.prompts, after.observations, after.summaries, after.tool_uses) == (
        before.sessions, before.prompts, before.observations, before.summaries, before.tool_uses)
    assert not team.admin.ReadWorkState(store_pb2.ReadWorkStateRequest(project="beta")).HasField("current")
    assert not team.admin.ListCorpora(store_pb2.ListCorporaRequest()).corpora
    # The same writes into alice's own project succeed.
    team.alice.WriteWorkState(store_pb2.WriteWorkStateRequest(project="alpha", content="where I was"))
    seed(team.alice, "alpha", "alice-1")


def test_a_confined_token_reads_and_infers_nothing_of_other_projects(team: Team):
    mine, theirs = seed(team.alice, "alpha", "alice-1"), seed(team.bob, "beta", "bob-1")
    alice = team.alice
    found = alice.Search(store_pb2.StoreSearchRequest(query="zebra"))
    assert {h.project for h in found.hits} == {"alpha"} and found.total == 3
    assert (found.observation_total, found.summary_total, found.prompt_total) == (1, 1, 1)
    assert alice.Search(store_pb2.StoreSearchRequest(query="zebra", filters=common_pb2.Filters(
        project="beta"))).total == 0
    # A client cannot widen its scope by sending one.
    widened = common_pb2.Filters(scope_projects=["alpha", "beta"])
    assert alice.Search(store_pb2.StoreSearchRequest(query="zebra", filters=widened)).total == 3
    assert alice.ListRecent(store_pb2.ListRecentRequest(filters=widened)).total == 3
    assert not alice.Hydrate(store_pb2.HydrateRequest(refs=refs(theirs))).rows
    assert len(alice.Hydrate(store_pb2.HydrateRequest(refs=refs(mine))).rows) == 3
    got = alice.GetRecords(store_pb2.GetRecordsRequest(refs=refs(theirs) + refs(mine)))
    assert len(got.records) == 3 and not got.marked_wrong
    assert {r.observation.project for r in got.records if r.HasField("observation")} == {"alpha"}
    # A timeline anchor of another project: word for word what a nonexistent id gets.
    other = fails(alice.Timeline, store_pb2.StoreTimelineRequest(ref=common_pb2.Ref(kind=OBS, id=theirs["obs"]),
                                                                  depth_after=5), code=grpc.StatusCode.NOT_FOUND)
    missing = fails(alice.Timeline, store_pb2.StoreTimelineRequest(ref=common_pb2.Ref(kind=OBS, id=999),
                                                                    depth_after=5), code=grpc.StatusCode.NOT_FOUND)
    assert other.replace(str(theirs["obs"]), "N") == missing.replace("999", "N")
    around = alice.Timeline(store_pb2.StoreTimelineRequest(epoch=1, depth_after=20))
    assert {r.project for r in around.rows} == {"alpha"}
    tools = alice.GetToolUses(store_pb2.GetToolUsesRequest(ids=[mine["tool"], theirs["tool"]]))
    assert [t.id for t in tools.tool_uses] == [mine["tool"]]
    stats = alice.Stats(store_pb2.StatsRequest())
    assert (stats.sessions, stats.prompts, stats.observations, stats.summaries, stats.tool_uses) == (1, 1, 1, 1, 1)
    assert stats.db_bytes == 0 and stats.head_seq == 0
    assert alice.Stats(store_pb2.StatsRequest(project="beta")) == alice.Stats(store_pb2.StatsRequest(project="nope"))
    activity = alice.Activity(store_pb2.ActivityRequest(days=2))
    assert [p.project for p in activity.projects] == ["alpha"]
    assert sum(d.observations for d in activity.days) == 1
    assert sum(d.observations for d in alice.Activity(store_pb2.ActivityRequest(project="beta")).days) == 0
    assert alice.Activity(store_pb2.ActivityRequest(project="beta")) == alice.Activity(
        store_pb2.ActivityRequest(project="nope"))
    exported = list(alice.Export(store_pb2.ExportRequest()))
    assert exported and {getattr(i, i.WhichOneof("item")).project for i in exported} == {"alpha"}
    assert not list(alice.Export(store_pb2.ExportRequest(project="beta")))


def test_corpora_cursors_work_state_and_curation_of_others_look_nonexistent(team: Team):
    theirs = seed(team.bob, "beta", "bob-1")
    team.bob.PutCorpus(store_pb2.Corpus(name="beta-notes", filter=store_pb2.CorpusFilter(project="beta")))
    team.bob.WriteWorkState(store_pb2.WriteWorkStateRequest(project="beta", content="bob was here"))
    alice, not_found = team.alice, grpc.StatusCode.NOT_FOUND
    assert not alice.ListCorpora(store_pb2.ListCorporaRequest()).corpora
    assert [c.name for c in team.bob.ListCorpora(store_pb2.ListCorporaRequest()).corpora] == ["beta-notes"]
    for name in ("beta-notes", "no-such"):
        got = fails(alice.GetCorpus, store_pb2.GetCorpusRequest(name=name), code=not_found)
        assert got == f"corpus {name!r} not found; list_corpora shows the existing ones"
        fails(alice.UpdateCorpus, store_pb2.UpdateCorpusRequest(name=name, digest_json="{}"), code=not_found)
    assert not alice.ReadWorkState(store_pb2.ReadWorkStateRequest(project="beta")).HasField("current")
    token = "ms_" + "B" * 24
    team.bob.SaveCursor(store_pb2.Cursor(token=token, state_json="{}"))
    assert team.bob.LoadCursor(store_pb2.LoadCursorRequest(token=token)).token == token
    stolen = fails(alice.LoadCursor, store_pb2.LoadCursorRequest(token=token), code=not_found)
    unknown = fails(alice.LoadCursor, store_pb2.LoadCursorRequest(token="ms_" + "C" * 24), code=not_found)
    assert stolen == unknown
    edited = fails(alice.EditObservation, store_pb2.EditObservationRequest(id=theirs["obs"], title="mine"),
                   code=not_found)
    assert edited == f"observation #{theirs['obs']} not found; search first to find valid ids"
    marked = fails(alice.MarkWrong, store_pb2.MarkWrongRequest(refs=[common_pb2.Ref(kind=OBS, id=theirs["obs"])]),
                   code=not_found)
    assert marked == f"no such record: #{theirs['obs']}; search first to find valid ids"
    forgotten = fails(alice.Forget, store_pb2.ForgetRequest(refs=refs(theirs), sessions=["bob-1"]), code=not_found)
    assert forgotten == fails(alice.Forget, store_pb2.ForgetRequest(sessions=["no-such"]), code=not_found)
    kept = team.admin.GetRecords(store_pb2.GetRecordsRequest(refs=refs(theirs)))
    assert len(kept.records) == 3 and not kept.marked_wrong
    assert kept.records[0].observation.title == "zebra stripes in beta"


def test_the_service_token_and_all_project_tokens_see_everything(team: Team):
    seed(team.alice, "alpha", "alice-1")
    seed(team.bob, "beta", "bob-1")
    assert team.admin.Search(store_pb2.StoreSearchRequest(query="zebra")).total == 6
    carol = team.stub(team.admin.AddToken(store_pb2.AddTokenRequest(user="carol", all_projects=True)).secret)
    assert carol.Search(store_pb2.StoreSearchRequest(query="zebra")).total == 6
    assert {p.project for p in carol.Activity(store_pb2.ActivityRequest()).projects} == {"alpha", "beta"}
    who = carol.WhoAmI(store_pb2.WhoAmIRequest())
    assert (who.user, who.all_projects, who.admin) == ("carol", True, False)
    fails(carol.ReadChanges, store_pb2.ReadChangesRequest(), code=grpc.StatusCode.PERMISSION_DENIED)
    assert team.admin.WhoAmI(store_pb2.WhoAmIRequest()).admin


def test_every_record_carries_its_writer_through_export_and_import(team: Team):
    seed(team.alice, "alpha", "alice-1")
    items = list(team.admin.Export(store_pb2.ExportRequest(project="alpha")))
    kinds = {i.WhichOneof("item"): getattr(i, i.WhichOneof("item")).writer for i in items}
    assert kinds == {"session": "alice", "prompt": "alice", "observation": "alice", "summary": "alice",
                     "tool_use": "alice"}
    for name in ("sdk_sessions", "user_prompts", "observations", "session_summaries", "tool_uses"):
        assert table(team.settings, f"SELECT DISTINCT writer FROM {name}") == [("alice",)], name
    # An admin import into another store keeps the writers; a user's import is recorded as its own.
    moved = [store_pb2.ExportItem(session=common_pb2.Session(content_session_id="x-1", project="alpha",
                                                             writer="dave")),
             store_pb2.ExportItem(observation=common_pb2.Observation(memory_session_id="x-1", project="alpha",
                                                                     type="change", title="t", writer="dave"))]
    assert team.admin.Import(store_pb2.ImportRequest(items=moved)).imported == 2
    forged = [store_pb2.ExportItem(observation=common_pb2.Observation(memory_session_id="x-2", project="alpha",
                                                                      type="change", title="u", writer="dave"))]
    assert team.alice.Import(store_pb2.ImportRequest(items=forged)).imported == 1
    writers = {o.observation.title: o.observation.writer for o in team.admin.Export(store_pb2.ExportRequest())
               if o.HasField("observation")}
    assert writers["t"] == "dave" and writers["u"] == "alice"
    # A writer sent on an ordinary write is ignored: the token decides.
    team.alice.AddObservations(store_pb2.AddObservationsRequest(observations=[common_pb2.Observation(
        memory_session_id="x-3", project="alpha", type="change", title="v", writer="mallory")]))
    found = team.admin.Search(store_pb2.StoreSearchRequest(query="v"))
    record = team.admin.GetRecords(store_pb2.GetRecordsRequest(refs=[found.hits[0].ref])).records[0]
    assert record.observation.writer == "alice"


def test_without_user_tokens_only_the_service_token_is_accepted(settings: Settings):
    settings = with_overrides(settings, auth_token=SERVICE_TOKEN)
    handle, on_stop = start_service("store", settings)
    try:
        admin_channel = open_channel(handle.address, auth_token=SERVICE_TOKEN)
        admin = store_pb2_grpc.StoreServiceStub(admin_channel)
        secret = admin.AddToken(store_pb2.AddTokenRequest(user="alice", projects=["alpha"])).secret
        user_channel = open_channel(handle.address, auth_token=secret)
        fails(store_pb2_grpc.StoreServiceStub(user_channel).Stats, store_pb2.StatsRequest(),
              code=grpc.StatusCode.UNAUTHENTICATED)
        user_channel.close()
        admin_channel.close()
    finally:
        handle.stop(0.5)
        on_stop()
