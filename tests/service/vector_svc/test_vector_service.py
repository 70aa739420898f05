"""vector_svc over real gRPC with the real store_svc and real (embedded) Chroma."""

from __future__ import annotations

import time

import grpc
import pytest

from mnemo.config import with_overrides
from mnemo.errors import Unavailable
from mnemo.grpc_client import check_health, connect, open_channel
from mnemo.v1 import common_pb2, store_pb2, store_pb2_grpc, vector_pb2, vector_pb2_grpc
from tests.conftest import start_service, wait_for
from vector_svc.embedders import HashEmbedder
from vector_svc.follower import Follower
from vector_svc.index import MAIN_COLLECTION, ChromaConnection, VectorIndex
from vector_svc.main import run_reindex

pytestmark = [pytest.mark.service, pytest.mark.chroma]

OBS, SUM, PROMPT = common_pb2.DOC_KIND_OBSERVATION, common_pb2.DOC_KIND_SUMMARY, common_pb2.DOC_KIND_PROMPT


def add_observations(store_stub, project: str, items: list[dict]) -> list[int]:
    store_stub.UpsertSession(store_pb2.UpsertSessionRequest(content_session_id=f"s-{project}", project=project))
    observations = [
        common_pb2.Observation(memory_session_id=f"s-{project}", project=project, type=i.get("type", "discovery"),
                               title=i.get("title", ""), narrative=i["narrative"], facts=i.get("facts", []),
                               created_at_epoch=i.get("epoch", 0))
        for i in items
    ]
    return list(store_stub.AddObservations(store_pb2.AddObservationsRequest(observations=observations)).ids)


def wait_caught_up(vector_stub, deadline_s: float = 20.0) -> vector_pb2.VectorStatusResponse:
    """Poll Status (the background follower does the work) until the lag is 0."""
    deadline = time.monotonic() + deadline_s
    while True:
        status = vector_stub.Status(vector_pb2.VectorStatusRequest())
        if status.head_seq and status.lag == 0:
            return status
        assert time.monotonic() < deadline, f"vector_svc did not catch up: {status}"
        time.sleep(0.05)


def query(vector_stub, text: str, limit: int = 20, **filters) -> list[tuple[int, int]]:
    reply = vector_stub.Query(
        vector_pb2.VectorQueryRequest(text=text, filters=common_pb2.Filters(**filters), limit=limit)
    )
    return [(h.ref.kind, h.ref.id) for h in reply.hits]


class VectorProcess:
    """vector_svc started and stopped by the test itself (down while the store takes writes)."""

    def __init__(self, settings):
        self.handle, self._on_stop = start_service("vector", settings)
        self.channel = open_channel(self.handle.address)
        self.stub = vector_pb2_grpc.VectorServiceStub(self.channel)

    def stop(self):
        self.channel.close()
        self.handle.stop(0)
        self._on_stop()


def test_index_catches_up_with_writes_made_while_vector_svc_was_down(settings, store_stub):
    ids = add_observations(
        store_stub,
        "alpha",
        [
            {"narrative": "the sqlite database was locked during the migration"},
            {"narrative": "bananas are a yellow fruit"},
        ],
    )
    vector = VectorProcess(settings)
    try:
        status = wait_caught_up(vector.stub)
        assert status.watermark == status.head_seq and status.documents == 2
        assert (status.model, status.dimension) == ("mnemo-hash-v1", 384)
        assert status.backend == f"persistent:{settings.chroma_dir}"
        assert query(vector.stub, "database locked migration")[0] == (OBS, ids[0])
        more = add_observations(store_stub, "alpha", [{"narrative": "grpc deadline exceeded while streaming"}])
        wait_caught_up(vector.stub)
        assert query(vector.stub, "grpc deadline exceeded")[0] == (OBS, more[0])
    finally:
        vector.stop()


def test_a_restart_resumes_from_the_durable_watermark(settings, store_stub):
    add_observations(store_stub, "alpha", [{"narrative": f"note number {i}"} for i in range(5)])
    vector = VectorProcess(settings)
    try:
        first = wait_caught_up(vector.stub)
    finally:
        vector.stop()
    vector = VectorProcess(settings)
    try:
        again = vector.stub.Status(vector_pb2.VectorStatusRequest())
        assert again.watermark == first.watermark and again.documents == first.documents
        assert vector.stub.Sync(vector_pb2.VectorSyncRequest()).applied == 0
    finally:
        vector.stop()


def test_restarted_index_embeds_nothing_it_already_has(settings, store_server, store_stub):
    add_observations(store_stub, "alpha", [{"narrative": f"entry {i}", "facts": [f"fact {i}"]} for i in range(20)])
    store = connect(settings, "store", store_pb2_grpc.StoreServiceStub)
    try:
        first_embedder, second_embedder = HashEmbedder(), HashEmbedder()
        connection = ChromaConnection(settings)
        applied = Follower(VectorIndex(connection, first_embedder), store, 50).sync(max_changes=7)
        assert applied.applied == 7  # Sync honours max_changes
        Follower(VectorIndex(connection, first_embedder), store, 50).sync()
        connection.close()
        assert first_embedder.texts_embedded == 40
        connection = ChromaConnection(settings)
        result = Follower(VectorIndex(connection, second_embedder), store, 50).sync()
        connection.close()
        assert (result.applied, result.documents, second_embedder.texts_embedded) == (0, 40, 0)
    finally:
        store.close()


def test_status_answers_while_the_collection_is_gone(settings, store_server, store_stub):
    """As while a damaged directory is set aside: the index still holds the old collection's handle."""
    add_observations(store_stub, "alpha", [{"narrative": "a collection deleted behind our back"}])
    store = connect(settings, "store", store_pb2_grpc.StoreServiceStub)
    connection = ChromaConnection(settings)
    try:
        follower = Follower(VectorIndex(connection, HashEmbedder()), store, 50)
        follower.sync()
        assert follower.status().documents == 1
        connection.client().delete_collection(MAIN_COLLECTION)
        status = follower.status()
        assert (status.documents, status.head_seq) == (1, 1)  # the last count Chroma gave
    finally:
        connection.close()
        store.close()


def test_rebuild_gives_the_same_results_as_incremental_indexing(settings, store_stub, vector_stub):
    add_observations(store_stub, "alpha", [{"narrative": "cache invalidation on write", "facts": ["lru cache"]}])
    add_observations(store_stub, "beta", [{"narrative": "vector index rebuild from the feed"}])
    for i in range(10):
        add_observations(store_stub, "alpha", [{"narrative": f"assorted memory {i} about caches and indexes"}])
    store_stub.RecordPrompt(
        store_pb2.RecordPromptRequest(content_session_id="s-alpha", prompt_text="rebuild the cache")
    )
    wait_caught_up(vector_stub)
    questions = ["cache invalidation", "rebuild index", "assorted memory 3", "lru"]

    def answers():
        replies = [vector_stub.Query(vector_pb2.VectorQueryRequest(text=q, limit=10)) for q in questions]
        return [[(h.ref.kind, h.ref.id, h.chunk_id, round(h.distance, 5)) for h in r.hits] for r in replies]

    before = answers()
    count = vector_stub.Count(vector_pb2.VectorCountRequest()).count
    rebuilt = vector_stub.Rebuild(vector_pb2.VectorRebuildRequest())
    assert rebuilt.documents == count and rebuilt.watermark == wait_caught_up(vector_stub).head_seq
    assert answers() == before


def test_filters_never_leak_other_records(settings, store_stub, vector_stub):
    alpha = add_observations(
        store_stub,
        "alpha",
        [
            {"narrative": "token refresh race", "type": "bugfix", "epoch": 1_000_000},
            {"narrative": "token refresh design", "type": "decision", "epoch": 2_000_000},
        ],
    )
    beta = add_observations(
        store_stub, "beta", [{"narrative": "token refresh race", "type": "bugfix", "epoch": 1_500_000}]
    )
    wait_caught_up(vector_stub)
    assert sorted(query(vector_stub, "token refresh race", project="alpha")) == [(OBS, alpha[0]), (OBS, alpha[1])]
    assert query(vector_stub, "token refresh race", project="beta") == [(OBS, beta[0])]
    assert query(vector_stub, "token refresh", obs_types=["decision"]) == [(OBS, alpha[1])]
    assert query(vector_stub, "token refresh", kinds=[SUM, PROMPT]) == []
    window = query(vector_stub, "token refresh", date_start_epoch=1_200_000, date_end_epoch=2_000_000)
    assert sorted(window) == sorted([(OBS, beta[0]), (OBS, alpha[1])])
    with pytest.raises(grpc.RpcError) as err:
        query(vector_stub, "token", concepts=["gotcha"])
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "concepts" in err.value.details()


def test_deletes_propagate(settings, store_stub, vector_stub):
    ids = add_observations(
        store_stub, "alpha", [{"narrative": "to be deleted soon", "facts": ["a", "b"]}, {"narrative": "kept forever"}]
    )
    wait_caught_up(vector_stub)
    assert vector_stub.Count(vector_pb2.VectorCountRequest()).count == 4
    store_stub.DeleteRecords(store_pb2.DeleteRecordsRequest(refs=[common_pb2.Ref(kind=OBS, id=ids[0])]))
    synced = vector_stub.Sync(vector_pb2.VectorSyncRequest())
    assert synced.documents == 1
    assert query(vector_stub, "to be deleted soon") == [(OBS, ids[1])]


def test_vector_svc_survives_the_store_being_down(settings):
    vector = VectorProcess(settings)
    store_handle = None
    try:
        status = vector.stub.Status(vector_pb2.VectorStatusRequest())
        assert (status.head_seq, status.watermark) == (0, 0)
        with pytest.raises(grpc.RpcError) as err:
            vector.stub.Sync(vector_pb2.VectorSyncRequest())
        assert err.value.code() == grpc.StatusCode.UNAVAILABLE
        store_handle, store_stop = start_service("store", settings)
        # Channels share subchannels: wait out the reconnect backoff of the failed attempts.
        deadline = time.monotonic() + 10
        while not check_health(store_handle.address):
            assert time.monotonic() < deadline, "store_svc did not become healthy"
            time.sleep(0.05)
        stub = store_pb2_grpc.StoreServiceStub(open_channel(store_handle.address))
        ids = add_observations(stub, "alpha", [{"narrative": "written after the store came back"}])
        wait_caught_up(vector.stub)
        assert query(vector.stub, "store came back") == [(OBS, ids[0])]
    finally:
        vector.stop()  # first: its follower polls the store
        if store_handle is not None:
            store_handle.stop(0)
            store_stop()


def indexed_with_hash(settings, store_stub) -> list[int]:
    """One observation, indexed by a vector_svc with the hash embedder (then stopped)."""
    ids = add_observations(store_stub, "alpha", [{"narrative": "how to fix the database lock error"}])
    vector = VectorProcess(settings)
    try:
        wait_caught_up(vector.stub)
    finally:
        vector.stop()
    return ids


def test_a_model_change_re_embeds_the_index_on_its_own(settings, store_stub):
    ids = indexed_with_hash(settings, store_stub)
    vector = VectorProcess(with_overrides(settings, embedder="minilm-int8", vector_poll_ms=50))
    try:
        def rebuilt():
            try:
                status = vector.stub.Status(vector_pb2.VectorStatusRequest())
            except grpc.RpcError as err:  # the old index is refused until the rebuild swaps in
                assert err.code() == grpc.StatusCode.FAILED_PRECONDITION
                assert "mnemo-hash-v1/384" in (err.details() or "")
                return None
            return status if status.lag == 0 and status.documents == 1 else None

        assert wait_for(rebuilt, 60, "the index re-embedded with the new model").model == "all-MiniLM-L6-v2-onnx-int8"
        assert query(vector.stub, "resolving a locked sqlite database") == [(OBS, ids[0])]
    finally:
        vector.stop()


def test_a_model_change_can_be_reindexed_by_hand(settings, store_stub, capsys):
    ids = indexed_with_hash(settings, store_stub)
    vector = VectorProcess(with_overrides(settings, embedder="minilm-int8", vector_poll_ms=3_600_000))
    try:
        with pytest.raises(grpc.RpcError) as err:
            vector.stub.Query(vector_pb2.VectorQueryRequest(text="database lock"))
        assert err.value.code() == grpc.StatusCode.FAILED_PRECONDITION
        assert "mnemo-hash-v1/384" in err.value.details() and "mnemo reindex" in err.value.details()
        assert run_reindex(settings, None) == 0
        assert capsys.readouterr().out.startswith("reindexed: 1 changes applied, 1 documents")
        assert vector.stub.Status(vector_pb2.VectorStatusRequest()).model == "all-MiniLM-L6-v2-onnx-int8"
        assert query(vector.stub, "resolving a locked sqlite database") == [(OBS, ids[0])]
    finally:
        vector.stop()


def test_an_idle_model_is_let_go_and_the_next_query_loads_it_again(settings, store_stub):
    ids = add_observations(store_stub, "alpha", [{"narrative": "the sqlite database was locked during the migration"},
                                                 {"narrative": "bananas are a yellow fruit"}])
    idle = with_overrides(settings, embedder="minilm-int8", vector_idle_release_s=2.0, vector_poll_ms=50)
    vector = VectorProcess(idle)
    try:
        assert wait_caught_up(vector.stub, 60).model_loaded
        assert query(vector.stub, "database locked")[0] == (OBS, ids[0])

        def status():
            return vector.stub.Status(vector_pb2.VectorStatusRequest())

        wait_for(lambda: not status().model_loaded, 60, "the idle model let go")
        assert query(vector.stub, "a locked sqlite database")[0] == (OBS, ids[0])  # a new text: embedded
        assert status().model_loaded
    finally:
        vector.stop()


def test_reindex_says_what_to_do_when_vector_svc_is_not_running(settings):
    with pytest.raises(Unavailable) as err:
        run_reindex(settings, None)
    assert "mnemo up" in str(err.value) and settings.address("vector") in str(err.value)


def test_corpus_rpcs(vector_stub):
    docs = [
        vector_pb2.CorpusDocument(id="p1", text="the store uses sqlite wal mode", observation_id=3),
        vector_pb2.CorpusDocument(id="p2", text="chroma holds the vectors", observation_id=4),
    ]
    reply = vector_stub.UpsertCorpusDocuments(vector_pb2.UpsertCorpusDocumentsRequest(corpus="arch", documents=docs))
    assert reply.documents == 2
    passages = vector_stub.QueryCorpus(
        vector_pb2.QueryCorpusRequest(corpus="arch", text="sqlite wal", limit=1)
    ).passages
    assert [(p.id, p.observation_id) for p in passages] == [("p1", 3)]
    assert vector_stub.DropCorpus(vector_pb2.DropCorpusRequest(corpus="arch")).dropped
    with pytest.raises(grpc.RpcError) as err:
        vector_stub.QueryCorpus(vector_pb2.QueryCorpusRequest(corpus="arch", text="x"))
    assert err.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    with pytest.raises(grpc.RpcError) as err:
        vector_stub.UpsertCorpusDocuments(vector_pb2.UpsertCorpusDocumentsRequest(corpus="no/slash"))
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
