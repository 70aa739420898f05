"""Marking a record wrong in the store (store_svc.curation over a real SQLite file): search,
listings, hydration and timelines skip it, GetRecords names it instead of returning it,
undo brings it back, and forgetting the record takes its mark (and the reason) with it."""

from __future__ import annotations

import pytest

from mnemo.errors import InvalidArgument, NotFound
from mnemo.v1 import common_pb2, store_pb2
from store_svc import curation
from store_svc.core import Store

OBS, SUM = common_pb2.DOC_KIND_OBSERVATION, common_pb2.DOC_KIND_SUMMARY


@pytest.fixture
def store(settings):
    s = Store.from_settings(settings)
    yield s
    s.close()


def ref(kind: int, rid: int) -> common_pb2.Ref:
    return common_pb2.Ref(kind=kind, id=rid)


def seed(store: Store) -> list[int]:
    observations = [common_pb2.Observation(memory_session_id="m1", project="proj", type="discovery", title=title,
                                           narrative="the tokenizer splits hyphens")
                    for title in ("Tokenizer splits hyphenated words", "Tokenizer keeps underscores")]
    return list(store.add_observations(store_pb2.AddObservationsRequest(observations=observations)).ids)


def mark(store: Store, *refs: common_pb2.Ref, undo: bool = False, reason: str = "") -> list[int]:
    reply = curation.mark_wrong_rpc(store, store_pb2.MarkWrongRequest(refs=refs, undo=undo, reason=reason))
    return [r.id for r in reply.changed]


def searched(store: Store, query: str = "", **filters) -> list[int]:
    reply = store.search(store_pb2.StoreSearchRequest(query=query, filters=common_pb2.Filters(**filters)))
    return [hit.ref.id for hit in reply.hits]


def listed(store: Store) -> tuple[list[int], int]:
    reply = store.list_recent(store_pb2.ListRecentRequest())
    return [row.ref.id for row in reply.rows], reply.total


def test_a_marked_record_leaves_search_listing_hydrate_and_timeline(store):
    wrong, right = seed(store)
    assert sorted(searched(store, "tokenizer")) == sorted([wrong, right])

    assert mark(store, ref(OBS, wrong), reason="it does not split them") == [wrong]

    assert searched(store, "tokenizer") == [right]
    assert searched(store, "tokenizer", project="proj") == [right]  # the filtered path too
    assert searched(store, "words") == []
    assert store.search(store_pb2.StoreSearchRequest(query="tokenizer")).total == 1
    assert listed(store) == ([right], 1)
    hydrated = store.hydrate(store_pb2.HydrateRequest(refs=[ref(OBS, wrong), ref(OBS, right)]))
    assert [row.ref.id for row in hydrated.rows] == [right]
    timeline = store.timeline(store_pb2.StoreTimelineRequest(ref=ref(OBS, right), depth_before=5, depth_after=5))
    assert [row.ref.id for row in timeline.rows] == [right]
    with pytest.raises(NotFound):
        store.timeline(store_pb2.StoreTimelineRequest(ref=ref(OBS, wrong)))


def test_get_records_names_marked_records_and_returns_them_only_when_asked(store):
    wrong, right = seed(store)
    mark(store, ref(OBS, wrong), reason="stale")

    plain = curation.get_records_rpc(store, store_pb2.GetRecordsRequest(refs=[ref(OBS, wrong), ref(OBS, right)]))
    assert [r.observation.id for r in plain.records] == [right]
    assert [(r.kind, r.id) for r in plain.marked_wrong] == [(OBS, wrong)]

    asked = curation.get_records_rpc(store, store_pb2.GetRecordsRequest(refs=[ref(OBS, wrong)],
                                                                        include_marked_wrong=True))
    assert asked.records[0].marked_wrong.reason == "stale"
    assert asked.records[0].marked_wrong.marked_at_epoch > 0
    owner_view = store.hydrate(store_pb2.HydrateRequest(refs=[ref(OBS, wrong)],
                                                        filters=common_pb2.Filters(include_marked_wrong=True)))
    assert [row.ref.id for row in owner_view.rows] == [wrong]


def test_undo_brings_the_record_back_and_repeats_change_nothing(store):
    wrong, right = seed(store)
    assert mark(store, ref(OBS, wrong)) == [wrong]
    assert mark(store, ref(OBS, wrong)) == []  # already marked
    assert mark(store, ref(OBS, wrong), undo=True) == [wrong]
    assert mark(store, ref(OBS, wrong), undo=True) == []
    assert sorted(searched(store, "tokenizer")) == sorted([wrong, right])
    plain = curation.get_records_rpc(store, store_pb2.GetRecordsRequest(refs=[ref(OBS, wrong)]))
    assert not plain.marked_wrong and not plain.records[0].HasField("marked_wrong")


def test_an_unknown_id_fails_the_whole_request_and_marks_nothing(store):
    wrong, _ = seed(store)
    with pytest.raises(NotFound, match="#S999"):
        mark(store, ref(OBS, wrong), ref(SUM, 999))
    assert wrong in searched(store, "tokenizer")
    with pytest.raises(InvalidArgument, match="reason"):
        mark(store, ref(OBS, wrong), reason="x" * (curation.MAX_REASON_CHARS + 1))
    with pytest.raises(InvalidArgument, match="refs"):
        mark(store)


def test_the_reason_keeps_no_private_text_and_goes_with_the_record(store, settings):
    wrong, _ = seed(store)
    mark(store, ref(OBS, wrong), reason="wrong <private>hunter2-password</private> claim")
    record = curation.get_records_rpc(store, store_pb2.GetRecordsRequest(refs=[ref(OBS, wrong)],
                                                                         include_marked_wrong=True)).records[0]
    assert "hunter2" not in record.marked_wrong.reason

    curation.forget_rpc(store, store_pb2.ForgetRequest(refs=[ref(OBS, wrong)]))

    with store.reading() as conn:
        assert conn.execute("SELECT count(*) FROM marked_wrong").fetchone()[0] == 0
