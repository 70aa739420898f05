"""Session ids are each project's own (migration 15): alice (project alpha) writing into a session
id bob holds in beta gets exactly what an id nobody holds gets, a session of her own with her
records in it; bob's session and records are neither touched nor shown, by writes, reads,
forget or export. A caller who sees both names the project when the id alone is ambiguous."""

from __future__ import annotations

import grpc
import pytest

from mnemo.v1 import common_pb2, store_pb2
from tests.conftest import BOTH_BACKENDS
from tests.service.store_svc.test_access import OBS, Team, fails, refs, seed, table
from tests.service.store_svc.test_access import team as team  # noqa: F401 - the fixture, shared

pytestmark = [pytest.mark.service, BOTH_BACKENDS]


def _writes(stub, session: str) -> list[str]:
    """Every write naming `session` (as host and as memory id), each reply without its ids and
    clocks, with the session id replaced by S: what alice sees of a taken and of a free id."""
    epoch = 1_700_000_000_000
    replies = [
        stub.UpsertSession(store_pb2.UpsertSessionRequest(content_session_id=session, project="alpha",
                                                          custom_title="mine")),
        stub.RecordPrompt(store_pb2.RecordPromptRequest(content_session_id=session, prompt_text="plan the zebra",
                                                        created_at_epoch=epoch)),
        stub.AddObservations(store_pb2.AddObservationsRequest(observations=[common_pb2.Observation(
            memory_session_id=session, project="alpha", type="discovery", title="zebra stripes in beta",
            narrative="the zebra of beta", created_at_epoch=epoch)])),  # bob's very title and text
        stub.AddSummaries(store_pb2.AddSummariesRequest(summaries=[common_pb2.Summary(
            memory_session_id=session, project="alpha", request="study the zebra", created_at_epoch=epoch)])),
        stub.RecordToolUse(store_pb2.RecordToolUseRequest(tool_use=common_pb2.ToolUse(
            content_session_id=session, tool_use_id=f"tu-{session}", tool_name="Read", created_at_epoch=epoch))),
        stub.Import(store_pb2.ImportRequest(items=[store_pb2.ExportItem(summary=common_pb2.Summary(
            memory_session_id=session, project="alpha", request="imported", created_at_epoch=epoch))])),
        stub.CompleteSession(store_pb2.CompleteSessionRequest(content_session_id=session)),
    ]
    shown = []
    for reply in replies:
        for name in ("id", "ids", "started_at", "started_at_epoch", "completed_at", "completed_at_epoch"):
            if name in reply.DESCRIPTOR.fields_by_name:
                reply.ClearField(name)  # type: ignore[arg-type]
        if reply.DESCRIPTOR.name == "RecordPromptResponse":
            reply.prompt.ClearField("id")
            reply.prompt.ClearField("created_at")
        shown.append(str(reply).replace(session, "S"))
    return shown


def test_a_session_id_held_by_another_project_is_written_exactly_like_a_free_one(team: Team):  # noqa: F811
    theirs = seed(team.bob, "beta", "bob-1")
    before = table(team.settings, "SELECT * FROM sdk_sessions")
    taken, free = _writes(team.alice, "bob-1"), _writes(team.alice, "free-1")
    assert taken == free  # no PERMISSION_DENIED, no "duplicate", nothing of bob's
    assert table(team.settings, "SELECT project, content_session_id, memory_session_id FROM sdk_sessions "
                 "ORDER BY project, content_session_id") == [
        ("alpha", "bob-1", "bob-1"), ("alpha", "free-1", "free-1"), ("beta", "bob-1", "bob-1")]
    # Bob's session and records are as he left them.
    assert [r for r in table(team.settings, "SELECT * FROM sdk_sessions") if r in before] == before
    kept = team.bob.GetRecords(store_pb2.GetRecordsRequest(refs=refs(theirs))).records
    assert [r.WhichOneof("record") for r in kept] == ["observation", "summary", "prompt"]
    assert (kept[0].observation.project, kept[2].prompt.prompt_text) == ("beta", "look at the zebra please")
    assert table(team.settings, "SELECT count(*) FROM user_prompts p JOIN sdk_sessions ss ON ss.id = p.session_db_id "
                 "WHERE ss.project = 'beta'") == [(1,)]
    bobs = team.bob.GetToolUses(store_pb2.GetToolUsesRequest(content_session_id="bob-1")).tool_uses
    assert [(t.id, t.project) for t in bobs] == [(theirs["tool"], "beta")]
    # An observation's context is its own session's rows: none of bob's words are in alice's.
    contexts = table(team.settings, "SELECT o.project, c.context FROM observation_context c "
                     "JOIN observations o ON o.id = c.id WHERE o.memory_session_id = 'bob-1'")
    assert sorted(contexts) == [("alpha", ""), ("beta", "")]


def test_reads_forget_and_export_of_one_projects_session_never_reach_the_others(team: Team):  # noqa: F811
    theirs, mine = seed(team.bob, "beta", "dup-1", "okapi"), seed(team.alice, "alpha", "dup-1")
    assert len(set(theirs.values()) & set(mine.values())) == 0
    alice = team.alice
    tools = alice.GetToolUses(store_pb2.GetToolUsesRequest(content_session_id="dup-1")).tool_uses
    assert [(t.id, t.project, t.memory_session_id) for t in tools] == [(mine["tool"], "alpha", "dup-1")]
    assert alice.Search(store_pb2.StoreSearchRequest(query="okapi")).total == 0
    assert alice.Search(store_pb2.StoreSearchRequest(query="zebra", filters=common_pb2.Filters(
        platform_source="claude"))).total == 3  # her records find their own session's platform
    around = alice.Timeline(store_pb2.StoreTimelineRequest(ref=common_pb2.Ref(kind=OBS, id=mine["obs"]),
                                                           depth_before=5, depth_after=5))
    assert {r.project for r in around.rows} == {"alpha"}
    exported = list(alice.Export(store_pb2.ExportRequest()))
    assert {getattr(i, i.WhichOneof("item")).project for i in exported} == {"alpha"}
    assert sum(i.HasField("session") for i in exported) == 1
    stats = alice.Stats(store_pb2.StatsRequest())
    assert (stats.sessions, stats.prompts, stats.observations, stats.summaries, stats.tool_uses) == (1, 1, 1, 1, 1)
    gone = alice.Forget(store_pb2.ForgetRequest(sessions=["dup-1"]))
    assert (gone.sessions, gone.prompts, gone.observations, gone.summaries, gone.tool_uses) == (1, 1, 1, 1, 1)
    left = team.bob.GetRecords(store_pb2.GetRecordsRequest(refs=refs(theirs))).records
    assert len(left) == 3 and left[0].observation.title == "okapi stripes in beta"
    assert table(team.settings, "SELECT project FROM sdk_sessions") == [("beta",)]
    after = list(team.bob.Export(store_pb2.ExportRequest()))
    assert len(after) == 5 and {getattr(i, i.WhichOneof("item")).project for i in after} == {"beta"}


def test_a_caller_who_sees_both_sessions_names_the_project(team: Team):  # noqa: F811
    seed(team.bob, "beta", "dup-1")
    seed(team.alice, "alpha", "dup-1")
    admin, invalid = team.admin, grpc.StatusCode.INVALID_ARGUMENT
    for call, request in (
        (admin.UpsertSession, store_pb2.UpsertSessionRequest(content_session_id="dup-1", custom_title="t")),
        (admin.RecordPrompt, store_pb2.RecordPromptRequest(content_session_id="dup-1", prompt_text="which?")),
        (admin.RecordToolUse, store_pb2.RecordToolUseRequest(tool_use=common_pb2.ToolUse(
            content_session_id="dup-1", tool_name="Read"))),
    ):
        message = fails(call, request, code=invalid)
        assert message == ("project: content_session_id 'dup-1' names sessions in several projects "
                           "('alpha', 'beta'); name the project of the one you mean")
    message = fails(admin.CompleteSession, store_pb2.CompleteSessionRequest(content_session_id="dup-1"), code=invalid)
    assert message.startswith("content_session_id: content_session_id 'dup-1' names sessions in several projects")
    # With the project, each call reaches that project's session, and only it.
    got = admin.UpsertSession(store_pb2.UpsertSessionRequest(content_session_id="dup-1", project="beta",
                                                             custom_title="bob's"))
    assert (got.project, got.custom_title) == ("beta", "bob's")
    prompt = admin.RecordPrompt(store_pb2.RecordPromptRequest(content_session_id="dup-1", project="alpha",
                                                              prompt_text="for alpha")).prompt
    assert prompt.project == "alpha"
    obs = admin.AddObservations(store_pb2.AddObservationsRequest(observations=[common_pb2.Observation(
        memory_session_id="dup-1", project="beta", type="change", title="filed in beta")])).ids[0]
    assert table(team.settings, f"SELECT ss.project FROM observations o JOIN sdk_sessions ss "
                 f"ON ss.id = o.session_db_id WHERE o.id = {int(obs)}") == [("beta",)]
    # Each user still sees one session of that id, their own, and completes it without a project.
    assert team.alice.CompleteSession(store_pb2.CompleteSessionRequest(content_session_id="dup-1")).project == "alpha"
    assert table(team.settings, "SELECT project, status FROM sdk_sessions ORDER BY project") == [
        ("alpha", "completed"), ("beta", "active")]


def test_a_memory_id_or_external_id_of_another_projects_session_is_free(team: Team):  # noqa: F811
    team.bob.UpsertSession(store_pb2.UpsertSessionRequest(content_session_id="bob-1", project="beta",
                                                          memory_session_id="mem-1"))
    got = team.alice.UpsertSession(store_pb2.UpsertSessionRequest(content_session_id="alice-1", project="alpha",
                                                                  memory_session_id="mem-1"))
    assert (got.project, got.memory_session_id) == ("alpha", "mem-1")
    # Within one project a memory id still names one session, for anyone.
    message = fails(team.alice.UpsertSession, store_pb2.UpsertSessionRequest(
        content_session_id="alice-2", project="alpha", memory_session_id="mem-1"),
        code=grpc.StatusCode.INVALID_ARGUMENT)
    assert message == "memory_session_id: 'mem-1' already belongs to another session"
