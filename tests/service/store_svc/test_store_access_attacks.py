"""Direct StoreService calls (grpcurl-style) with alice's token (project alpha) probing for
what exists in project beta: a record id, a session id or an external id of beta must get
what a nonexistent one gets, and no write of alice's may land in, or be folded into, beta."""

from __future__ import annotations

import hashlib

import grpc
import pytest

from mnemo import identity
from mnemo.config import with_overrides
from mnemo.errors import InvalidArgument
from mnemo.grpc_server import build_server
from mnemo.v1 import common_pb2, store_pb2
from store_svc.core import Store
from store_svc.tokens import TokenResolver
from tests.conftest import BOTH_BACKENDS, start_service
from tests.service.store_svc.test_access import OBS, SERVICE_TOKEN, Team, fails, refs, secured, seed, table
from tests.service.store_svc.test_access import team as team  # noqa: F401 - the fixture, shared

pytestmark = [pytest.mark.service, BOTH_BACKENDS]


def outcome(call, request) -> str:
    try:
        return str(call(request))
    except grpc.RpcError as err:
        return f"{err.code()}: {err.details()}"


def test_fetching_only_other_projects_records_answers_like_unknown_ids(team: Team):
    theirs = seed(team.bob, "beta", "bob-1")
    unknown = {"prompt": 900001, "obs": 900002, "summary": 900003}
    for wrong_too in (False, True):
        asked = store_pb2.GetRecordsRequest(refs=refs(theirs), include_marked_wrong=wrong_too)
        none = store_pb2.GetRecordsRequest(refs=refs(unknown), include_marked_wrong=wrong_too)
        # What the store answers anyone for unknown ids: an empty reply, not "refs: required".
        assert outcome(team.alice.GetRecords, asked) == outcome(team.alice.GetRecords, none) == outcome(
            team.admin.GetRecords, none) == ""
    single = [common_pb2.Ref(kind=OBS, id=theirs["obs"])]
    # The checks every caller gets still apply.
    assert fails(team.alice.GetRecords, store_pb2.GetRecordsRequest(), code=grpc.StatusCode.INVALID_ARGUMENT)
    assert fails(team.alice.GetRecords, store_pb2.GetRecordsRequest(refs=single, project="p" * 5000),
                 code=grpc.StatusCode.INVALID_ARGUMENT).startswith("project:")


def _alice_writes(team: Team, suffix: str) -> list[tuple[bool, str]]:
    """alice's prompt, observation and summary with external ids `ext-p<suffix>` (and -o, -s):
    for each, (created, its text as stored)."""
    prompt = team.alice.RecordPrompt(store_pb2.RecordPromptRequest(
        content_session_id="alice-1", prompt_text=f"mine {suffix}", external_id=f"ext-p{suffix}"))
    obs = team.alice.AddObservations(store_pb2.AddObservationsRequest(observations=[common_pb2.Observation(
        memory_session_id="alice-1", project="alpha", type="discovery", title=f"alpha note {suffix}",
        external_id=f"ext-o{suffix}")]))
    summary = team.alice.AddSummaries(store_pb2.AddSummariesRequest(summaries=[common_pb2.Summary(
        memory_session_id="alice-1", project="alpha", request=f"alpha summary {suffix}",
        external_id=f"ext-s{suffix}")]))
    fetched = team.alice.GetRecords(store_pb2.GetRecordsRequest(refs=[
        common_pb2.Ref(kind=common_pb2.DOC_KIND_PROMPT, id=prompt.prompt.id), common_pb2.Ref(kind=OBS, id=obs.ids[0]),
        common_pb2.Ref(kind=common_pb2.DOC_KIND_SUMMARY, id=summary.ids[0])])).records
    texts = [fetched[0].prompt.prompt_text, fetched[1].observation.title, fetched[2].summary.request]
    return list(zip([not prompt.skipped, obs.created[0], summary.created[0]], texts, strict=True))


def test_an_external_id_of_another_project_answers_like_an_unused_one(team: Team):
    """External ids are each project's own: alice's writes with bob's ids are answered as with
    ids nobody holds (new records of alpha), so they tell nothing and take nothing of beta's."""
    seed(team.bob, "beta", "bob-1")
    team.bob.RecordPrompt(store_pb2.RecordPromptRequest(content_session_id="bob-1", prompt_text="bob's secret plan",
                                                        external_id="ext-p"))
    team.bob.AddObservations(store_pb2.AddObservationsRequest(observations=[common_pb2.Observation(
        memory_session_id="bob-1", project="beta", type="discovery", title="beta secret", external_id="ext-o")]))
    team.bob.AddSummaries(store_pb2.AddSummariesRequest(summaries=[common_pb2.Summary(
        memory_session_id="bob-1", project="beta", request="beta secret summary", external_id="ext-s")]))
    team.alice.UpsertSession(store_pb2.UpsertSessionRequest(content_session_id="alice-1", project="alpha"))
    beta_before = table(team.settings, "SELECT count(*) FROM observations WHERE project = 'beta'")
    for suffix in ("", "-unused"):
        got = _alice_writes(team, suffix)
        assert got == [(True, f"mine {suffix}".strip()), (True, f"alpha note {suffix}".strip()),
                       (True, f"alpha summary {suffix}".strip())]
    assert table(team.settings, "SELECT count(*) FROM observations WHERE project = 'beta'") == beta_before
    # Each owner's retry is a duplicate of their own record, as before.
    assert [created for created, _ in _alice_writes(team, "")] == [False, False, False]
    again = team.bob.RecordPrompt(store_pb2.RecordPromptRequest(content_session_id="bob-1", prompt_text="x",
                                                                external_id="ext-p"))
    assert again.skipped and again.prompt.prompt_text == "bob's secret plan"


def test_a_tool_use_cannot_name_or_link_another_projects_records(team: Team):
    theirs = seed(team.bob, "beta", "bob-1")
    # Bob's session and call id answer as unknown ones: a project is needed to open a session, and
    # with one, alice records a call of her own (bob's "z.py" input is neither shown nor touched).
    for session in ("bob-1", "nobody-1"):
        repeat = store_pb2.RecordToolUseRequest(tool_use=common_pb2.ToolUse(
            content_session_id=session, tool_use_id="tu-bob-1", tool_name="Read"))
        message = fails(team.alice.RecordToolUse, repeat, code=grpc.StatusCode.INVALID_ARGUMENT)
        assert message == "tool_use.project: required when the session does not exist yet"
        repeat.tool_use.project = "alpha"
        mine = team.alice.RecordToolUse(repeat)
        assert (mine.project, mine.tool_input, mine.id != theirs["tool"]) == ("alpha", "", True)
    linked = store_pb2.RecordToolUseRequest(tool_use=common_pb2.ToolUse(
        content_session_id="alice-9", project="alpha", tool_name="Read", observation_ids=[theirs["obs"]]))
    unknown = store_pb2.RecordToolUseRequest(tool_use=common_pb2.ToolUse(
        content_session_id="alice-9", project="alpha", tool_name="Read", observation_ids=[900002]))
    other = fails(team.alice.RecordToolUse, linked, code=grpc.StatusCode.INVALID_ARGUMENT)
    missing = fails(team.alice.RecordToolUse, unknown, code=grpc.StatusCode.INVALID_ARGUMENT)
    assert other.replace(str(theirs["obs"]), "N") == missing.replace("900002", "N")
    observation = store_pb2.AddObservationsRequest(observations=[common_pb2.Observation(
        memory_session_id="alice-9", project="alpha", type="discovery", title="t", tool_use_ids=[theirs["tool"]])])
    other = fails(team.alice.AddObservations, observation, code=grpc.StatusCode.INVALID_ARGUMENT)
    observation.observations[0].tool_use_ids[:] = [900004]
    missing = fails(team.alice.AddObservations, observation, code=grpc.StatusCode.INVALID_ARGUMENT)
    assert other.replace(str(theirs["tool"]), "N") == missing.replace("900004", "N")
    assert table(team.settings, "SELECT count(*) FROM observation_tool_uses") == [(1,)]  # bob's own link only
    assert team.bob.GetToolUses(store_pb2.GetToolUsesRequest(ids=[theirs["tool"]])).tool_uses[0].tool_input == (
        '{"file": "z.py"}')


def test_importing_what_exists_in_another_project_imports_the_callers_own(team: Team):
    seed(team.bob, "beta", "bob-1")
    team.bob.RecordPrompt(store_pb2.RecordPromptRequest(content_session_id="bob-1", prompt_text="second",
                                                        prompt_number=2))
    items = [
        store_pb2.ExportItem(session=common_pb2.Session(content_session_id="bob-1", project="alpha")),
        store_pb2.ExportItem(prompt=common_pb2.UserPrompt(content_session_id="bob-1", project="alpha",
                                                          prompt_text="sneaky", prompt_number=2)),
        store_pb2.ExportItem(tool_use=common_pb2.ToolUse(content_session_id="bob-1", project="alpha",
                                                         tool_use_id="tu-bob-1", tool_name="Read")),
    ]
    # Session ids are each project's own: bob's session, prompt number and call id are not seen,
    # so the items land in a session bob-1 of alice's, exactly as into an id nobody holds.
    reply = team.alice.Import(store_pb2.ImportRequest(items=items))
    assert (reply.imported, reply.skipped, len(reply.errors)) == (3, 0, 0), reply
    assert table(team.settings, "SELECT ss.project, p.prompt_text FROM user_prompts p JOIN sdk_sessions ss "
                 "ON ss.id = p.session_db_id ORDER BY p.prompt_text") == [
        ("beta", "look at the zebra please"), ("beta", "second"), ("alpha", "sneaky")]
    assert table(team.settings, "SELECT ss.project, count(*) FROM tool_uses t JOIN sdk_sessions ss "
                 "ON ss.id = t.session_db_id GROUP BY ss.project ORDER BY ss.project") == [("alpha", 1), ("beta", 1)]
    # Again: alice's own, now skipped; the service token's import of the same items names alpha.
    assert team.alice.Import(store_pb2.ImportRequest(items=items)).skipped == 3
    assert team.admin.Import(store_pb2.ImportRequest(items=items)).skipped == 3


def test_a_session_external_id_held_elsewhere_is_free_and_in_use_is_a_clear_refusal(team: Team):
    for bobs in ("bob-1", "bob-3"):
        team.bob.UpsertSession(store_pb2.UpsertSessionRequest(content_session_id=bobs, project="beta",
                                                              external_id=f"ext-{bobs}"))
    team.alice.UpsertSession(store_pb2.UpsertSessionRequest(content_session_id="alice-2", project="alpha"))
    team.alice.UpsertSession(store_pb2.UpsertSessionRequest(content_session_id="alice-5", project="alpha"))
    # A new session, and an existing one getting the id: beta's ids answer like ids nobody holds.
    for session, external in (("alice-1", "ext-bob-1"), ("alice-2", "ext-bob-3"), ("alice-4", "unused-4"),
                              ("alice-5", "unused-5")):
        got = team.alice.UpsertSession(store_pb2.UpsertSessionRequest(
            content_session_id=session, project="alpha", external_id=external))
        assert (got.project, got.content_session_id, got.external_id) == ("alpha", session, external)
    # Within one project it is bad input naming the field, for anyone.
    message = fails(team.alice.UpsertSession, store_pb2.UpsertSessionRequest(
        content_session_id="alice-3", project="alpha", external_id="ext-bob-1"),
        code=grpc.StatusCode.INVALID_ARGUMENT)
    assert message.startswith("external_id:")
    team.admin.UpsertSession(store_pb2.UpsertSessionRequest(content_session_id="bob-2", project="beta"))
    message = fails(team.admin.UpsertSession, store_pb2.UpsertSessionRequest(
        content_session_id="bob-2", external_id="ext-bob-1"), code=grpc.StatusCode.INVALID_ARGUMENT)
    assert message.startswith("external_id:")
    assert table(team.settings, "SELECT project, content_session_id FROM sdk_sessions WHERE external_id = "
                 "'ext-bob-1' ORDER BY project") == [("alpha", "alice-1"), ("beta", "bob-1")]


def test_no_user_token_may_take_the_service_tokens_name(team: Team):
    for name in ("admin", "Admin"):
        message = fails(team.admin.AddToken, store_pb2.AddTokenRequest(user=name, all_projects=True),
                        code=grpc.StatusCode.INVALID_ARGUMENT)
        assert message.startswith("user:") and "service token" in message
    # So a cursor the service token saved stays its own.
    team.admin.SaveCursor(store_pb2.Cursor(token="ms_" + "A" * 24, state_json="{}"))
    fails(team.alice.LoadCursor, store_pb2.LoadCursorRequest(token="ms_" + "A" * 24), code=grpc.StatusCode.NOT_FOUND)


def test_user_tokens_do_not_lift_tls_beyond_loopback(settings):
    for name in ("store", "search", "vector"):
        with pytest.raises(InvalidArgument, match="beyond loopback: set tls_cert, tls_key and auth_token"):
            start_service(name, with_overrides(secured(settings), tls_cert="", tls_key=""), "0.0.0.0:0")


def test_forgetting_a_session_id_shared_with_another_project_deletes_only_ones_own(team: Team):
    # The same host session id on two platforms: alice's in alpha, bob's in beta.
    team.alice.UpsertSession(store_pb2.UpsertSessionRequest(content_session_id="dup-1", project="alpha",
                                                            platform_source="claude"))
    team.bob.UpsertSession(store_pb2.UpsertSessionRequest(content_session_id="dup-1", project="beta",
                                                          platform_source="codex", memory_session_id="bob-m"))
    team.bob.RecordPrompt(store_pb2.RecordPromptRequest(content_session_id="dup-1", platform_source="codex",
                                                        prompt_text="bob keeps this"))
    reply = team.alice.Forget(store_pb2.ForgetRequest(sessions=["dup-1"]))
    assert reply.sessions == 1 and reply.prompts == 0
    assert table(team.settings, "SELECT project FROM sdk_sessions WHERE content_session_id = 'dup-1'") == [
        ("beta",)]
    assert table(team.settings, "SELECT prompt_text FROM user_prompts") == [("bob keeps this",)]


def test_a_client_streaming_rpc_runs_with_the_callers_identity_too(team: Team, tmp_path):
    """No RPC of ours streams requests today; one added later must not see a user token as
    the local stack (no identity: full access)."""
    seen: list[tuple[str, object]] = []

    def who(requests, context):
        for _ in requests:
            pass
        caller = identity.get()
        seen.append((caller.user, caller.projects) if caller else ("<nobody>", None))
        return b""

    def register(server: grpc.Server) -> list[str]:
        handler = grpc.stream_unary_rpc_method_handler(who)
        server.add_generic_rpc_handlers([grpc.method_handlers_generic_handler("test.Probe", {"Who": handler})])
        return ["test.Probe"]

    store = Store.from_settings(team.settings)
    handle = build_server(f"unix:{tmp_path}/probe.sock", register, auth_token=SERVICE_TOKEN,
                          resolve_token=TokenResolver(store))
    try:
        channel = grpc.insecure_channel(handle.address)  # our clients' token interceptor has no such calls
        call = channel.stream_unary("/test.Probe/Who")
        call(iter([b"x"]), timeout=10, metadata=(("authorization", f"Bearer {team.secrets['alice']}"),))
        channel.close()
    finally:
        handle.stop(0)
        store.close()
    assert seen == [("alice", frozenset({"alpha"}))]


def test_forgetting_ones_session_leaves_other_projects_records_filed_under_it(team: Team):
    # A writer of every project (here the service token) files a beta record under alice's session.
    team.alice.UpsertSession(store_pb2.UpsertSessionRequest(content_session_id="alice-s", project="alpha"))
    team.admin.AddObservations(store_pb2.AddObservationsRequest(observations=[common_pb2.Observation(
        memory_session_id="alice-s", project="beta", type="discovery", title="beta decision")]))
    team.alice.AddObservations(store_pb2.AddObservationsRequest(observations=[common_pb2.Observation(
        memory_session_id="alice-s", project="alpha", type="discovery", title="alpha note")]))
    reply = team.alice.Forget(store_pb2.ForgetRequest(sessions=["alice-s"]))
    assert (reply.sessions, reply.observations) == (1, 1)
    assert table(team.settings, "SELECT project, title FROM observations") == [("beta", "beta decision")]


def test_a_confined_token_cannot_squat_another_projects_default_session(team: Team):
    # save_memory files under "manual-<project>", observation_record_event under "events-<project>"
    # when no session is named: alice must not open beta's, which would lock bob out of them.
    long_beta = "b" * 256
    for session in ("manual-beta", "events-beta", "manual-" + hashlib.sha256(long_beta.encode()).hexdigest()[:32]):
        for call, request in (
            (team.alice.UpsertSession, store_pb2.UpsertSessionRequest(content_session_id=session, project="alpha")),
            (team.alice.AddObservations, store_pb2.AddObservationsRequest(observations=[common_pb2.Observation(
                memory_session_id=session, project="alpha", type="discovery", title="squat")])),
            (team.alice.RecordToolUse, store_pb2.RecordToolUseRequest(tool_use=common_pb2.ToolUse(
                content_session_id=session, project="alpha", tool_name="Read")))):
            message = fails(call, request, code=grpc.StatusCode.PERMISSION_DENIED)
            assert "reserved" in message, message
    assert table(team.settings, "SELECT count(*) FROM sdk_sessions") == [(0,)]
    team.alice.UpsertSession(store_pb2.UpsertSessionRequest(content_session_id="alice-1", project="alpha"))
    message = fails(team.alice.UpsertSession, store_pb2.UpsertSessionRequest(  # nor rename one of its own so
        content_session_id="alice-1", memory_session_id="manual-beta"), code=grpc.StatusCode.PERMISSION_DENIED)
    assert "reserved" in message
    # Its own default sessions, and any other name, are alice's to use.
    for session in ("manual-alpha", "events-alpha", "manually-named", "manual"):
        team.alice.AddObservations(store_pb2.AddObservationsRequest(observations=[common_pb2.Observation(
            memory_session_id=session, project="alpha", type="discovery", title=f"note in {session}")]))
    team.bob.AddObservations(store_pb2.AddObservationsRequest(observations=[common_pb2.Observation(
        memory_session_id="manual-beta", project="beta", type="discovery", title="bob's own")]))


def test_a_printed_settings_never_shows_the_token(team: Team):
    assert SERVICE_TOKEN not in repr(team.settings) and SERVICE_TOKEN not in str(team.settings)
    assert team.settings.auth_token == SERVICE_TOKEN
