"""Context words (migration 8): an observation is also ranked by the words of the observations
written just before it in its session, on both backends; they never make a row match."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from mnemo.v1 import common_pb2, store_pb2
from store_svc import schema
from store_svc.core import Store
from tests.conftest import BOTH_BACKENDS
from tests.unit.store_svc.upgrade import old_observations, write_before

pytestmark = [pytest.mark.unit, BOTH_BACKENDS]


@pytest.fixture
def store(settings):
    s = Store.from_settings(settings)
    yield s
    s.close()


def obs(title: str, narrative: str, session: str, epoch: int) -> common_pb2.Observation:
    return common_pb2.Observation(title=title, narrative=narrative, memory_session_id=session, project="proj",
                                  type="discovery", created_at_epoch=epoch)


def add(store: Store, *observations: common_pb2.Observation) -> list[int]:
    return list(store.add_observations(store_pb2.AddObservationsRequest(observations=observations)).ids)


def search(store: Store, query: str, operators: bool = False) -> store_pb2.StoreSearchResponse:
    syntax = store_pb2.QUERY_SYNTAX_OPERATORS if operators else store_pb2.QUERY_SYNTAX_PLAIN
    return store.search(store_pb2.StoreSearchRequest(query=query, syntax=syntax))


def _sessions(store: Store, write: Callable[..., list[int]] = add) -> dict[str, int]:
    ids = write(store,
              obs("Planning", "We talked about the museum trip", "s1", 1_000),
              obs("Answer one", "It happens on saturday", "s1", 2_000),
              obs("Follow-up", "Bring sandwiches", "s1", 3_000),
              obs("Groceries", "We talked about the grocery list", "s2", 1_000),
              obs("Answer two", "It happens on saturday", "s2", 2_000))
    return dict(zip(("plan", "answer", "follow", "groceries", "other"), ids, strict=True))


def test_the_words_before_a_record_rank_it_higher(store):
    ids = _sessions(store)
    reply = search(store, "when is the museum trip, saturday?")
    ranked = [hit.ref.id for hit in reply.hits]
    assert ranked.index(ids["answer"]) < ranked.index(ids["other"])
    score = {hit.ref.id: hit.score for hit in reply.hits}
    assert score[ids["answer"]] > score[ids["other"]] > 0


def test_context_words_never_make_a_row_match(store):
    ids = _sessions(store)
    reply = search(store, "museum trip saturday")
    # The follow-up's context holds all three words, its own text none: not a match, not counted.
    assert {hit.ref.id for hit in reply.hits} == {ids["plan"], ids["answer"], ids["other"]}
    assert reply.observation_total == 3
    assert search(store, "sandwiches").observation_total == 1


def test_not_and_phrases_read_a_records_own_words(store):
    ids = _sessions(store)
    # The answer's context says "museum"; NOT removes only records saying it themselves.
    kept = {h.ref.id for h in search(store, "saturday NOT museum", operators=True).hits}
    assert kept == {ids["answer"], ids["other"]}
    assert {h.ref.id for h in search(store, '"museum trip"', operators=True).hits} == {ids["plan"]}


def test_the_migration_fills_the_context_of_existing_rows(settings, monkeypatch):
    """Rows written before migration 8 get the context the insert trigger would have given them."""
    ids = write_before(settings, monkeypatch, 7, lambda old: _sessions(old, old_observations))
    store = Store.from_settings(settings)
    try:
        assert store.schema_version == schema.LATEST_VERSION
        reply = search(store, "when is the museum trip, saturday?")
        score = {hit.ref.id: hit.score for hit in reply.hits}
        assert score[ids["answer"]] > score[ids["other"]] > 0
        later = add(store, obs("Answer three", "It happens on saturday again", "s1", 4_000))[0]
        score = {hit.ref.id: hit.score for hit in search(store, "sandwiches saturday").hits}
        assert score[later] > score[ids["other"]]  # its context: the two rows before it (sandwiches)
    finally:
        store.close()


def test_a_deleted_records_words_leave_the_context_of_the_rows_after_it(store, settings):
    ids = _sessions(store)
    store.delete_records(store_pb2.DeleteRecordsRequest(
        refs=[common_pb2.Ref(kind=common_pb2.DOC_KIND_OBSERVATION, id=ids["plan"])]))
    with store.reading() as conn:
        context = dict(conn.execute("SELECT id, context FROM observation_context").fetchall())
    # The two rows after the forgotten one had its words as context; now only what is still there.
    assert context[ids["answer"]] == ""
    assert "museum" not in context[ids["follow"]] and "saturday" in context[ids["follow"]]
    assert context[ids["other"]].startswith("Groceries")
    assert search(store, "museum").observation_total == 0
    score = {hit.ref.id: hit.score for hit in search(store, "saturday museum").hits}
    assert set(score) == {ids["answer"], ids["other"]}
    if settings.store_backend == "sqlite":  # the index still matches its content, row for row
        with store.writing() as conn:
            conn.execute("INSERT INTO observations_fts(observations_fts, rank) VALUES ('integrity-check', 1)")
