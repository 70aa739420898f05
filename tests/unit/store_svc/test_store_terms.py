"""Word counts for specificity (migration 9): term_stats follows every insert, edit and delete in
the writer's transaction, on both backends, and index rows carry each record's specificity."""

from __future__ import annotations

import math

import pytest

from mnemo.v1 import common_pb2, store_pb2
from store_svc import curation, schema, terms
from store_svc.core import Store
from tests.conftest import BOTH_BACKENDS
from tests.unit.store_svc.upgrade import old_observations, write_before

pytestmark = [pytest.mark.unit, BOTH_BACKENDS]

OBS = common_pb2.DOC_KIND_OBSERVATION


@pytest.fixture
def store(settings):
    s = Store.from_settings(settings)
    yield s
    s.close()


def notes(*narratives: str) -> list[common_pb2.Observation]:
    return [common_pb2.Observation(title=f"note {i}", narrative=n, memory_session_id="s1", project="proj",
                                   type="discovery", created_at_epoch=1_000 + i) for i, n in enumerate(narratives)]


def add(store: Store, *narratives: str) -> list[int]:
    return list(store.add_observations(store_pb2.AddObservationsRequest(observations=notes(*narratives))).ids)


def counts(store: Store) -> dict[str, int]:
    with store.reading() as conn:
        return {row["term"]: row["docs"] for row in conn.execute("SELECT term, docs FROM term_stats")}


def specificity(store: Store, ids: list[int]) -> dict[int, float]:
    rows = store.hydrate(store_pb2.HydrateRequest(refs=[common_pb2.Ref(kind=OBS, id=i) for i in ids])).rows
    return {row.ref.id: row.specificity for row in rows}


def test_inserts_count_each_word_once_per_record(store):
    add(store, "The build broke, the BUILD broke again", "The build passed")
    got = counts(store)
    assert got[terms.CORPUS_SIZE_TERM] == 2
    assert (got["build"], got["broke"], got["passed"]) == (2, 1, 1)
    assert "the" not in got  # a stop-word


def test_prompts_count_and_summaries_do_not(store):
    add(store, "The build broke")
    store.upsert_session(store_pb2.UpsertSessionRequest(content_session_id="c1", project="proj"))
    store.record_prompt(store_pb2.RecordPromptRequest(content_session_id="c1", prompt_text="why did the build break?"))
    store.add_summaries(store_pb2.AddSummariesRequest(summaries=[common_pb2.Summary(
        memory_session_id="s1", project="proj", request="Investigate the flaky pipeline")]))
    got = counts(store)
    assert got[terms.CORPUS_SIZE_TERM] == 2 and got["build"] == 2
    assert "pipeline" not in got


def test_a_changed_text_moves_the_counts_and_forgetting_leaves_no_word(store):
    _, changed, forgotten = add(store, "The build broke", "The build passed", "Rotated the zebrafish credentials")
    with store.writing() as conn:  # no RPC rewrites a narrative today; the trigger covers any path that does
        conn.execute("UPDATE observations SET narrative = ? WHERE id = ?", ("The deploy passed", changed))
        conn.execute("UPDATE observations SET title = ? WHERE id = ?", ("renamed", changed))
    got = counts(store)
    assert (got["build"], got["deploy"], got["passed"], got[terms.CORPUS_SIZE_TERM]) == (1, 1, 1, 3)
    curation.forget_rpc(store, store_pb2.ForgetRequest(refs=[common_pb2.Ref(kind=OBS, id=forgotten)]))
    got = counts(store)
    # A forgotten record's own words leave the table with it (no file keeps them).
    assert "zebrafish" not in got and "credentials" not in got and "rotated" not in got
    assert got[terms.CORPUS_SIZE_TERM] == 2 and got["build"] == 1


def test_index_rows_carry_specificity(store):
    ids = add(store, "thanks, sounds great", "sounds great, thanks",
              "grpcio 1.67 segfaults on musl, pinned 1.66", "great, thanks, sounds good")
    got = specificity(store, ids)
    assert got[ids[2]] == max(got.values()) and got[ids[0]] < got[ids[2]]
    # mean log(N / df) over the record's counted words: thanks, sounds and great are in 3 of 4 records
    assert got[ids[0]] == pytest.approx(math.log(4 / 3))
    hits = store.search(store_pb2.StoreSearchRequest(query="great grpcio")).hits
    assert {hit.ref.id: hit.specificity for hit in hits} == pytest.approx({i: got[i] for i in ids})


def test_the_migration_counts_the_rows_already_there(settings, monkeypatch):
    """A store written before migration 9 gets the counts its triggers would have kept."""
    before = notes("The build broke", "The build passed")
    write_before(settings, monkeypatch, 8, lambda old: old_observations(old, *before))
    store = Store.from_settings(settings)
    try:
        assert store.schema_version == schema.LATEST_VERSION
        got = counts(store)
        assert (got["build"], got["broke"], got[terms.CORPUS_SIZE_TERM]) == (2, 1, 2)
        add(store, "The build broke twice")
        assert (counts(store)["broke"], counts(store)[terms.CORPUS_SIZE_TERM]) == (2, 3)
    finally:
        store.close()
