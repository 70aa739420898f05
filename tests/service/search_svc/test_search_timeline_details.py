"""SearchService.Timeline, GetObservations and Retrieval.context_rows over the real stack."""

from __future__ import annotations

import grpc
import pytest

from mnemo.v1 import common_pb2, search_pb2, store_pb2
from search_svc.backend import Backend
from search_svc.details import Details
from search_svc.render import EVIDENCE_NOTICE
from search_svc.retrieval import Retrieval
from tests.conftest import add_observation, sync_vectors

pytestmark = [pytest.mark.service, pytest.mark.chroma]

BASE = 1768485600000  # 2026-01-15T14:00:00Z
MIN = 60_000


add_obs = add_observation


@pytest.fixture
def history(store_stub):
    """Observations, a summary and a prompt interleaved in time (one minute apart)."""
    made = {}
    made["o1"] = add_obs(store_stub, title="Traced token refresh", narrative="refresh path", created_at_epoch=BASE)
    made["p1"] = store_stub.RecordPrompt(store_pb2.RecordPromptRequest(
        content_session_id="s1", project="alpha", prompt_text="fix the login loop",
        created_at_epoch=BASE + MIN)).prompt.id
    made["o2"] = add_obs(store_stub, title="Fixed login redirect loop", narrative="redirect loop fixed",
                         created_at_epoch=BASE + 2 * MIN)
    made["s1"] = store_stub.AddSummaries(store_pb2.AddSummariesRequest(summaries=[common_pb2.Summary(
        memory_session_id="s1", project="alpha", request="Fix the login bug", completed="done",
        created_at_epoch=BASE + 3 * MIN)])).ids[0]
    made["o3"] = add_obs(store_stub, title="Added login test", narrative="test added", created_at_epoch=BASE + 4 * MIN)
    made["other"] = add_obs(store_stub, project="beta", session="sb", title="Beta thing",
                            created_at_epoch=BASE + 2 * MIN)
    return made


def timeline(search_stub, **fields) -> search_pb2.TimelineReply:
    return search_stub.Timeline(search_pb2.TimelineRequest(**fields))


def test_an_observation_anchor_gives_mixed_items_in_time_order(search_stub, history):
    reply = timeline(search_stub, anchor=f"#{history['o2']}", project="alpha")
    shown = [row.display_id for row in reply.items]
    assert shown == [f"#{history['o1']}", f"#P{history['p1']}", f"#{history['o2']}", f"#S{history['s1']}",
                     f"#{history['o3']}"]
    assert reply.anchor_index == 2 and reply.anchor == f"#{history['o2']}"
    assert f"| ▶ | #{history['o2']} |" in reply.text
    assert f"#{history['other']}" not in shown  # project honoured


def test_depths_default_to_three_and_count_mixed_items(search_stub, history):
    reply = timeline(search_stub, anchor=str(history["o3"]), project="alpha", depth_after=0)
    assert [r.display_id for r in reply.items][-1] == f"#{history['o3']}"
    assert len(reply.items) == 4  # three before (mixed kinds) + the anchor
    narrow = timeline(search_stub, anchor=f"S{history['s1']}", project="alpha", depth_before=1, depth_after=0)
    assert [r.display_id for r in narrow.items] == [f"#{history['o2']}", f"#S{history['s1']}"]


def test_a_timestamp_anchor_is_accepted(search_stub, history):
    reply = timeline(search_stub, anchor="2026-01-15T14:02:00Z", project="alpha", depth_before=1, depth_after=1)
    assert reply.items[reply.anchor_index].display_id == f"#{history['o2']}"


def test_a_query_anchors_on_the_best_match_not_the_most_recent(store_stub, vector_stub, search_stub):
    best = add_obs(store_stub, title="Kangaroo migration kangaroo", narrative="kangaroo kangaroo kangaroo herd",
                   created_at_epoch=BASE)
    add_obs(store_stub, title="Zoo visit", narrative="We saw lions, tigers, bears and one kangaroo near the exit "
                                                    "of a rather large and crowded zoo", created_at_epoch=BASE + MIN)
    sync_vectors(vector_stub)
    reply = timeline(search_stub, query="kangaroo", project="alpha")
    assert reply.items[reply.anchor_index].ref.id == best
    assert reply.text.startswith(f'{EVIDENCE_NOTICE}\n\n# Timeline for query "kangaroo": anchor #')


@pytest.mark.parametrize("fields", [{}, {"anchor": "1", "query": "x"}, {"anchor": "yesterday-ish"},
                                    {"anchor": "1", "depth_before": 21}, {"anchor": "1", "depth_after": -1}])
def test_timeline_arguments_are_checked(search_stub, history, fields):
    with pytest.raises(grpc.RpcError) as err:
        timeline(search_stub, **fields)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT


def test_an_unknown_anchor_is_not_found(search_stub, history):
    with pytest.raises(grpc.RpcError) as err:
        timeline(search_stub, anchor="#999999")
    assert err.value.code() == grpc.StatusCode.NOT_FOUND


def test_get_observations_returns_arrays_as_arrays_and_inert_text(store_stub, search_stub):
    first = add_obs(store_stub, title="T1 | piped", narrative="line one\n## not a heading", facts=["f1", "f2"],
                    concepts=["gotcha", "how-it-works"], files_read=["/repo/a.py"], files_modified=["src/b.py"],
                    created_at_epoch=BASE)
    second = add_obs(store_stub, title="T2", narrative="second", created_at_epoch=BASE + MIN)
    foreign = add_obs(store_stub, project="beta", session="sb", title="secret", created_at_epoch=BASE)
    reply = search_stub.GetObservations(search_pb2.GetObservationsRequest(
        ids=[first, second, foreign], order_by="date_asc", project="alpha"))
    assert [o.id for o in reply.observations] == [first, second]
    obs = reply.observations[0]
    assert list(obs.facts) == ["f1", "f2"] and list(obs.concepts) == ["gotcha", "how-it-works"]
    assert list(obs.files_read) == ["/repo/a.py"] and list(obs.files_modified) == ["src/b.py"]
    lines = reply.text.splitlines()
    assert lines[0] == EVIDENCE_NOTICE
    assert f"## #{first} · discovery · T1 \\| piped" in lines and "> ## not a heading" in lines
    assert "- Files modified: src/b.py" in lines and "secret" not in reply.text
    assert f"#{foreign}" in lines[-1]
    newest_first = search_stub.GetObservations(search_pb2.GetObservationsRequest(ids=[first, second], limit=1))
    assert [o.id for o in newest_first.observations] == [second]


@pytest.mark.parametrize("fields", [{"ids": []}, {"ids": list(range(1, 52))}, {"ids": [0]},
                                    {"ids": [1], "order_by": "relevance"}, {"ids": [1], "limit": -1}])
def test_get_observations_arguments_are_checked(search_stub, fields):
    with pytest.raises(grpc.RpcError) as err:
        search_stub.GetObservations(search_pb2.GetObservationsRequest(**fields))
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT


def test_context_rows_are_the_neighbours_without_the_record(settings, search_server, history):
    backend = Backend.connect(settings)
    retrieval = Retrieval(backend, settings)
    details = Details(retrieval)
    try:
        ref = common_pb2.Ref(kind=common_pb2.DOC_KIND_OBSERVATION, id=history["o2"])
        rows = details.context_rows(ref, 1, 1, "alpha")
        assert [r.display_id for r in rows] == [f"#P{history['p1']}", f"#S{history['s1']}"]
        prompt = common_pb2.Ref(kind=common_pb2.DOC_KIND_PROMPT, id=history["p1"])
        assert [r.display_id for r in details.context_rows(prompt, 1, 0, "alpha")] == [f"#{history['o1']}"]
        assert details.context_rows(ref, 0, 0, "alpha") == []
    finally:
        retrieval.close()
        backend.close()
