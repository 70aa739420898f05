"""What makes a vector query cheap keeps its answers: refs read from document ids (no metadata
fetched), a foreign id still resolved through its metadata, the query-vector LRU, heap trimming,
and the int8 session without a memory arena."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from mnemo.config import load_settings, with_overrides
from mnemo.v1 import common_pb2
from tests.unit.vector_svc.test_vector_index import Feed
from vector_svc import index as index_module
from vector_svc.documents import observation_documents, prompt_documents, ref_of_id, summary_documents
from vector_svc.embedders import HashEmbedder, MiniLMInt8Embedder
from vector_svc.index import ChromaConnection, VectorIndex
from vector_svc.memory import HeapTrimmer

pytestmark = [pytest.mark.unit, pytest.mark.chroma]

OBS, PROMPT = common_pb2.DOC_KIND_OBSERVATION, common_pb2.DOC_KIND_PROMPT


@pytest.fixture
def index(tmp_path: Path):
    conn = ChromaConnection(with_overrides(load_settings({"home": str(tmp_path)}, environ={}), embedder="hash"))
    yield VectorIndex(conn, HashEmbedder())
    conn.close()


def short_spans(text: str) -> list[tuple[int, int]]:
    return [(i, i + 1) for i in range(len(text))]  # one token per character: long text is chunked


def test_every_document_id_names_its_record_and_foreign_ids_name_none():
    long = "x" * 600
    obs = common_pb2.Observation(id=41, title="t", subtitle="s", narrative=long, facts=["a", long], text="legacy")
    summary = common_pb2.Summary(id=7, request="r", learned=long, next_steps="n")
    prompt = common_pb2.UserPrompt(id=1234, prompt_text=long)
    docs = (observation_documents(obs, short_spans) + summary_documents(summary, short_spans)
            + prompt_documents(prompt, short_spans))
    assert any(d.id.endswith("_c1") for d in docs)  # chunked ids are covered too
    for doc in docs:
        assert ref_of_id(doc.id) == (doc.metadata["kind"], doc.metadata["record_id"]), doc.id
    for foreign in ("legacy-7", "obs_x_title", "observation_1", "prompt_", "summary-3", ""):
        assert ref_of_id(foreign) is None, foreign


def test_query_reads_refs_from_ids_and_matches_the_metadata_answer(index):
    feed = Feed()
    index.apply([feed.obs(i, f"websocket reconnect backoff number {i}", facts=[f"fact {i} about sockets"])
                 for i in range(1, 30)] + [feed.prompt(99, "why does the websocket reconnect loop")])
    hits = index.query("websocket reconnect", common_pb2.Filters(), 20)
    vector = index.query_vector("websocket reconnect")
    raw = index.collection().query(query_embeddings=vector, n_results=80, include=["distances", "metadatas"])
    expected, seen = [], set()
    for meta, distance in zip(raw["metadatas"][0], raw["distances"][0], strict=True):
        key = (meta["kind"], int(meta["record_id"]))
        if key not in seen:
            seen.add(key)
            expected.append((key, distance))
    names = {OBS: "observation", PROMPT: "prompt"}
    assert [(names[h.ref.kind], h.ref.id) for h in hits] == [key for key, _ in expected[:20]]
    assert np.allclose([h.distance for h in hits], [distance for _, distance in expected[:20]])


def test_a_document_with_a_foreign_id_is_resolved_through_its_metadata(index):
    feed = Feed()
    index.apply([feed.obs(1, "alpha beta gamma")])
    vector = HashEmbedder().embed(["delta epsilon"])
    index.collection().upsert(ids=["imported-doc-1"], embeddings=vector, metadatas=[{
        "kind": "observation", "record_id": 5, "project": "alpha", "platform_source": "", "created_at_epoch": 1}])
    hits = index.query("delta epsilon", common_pb2.Filters(), 5)
    assert [(h.ref.kind, h.ref.id, h.chunk_id) for h in hits][0] == (OBS, 5, "imported-doc-1")
    assert {h.ref.id for h in hits} == {1, 5}


def test_a_repeated_query_is_not_embedded_again_and_the_cache_is_bounded(index, monkeypatch):
    feed = Feed()
    index.apply([feed.obs(1, "alpha beta gamma")])
    before = index.embedder.calls
    first = index.query("alpha beta", common_pb2.Filters(), 5)
    assert index.query("alpha beta", common_pb2.Filters(), 5) == first
    assert index.embedder.calls == before + 1
    monkeypatch.setattr(index_module, "QUERY_CACHE", 3)
    for word in ("one", "two", "three", "four"):
        index.query(word, common_pb2.Filters(), 5)
    assert len(index._query_vectors) == 3
    index.query("alpha beta", common_pb2.Filters(), 5)  # evicted: embedded again
    assert index.embedder.calls == before + 6


def test_heap_trimmer_trims_after_every_indexing_batch_and_rate_limits_queries(index):
    now = [100.0]
    trimmer = HeapTrimmer(every_s=5.0, clock=lambda: now[0])
    trimmer.maybe()
    trimmer.maybe()
    assert trimmer.trims == 1
    now[0] += 5.0
    trimmer.maybe()
    assert trimmer.trims == 2
    feed = Feed()
    before = index.trimmer.trims
    index.apply([feed.obs(1, "alpha")])
    index.apply([feed.obs(2, "beta")])
    assert index.trimmer.trims == before + 2


def test_int8_session_keeps_no_memory_arena_and_embeds_as_before():
    embedder = MiniLMInt8Embedder()
    with embedder.model_memory.use() as session:
        options = session.get_session_options()
    assert not options.enable_cpu_mem_arena and not options.enable_mem_pattern
    short, wide = embedder.embed(["database lock", "a much longer sentence about the database lock error " * 8])
    again = embedder.embed(["database lock"])[0]
    assert np.allclose(short, again, atol=1e-6)  # a wide batch in between changes nothing
    assert float(short @ wide) > 0.3
