"""Records -> documents: stable ids, chunking of long text, metadata, Chroma `where` filters."""

from __future__ import annotations

import pytest

from mnemo.errors import InvalidArgument
from mnemo.v1 import common_pb2
from vector_svc.documents import best_per_record, chunk_text, record_documents, records_where
from vector_svc.embedders import HashEmbedder, MiniLMInt8Embedder
from vector_svc.index import build_where

pytestmark = pytest.mark.unit

SPANS = HashEmbedder().token_spans


def observation(**fields) -> common_pb2.Record:
    base = dict(id=7, project="alpha", platform_source="claude", type="bugfix", title="Fix lock",
                subtitle="SQLite busy timeout", narrative="We raised the busy timeout.",
                facts=["timeout is 5 s", "WAL mode on"], created_at_epoch=1_700_000_000_000)
    base.update(fields)
    return common_pb2.Record(observation=common_pb2.Observation(**base))


def test_observation_documents_have_stable_ids_and_complete_metadata():
    key, docs = record_documents(observation(text="legacy text"), SPANS)
    assert key == ("observation", 7)
    assert [d.id for d in docs] == ["obs_7_title", "obs_7_narrative", "obs_7_fact_0", "obs_7_fact_1", "obs_7_text"]
    assert docs[0].text == "Fix lock. SQLite busy timeout"
    for doc in docs:
        assert None not in doc.metadata.values()
        assert doc.metadata["kind"] == "observation" and doc.metadata["record_id"] == 7
        assert doc.metadata["project"] == "alpha" and doc.metadata["platform_source"] == "claude"
        assert doc.metadata["type"] == "bugfix" and doc.metadata["created_at_epoch"] == 1_700_000_000_000


def test_empty_fields_produce_no_documents():
    _, docs = record_documents(observation(title="", subtitle="", narrative="  ", facts=["", "one"]), SPANS)
    assert [d.id for d in docs] == ["obs_7_fact_1"]


def test_summary_and_prompt_documents():
    summary = common_pb2.Record(summary=common_pb2.Summary(id=3, project="p", request="add search", learned="fts5"))
    key, docs = record_documents(summary, SPANS)
    assert key == ("summary", 3)
    assert [d.id for d in docs] == ["summary_3_request", "summary_3_learned"]
    assert "type" not in docs[0].metadata
    prompt = common_pb2.Record(prompt=common_pb2.UserPrompt(id=9, prompt_text="why is it slow?", project="p"))
    key, docs = record_documents(prompt, SPANS)
    assert key == ("prompt", 9) and [d.id for d in docs] == ["prompt_9"]


def test_a_long_narrative_is_cut_into_overlapping_chunks_that_keep_every_word():
    words = [f"w{i}" for i in range(2000)]
    _, docs = record_documents(observation(narrative=" ".join(words), facts=[]), SPANS)
    chunks = [d for d in docs if d.metadata["field"] == "narrative"]
    assert len(chunks) >= 10
    assert [d.id for d in chunks[:2]] == ["obs_7_narrative_c0", "obs_7_narrative_c1"]
    assert [d.metadata["chunk"] for d in chunks] == list(range(len(chunks)))
    covered = {w for d in chunks for w in d.text.split()}
    assert covered == set(words)
    first, second = chunks[0].text.split(), chunks[1].text.split()
    assert len(first) == 200 and first[-50:] == second[:50]  # 50 tokens of overlap


def test_chunks_fit_the_model_window_with_its_own_tokenizer():
    embedder = MiniLMInt8Embedder()
    text = "refactor src/mnemo/grpc_client.py: retry_once_on_refused() " * 120
    chunks = chunk_text(text, embedder.token_spans)
    assert len(chunks) > 1
    assert all(len(embedder.token_spans(c)) <= 254 for c in chunks)


def test_short_text_is_one_chunk():
    assert chunk_text("short text", SPANS) == ["short text"]


def test_records_where_groups_ids_by_kind():
    assert records_where([("observation", 2), ("observation", 1)]) == {
        "$and": [{"kind": "observation"}, {"record_id": {"$in": [1, 2]}}]
    }
    where = records_where([("observation", 1), ("prompt", 4)])
    assert set(where) == {"$or"} and len(where["$or"]) == 2
    assert records_where([]) is None


def test_best_per_record_keeps_each_records_closest_chunk_for_the_first_records_only():
    ids = ["obs_1_0", "obs_1_1", "summary_2_0", "obs_1_2", "prompt_3_0", "obs_4_0"]
    refs = [("observation", 1), ("observation", 1), ("summary", 2), ("observation", 1), ("prompt", 3),
            ("observation", 4)]
    hits = best_per_record(ids, [0.1, 0.2, 0.3, 0.4, 0.5, 0.6], refs, limit=2)
    assert [(hit.ref.kind, hit.ref.id, hit.chunk_id, round(hit.distance, 3)) for hit in hits] == [
        (common_pb2.DOC_KIND_OBSERVATION, 1, "obs_1_0", 0.1), (common_pb2.DOC_KIND_SUMMARY, 2, "summary_2_0", 0.3)]
    assert len(best_per_record(ids, [0.1] * 6, refs, limit=10)) == 4


def test_build_where_applies_every_filter():
    filters = common_pb2.Filters(
        project="alpha", platform_source="codex", kinds=[common_pb2.DOC_KIND_OBSERVATION],
        obs_types=["bugfix", "decision"], date_start_epoch=10, date_end_epoch=20,
    )
    assert build_where(filters) == {"$and": [
        {"project": "alpha"}, {"platform_source": "codex"}, {"kind": "observation"}, {"kind": "observation"},
        {"type": {"$in": ["bugfix", "decision"]}}, {"created_at_epoch": {"$gte": 10}},
        {"created_at_epoch": {"$lte": 20}},
    ]}
    assert build_where(common_pb2.Filters()) is None
    assert build_where(common_pb2.Filters(project="p")) == {"project": "p"}
    two_kinds = common_pb2.Filters(kinds=[common_pb2.DOC_KIND_PROMPT, common_pb2.DOC_KIND_SUMMARY])
    assert build_where(two_kinds) == {"kind": {"$in": ["prompt", "summary"]}}
    assert build_where(common_pb2.Filters(kinds=[common_pb2.DOC_KIND_UNSPECIFIED])) is None


@pytest.mark.parametrize(
    "filters, field",
    [
        (common_pb2.Filters(concepts=["gotcha"]), "filters.concepts"),
        (common_pb2.Filters(files=["src/"]), "filters.files"),
        (common_pb2.Filters(date_start_epoch=5, date_end_epoch=4), "filters.date_start_epoch"),
        (common_pb2.Filters(kinds=[42]), "filters.kinds"),
    ],
)
def test_build_where_refuses_what_chroma_cannot_honour(filters, field):
    with pytest.raises(InvalidArgument) as err:
        build_where(filters)
    assert err.value.field == field
