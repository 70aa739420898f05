"""Every StoreService RPC has a per-project rule or is refused to user tokens, none is left to
a default; the cursor RPCs run on the server's clock for users; epochs are bounded at the door."""

from __future__ import annotations

import grpc
import pytest

from mnemo.timefmt import MAX_EPOCH_MS, iso_from_ms
from mnemo.v1 import common_pb2, store_pb2
from store_svc import access
from tests.conftest import BOTH_BACKENDS
from tests.service.store_svc.test_access import Team, team  # noqa: F401 (the fixture)

pytestmark = pytest.mark.service

STORE_METHODS = store_pb2.DESCRIPTOR.services_by_name["StoreService"].methods
FUTURE = MAX_EPOCH_MS  # a clock set to the year 9999


def test_every_store_rpc_has_exactly_one_rule():
    names = {m.name for m in STORE_METHODS}
    assert names == set(access.RULES) | access.ADMIN_ONLY, "an RPC without a rule, or a rule without an RPC"
    assert not set(access.RULES) & access.ADMIN_ONLY


def test_an_rpc_without_a_rule_stops_the_server_from_starting():
    with pytest.raises(LookupError, match="RULES or ADMIN_ONLY"):
        access.guard("NewlyAddedRpc", lambda request, context: None, None)  # type: ignore[arg-type]


def _call(stub, method, request):
    call = getattr(stub, method.name)
    return list(call(request, timeout=10)) if method.server_streaming else call(request, timeout=10)


@BOTH_BACKENDS
@pytest.mark.parametrize("method", [m for m in STORE_METHODS if m.name in access.ADMIN_ONLY], ids=lambda m: m.name)
def test_admin_only_rpcs_are_refused_to_every_user_token(team: Team, method):  # noqa: F811
    every = team.admin.AddToken(store_pb2.AddTokenRequest(user="carol", all_projects=True)).secret
    for stub in (team.alice, team.stub(every)):
        request = getattr(store_pb2, method.input_type.name)()
        with pytest.raises(grpc.RpcError) as refused:
            _call(stub, method, request)
        assert refused.value.code() == grpc.StatusCode.PERMISSION_DENIED, method.name
        assert "service (admin) token" in (refused.value.details() or "")


def _cursor(stub, n: int) -> str:
    token = f"ms_{n:024d}"
    stub.SaveCursor(store_pb2.Cursor(token=token, state_json="{}"), timeout=10)
    return token


@BOTH_BACKENDS
def test_a_user_token_cannot_expire_other_users_cursors_with_a_future_clock(team: Team):  # noqa: F811
    bobs = _cursor(team.bob, 1)
    every = team.admin.AddToken(store_pb2.AddTokenRequest(user="carol", all_projects=True)).secret
    for stub in (team.alice, team.stub(every)):
        stub.PurgeCursors(store_pb2.PurgeCursorsRequest(now_epoch=FUTURE), timeout=10)
        assert team.bob.LoadCursor(store_pb2.LoadCursorRequest(token=bobs), timeout=10).token == bobs
    # A user's own LoadCursor cannot be given a past clock either (its cursor lives as the server says).
    alices = _cursor(team.alice, 2)
    assert team.alice.LoadCursor(store_pb2.LoadCursorRequest(token=alices, now_epoch=FUTURE), timeout=10)
    # The service token (tools, tests) still sets the clock: then every expired cursor goes.
    team.admin.PurgeCursors(store_pb2.PurgeCursorsRequest(now_epoch=FUTURE), timeout=10)
    with pytest.raises(grpc.RpcError) as gone:
        team.bob.LoadCursor(store_pb2.LoadCursorRequest(token=bobs), timeout=10)
    assert gone.value.code() == grpc.StatusCode.NOT_FOUND


TOO_LATE = [MAX_EPOCH_MS + 1, 2**53, 2**63 - 1]


@BOTH_BACKENDS
@pytest.mark.parametrize("epoch", TOO_LATE)
def test_epochs_past_the_year_9999_are_invalid_argument_naming_the_field(team: Team, epoch: int):  # noqa: F811
    calls = [
        ("created_at_epoch", lambda: team.admin.RecordPrompt(store_pb2.RecordPromptRequest(
            content_session_id="c1", project="alpha", prompt_text="hi", created_at_epoch=epoch), timeout=10)),
        ("summaries[0].created_at_epoch", lambda: team.admin.AddSummaries(store_pb2.AddSummariesRequest(
            summaries=[common_pb2.Summary(memory_session_id="m1", project="alpha", request="r",
                                          created_at_epoch=epoch)]), timeout=10)),
        ("observations[0].created_at_epoch", lambda: team.alice.AddObservations(store_pb2.AddObservationsRequest(
            observations=[common_pb2.Observation(memory_session_id="m1", project="alpha", type="discovery",
                                                 title="t", created_at_epoch=epoch)]), timeout=10)),
        ("filters.date_end_epoch", lambda: team.alice.Search(store_pb2.StoreSearchRequest(
            query="x", filters=common_pb2.Filters(date_end_epoch=epoch)), timeout=10)),
        ("now_epoch", lambda: team.alice.PurgeCursors(store_pb2.PurgeCursorsRequest(now_epoch=epoch), timeout=10)),
    ]
    for field, call in calls:
        with pytest.raises(grpc.RpcError) as refused:
            call()
        assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT, field
        assert refused.value.details().startswith(f"{field}: must be within 0..{MAX_EPOCH_MS}"), \
            refused.value.details()


@BOTH_BACKENDS
def test_the_last_millisecond_of_9999_is_stored_and_rendered(team: Team):  # noqa: F811
    added = team.alice.AddObservations(store_pb2.AddObservationsRequest(observations=[common_pb2.Observation(
        memory_session_id="m1", project="alpha", type="discovery", title="the end of time",
        created_at_epoch=MAX_EPOCH_MS)]), timeout=10)
    stored = team.alice.GetRecords(store_pb2.GetRecordsRequest(refs=[
        common_pb2.Ref(kind=common_pb2.DOC_KIND_OBSERVATION, id=added.ids[0])]), timeout=10).records[0]
    assert stored.observation.created_at == iso_from_ms(MAX_EPOCH_MS) == "9999-12-31T23:59:59.999Z"
