"""StoreService through real gRPC: a server on a Unix socket (store_stub) and one on 127.0.0.1:0."""

from __future__ import annotations

import grpc
import pytest

from mnemo.config import with_overrides
from mnemo.errors import InvalidArgument
from mnemo.grpc_client import error_from_rpc, open_channel
from mnemo.v1 import common_pb2, store_pb2, store_pb2_grpc
from tests.conftest import BOTH_BACKENDS, start_service
from tests.unit.store_svc.hostile import hostile_queries

pytestmark = [pytest.mark.service, BOTH_BACKENDS]

OBS = common_pb2.DOC_KIND_OBSERVATION


def _obs(title: str, **fields) -> common_pb2.Observation:
    fields.setdefault("memory_session_id", "m1")
    fields.setdefault("project", "proj")
    fields.setdefault("type", "bugfix")
    return common_pb2.Observation(title=title, **fields)


def _code(call, request) -> tuple[grpc.StatusCode, str]:
    with pytest.raises(grpc.RpcError) as err:
        call(request, timeout=10)
    return err.value.code(), err.value.details()


def test_every_rpc_answers_through_grpc(store_stub):
    s = store_stub
    session = s.UpsertSession(store_pb2.UpsertSessionRequest(content_session_id="m1", project="proj"), timeout=10)
    assert (
        s.CompleteSession(store_pb2.CompleteSessionRequest(content_session_id="m1"), timeout=10).status == "completed"
    )
    assert s.RecordPrompt(store_pb2.RecordPromptRequest(content_session_id="m1", prompt_text="fix the login")).prompt.id
    tool = s.RecordToolUse(
        store_pb2.RecordToolUseRequest(
            tool_use=common_pb2.ToolUse(
                content_session_id="m1", tool_name="Edit", tool_use_id="tu1", tool_input='{"file": "a.py"}'
            )
        )
    )
    added = s.AddObservations(
        store_pb2.AddObservationsRequest(
            observations=[
                _obs(
                    "Login redirect fixed",
                    narrative="cookie path",
                    files_modified=["src/login.py"],
                    tool_use_ids=[tool.id],
                )
            ]
        )
    )
    summary = s.AddSummaries(
        store_pb2.AddSummariesRequest(
            summaries=[
                common_pb2.Summary(memory_session_id="m1", project="proj", request="login fix", completed="done")
            ]
        )
    )
    oid = added.ids[0]
    refs = [common_pb2.Ref(kind=OBS, id=oid), common_pb2.Ref(kind=common_pb2.DOC_KIND_SUMMARY, id=summary.ids[0])]
    assert len(s.GetRecords(store_pb2.GetRecordsRequest(refs=refs)).records) == 2
    shown = [r.display_id for r in s.Hydrate(store_pb2.HydrateRequest(refs=refs)).rows]
    assert shown == [f"#{oid}", f"#S{summary.ids[0]}"]
    assert s.GetToolUses(store_pb2.GetToolUsesRequest(observation_ids=[oid])).tool_uses[0].id == tool.id
    assert s.ListRecent(store_pb2.ListRecentRequest()).total == 3
    found = s.Search(store_pb2.StoreSearchRequest(query="how was the login redirect fixed?"))
    assert found.hits[0].ref.id == oid and found.hits[0].file == "src/login.py" and found.total == 3
    timeline = s.Timeline(store_pb2.StoreTimelineRequest(ref=refs[0], depth_before=5, depth_after=5))
    assert len(timeline.items) == 3 and timeline.rows[timeline.anchor_index].ref.id == oid
    feed = s.ReadChanges(store_pb2.ReadChangesRequest())
    assert [c.ref.kind for c in feed.changes] == [common_pb2.DOC_KIND_PROMPT, OBS, common_pb2.DOC_KIND_SUMMARY]
    stats = s.Stats(store_pb2.StatsRequest(project="proj"))
    assert (stats.sessions, stats.prompts, stats.observations, stats.summaries, stats.tool_uses) == (1, 1, 1, 1, 1)
    token = "ms_" + "Z" * 24
    s.SaveCursor(store_pb2.Cursor(token=token, state_json="{}"))
    assert s.LoadCursor(store_pb2.LoadCursorRequest(token=token)).token == token
    assert s.PurgeCursors(store_pb2.PurgeCursorsRequest(now_epoch=1)).purged == 0
    assert s.WriteWorkState(store_pb2.WriteWorkStateRequest(project="proj", content="wip")).version == 1
    assert s.ReadWorkState(store_pb2.ReadWorkStateRequest(project="proj")).current.content == "wip"
    s.PutCorpus(store_pb2.Corpus(name="c1", observation_ids=[oid]))
    assert s.GetCorpus(store_pb2.GetCorpusRequest(name="c1")).observation_ids == [oid]
    assert len(s.ListCorpora(store_pb2.ListCorporaRequest()).corpora) == 1
    assert s.UpdateCorpus(store_pb2.UpdateCorpusRequest(name="c1", priming_state="primed")).priming_state == "primed"
    items = list(s.Export(store_pb2.ExportRequest(project="proj"), timeout=10))
    assert len(items) == 5 and items[0].session.id == session.id
    assert s.Import(store_pb2.ImportRequest(items=items)).skipped == 5
    assert s.DeleteRecords(store_pb2.DeleteRecordsRequest(refs=refs)).deleted == 2


@pytest.mark.parametrize(
    ("method", "request_", "code", "message"),
    [
        (
            "AddObservations",
            store_pb2.AddObservationsRequest(observations=[_obs("ok"), _obs("no type", type="")]),
            grpc.StatusCode.INVALID_ARGUMENT,
            "observations[1].type: required",
        ),
        (
            "AddObservations",
            store_pb2.AddObservationsRequest(observations=[_obs("x", project="p" * 300)]),
            grpc.StatusCode.INVALID_ARGUMENT,
            "observations[0].project: at most 256 bytes",
        ),
        (
            "Search",
            store_pb2.StoreSearchRequest(page=common_pb2.Page(limit=501)),
            grpc.StatusCode.INVALID_ARGUMENT,
            "page.limit: must be between 1 and 500",
        ),
        (
            "Search",
            store_pb2.StoreSearchRequest(filters=common_pb2.Filters(date_start_epoch=5, date_end_epoch=1)),
            grpc.StatusCode.INVALID_ARGUMENT,
            "filters.date_end_epoch: must not be before date_start_epoch",
        ),
        (
            "GetRecords",
            store_pb2.GetRecordsRequest(refs=[common_pb2.Ref(id=1)]),
            grpc.StatusCode.INVALID_ARGUMENT,
            "refs[0].kind: must be",
        ),
        (
            "LoadCursor",
            store_pb2.LoadCursorRequest(token="ms_" + "q" * 24),
            grpc.StatusCode.NOT_FOUND,
            "cursor unknown or expired",
        ),
        ("GetCorpus", store_pb2.GetCorpusRequest(name="nope"), grpc.StatusCode.NOT_FOUND, "corpus 'nope' not found"),
        ("Timeline", store_pb2.StoreTimelineRequest(), grpc.StatusCode.INVALID_ARGUMENT, "anchor: set ref"),
    ],
)
def test_bad_requests_get_the_right_status_and_message(store_stub, method, request_, code, message):
    got_code, details = _code(getattr(store_stub, method), request_)
    assert got_code == code and details.startswith(message)


def test_index_rows_tell_which_records_ask(store_stub):
    """A record whose text ends in a question asks (a ranking prior of search_svc); its title,
    subtitle and facts do not count, and trailing whitespace does not hide the question mark."""
    s = store_stub
    observations = [
        _obs("Why does login loop?", narrative="The cookie path was wrong; fixed in login.py."),
        _obs("Cookie path", narrative="Does the cookie path cause the login loop?  \n"),
        _obs("Login loop", text="why does the login loop?"),
        _obs("Login loop fixed", narrative="", text="The login loop is fixed"),
    ]
    ids = s.AddObservations(store_pb2.AddObservationsRequest(observations=observations)).ids
    s.UpsertSession(store_pb2.UpsertSessionRequest(content_session_id="c1", project="proj"))
    prompt = s.RecordPrompt(store_pb2.RecordPromptRequest(content_session_id="c1", prompt_text="what broke the login?"))
    summary = s.AddSummaries(store_pb2.AddSummariesRequest(
        summaries=[common_pb2.Summary(memory_session_id="m1", project="proj", request="why does the login loop?")]))
    refs = [common_pb2.Ref(kind=OBS, id=i) for i in ids] + [
        common_pb2.Ref(kind=common_pb2.DOC_KIND_PROMPT, id=prompt.prompt.id),
        common_pb2.Ref(kind=common_pb2.DOC_KIND_SUMMARY, id=summary.ids[0])]
    hydrated = s.Hydrate(store_pb2.HydrateRequest(refs=refs)).rows
    assert [row.asks for row in hydrated] == [False, True, True, False, True, False]
    found = {row.ref.id: row.asks for row in s.Search(store_pb2.StoreSearchRequest(query="login")).hits
             if row.ref.kind == OBS}
    assert found == dict(zip(ids, [False, True, True, False], strict=True))


def test_invalid_argument_round_trips_to_the_typed_error(store_stub):
    with pytest.raises(grpc.RpcError) as err:
        store_stub.UpsertSession(store_pb2.UpsertSessionRequest(project="p"), timeout=10)
    typed = error_from_rpc(err.value)
    assert isinstance(typed, InvalidArgument) and typed.field == "content_session_id" and typed.rule == "required"


def test_work_state_conflict_is_aborted(store_stub):
    store_stub.WriteWorkState(store_pb2.WriteWorkStateRequest(project="p", content="a"), timeout=10)
    code, _ = _code(
        store_stub.WriteWorkState, store_pb2.WriteWorkStateRequest(project="p", content="b", expected_version=7)
    )
    assert code == grpc.StatusCode.ABORTED


def test_hostile_queries_are_normal_results_through_grpc(store_stub):
    store_stub.AddObservations(
        store_pb2.AddObservationsRequest(
            observations=[_obs("Login redirect loop", narrative="用户登录失败 50% hit_rate", files_read=["a%b_c.py"])]
        ),
        timeout=10,
    )
    for text in hostile_queries():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            continue  # protobuf cannot carry lone surrogates; raw bad UTF-8 is tested below
        for syntax in (store_pb2.QUERY_SYNTAX_PLAIN, store_pb2.QUERY_SYNTAX_OPERATORS):
            reply = store_stub.Search(store_pb2.StoreSearchRequest(query=text, syntax=syntax), timeout=10)
            assert reply.total >= len(reply.hits)
        listing = store_stub.Search(store_pb2.StoreSearchRequest(filters=common_pb2.Filters(files=[text])), timeout=10)
        assert listing.total >= len(listing.hits)


def test_invalid_utf8_on_the_wire_is_replaced_not_refused(store_server):
    channel = open_channel(store_server.address)
    try:
        raw_search = channel.unary_unary(
            "/mnemo.v1.StoreService/Search",
            request_serializer=lambda b: b,
            response_deserializer=store_pb2.StoreSearchResponse.FromString,
        )
        # field 1 (query), length-delimited: "lo\xffgin \xed\xa0\x80 x" is not valid UTF-8.
        body = b"lo\xffgin \xed\xa0\x80 x"
        reply = raw_search(b"\x0a" + bytes([len(body)]) + body, timeout=10)
        assert reply.total == 0
    finally:
        channel.close()


def test_a_server_on_loopback_port_zero(settings):
    token = "loopback-port-zero-token"  # loopback TCP needs one like any TCP listener
    handle, on_stop = start_service("store", with_overrides(settings, auth_token=token), "127.0.0.1:0")
    try:
        assert not handle.address.endswith(":0")
        channel = open_channel(handle.address, auth_token=token)
        stub = store_pb2_grpc.StoreServiceStub(channel)
        assert stub.Stats(store_pb2.StatsRequest(), timeout=10).schema_version >= 1
        channel.close()
    finally:
        handle.stop(0)
        on_stop()
