"""The Chroma core on a real embedded Chroma: applying change-feed pages, queries, filters, models."""

from __future__ import annotations

from pathlib import Path

import pytest

from mnemo.config import load_settings, with_overrides
from mnemo.errors import FailedPrecondition, InvalidArgument
from mnemo.v1 import common_pb2, store_pb2, vector_pb2
from vector_svc.corpus import Corpora, collection_name
from vector_svc.embedders import HashEmbedder
from vector_svc.index import ChromaConnection, VectorIndex

pytestmark = [pytest.mark.unit, pytest.mark.chroma]

OBS, SUM, PROMPT = common_pb2.DOC_KIND_OBSERVATION, common_pb2.DOC_KIND_SUMMARY, common_pb2.DOC_KIND_PROMPT


@pytest.fixture
def connection(tmp_path: Path):
    conn = ChromaConnection(with_overrides(load_settings({"home": str(tmp_path)}, environ={}), embedder="hash"))
    yield conn
    conn.close()


@pytest.fixture
def index(connection):
    return VectorIndex(connection, HashEmbedder())


class Feed:
    """Builds change-feed pages the way the store sends them."""

    def __init__(self):
        self.seq = 0

    def _next(self, ref, op, record=None) -> store_pb2.Change:
        self.seq += 1
        change = store_pb2.Change(seq=self.seq, ref=ref, op=op)
        if record is not None:
            change.record.CopyFrom(record)
        return change

    def obs(self, id, narrative, project="alpha", type="discovery", facts=(), epoch=1_000, **extra):
        record = common_pb2.Record(observation=common_pb2.Observation(
            id=id, project=project, type=type, narrative=narrative, facts=list(facts),
            created_at_epoch=epoch, platform_source=extra.pop("platform", "claude"), **extra))
        return self._next(common_pb2.Ref(kind=OBS, id=id), store_pb2.CHANGE_OP_UPSERT, record)

    def summary(self, id, learned, project="alpha", epoch=1_000):
        record = common_pb2.Record(summary=common_pb2.Summary(
            id=id, project=project, learned=learned, created_at_epoch=epoch, platform_source="claude"))
        return self._next(common_pb2.Ref(kind=SUM, id=id), store_pb2.CHANGE_OP_UPSERT, record)

    def prompt(self, id, text, project="alpha", epoch=1_000):
        record = common_pb2.Record(prompt=common_pb2.UserPrompt(
            id=id, prompt_text=text, project=project, created_at_epoch=epoch, platform_source="claude"))
        return self._next(common_pb2.Ref(kind=PROMPT, id=id), store_pb2.CHANGE_OP_UPSERT, record)

    def delete(self, kind, id):
        return self._next(common_pb2.Ref(kind=kind, id=id), store_pb2.CHANGE_OP_DELETE)


def refs(hits) -> list[tuple[int, int]]:
    return [(h.ref.kind, h.ref.id) for h in hits]


def test_applied_records_are_found_and_the_watermark_moves(index):
    feed = Feed()
    index.apply([feed.obs(1, "sqlite database locked during migration"), feed.obs(2, "bananas are yellow")])
    hits = index.query("database locked", common_pb2.Filters(), 10)
    assert refs(hits)[0] == (OBS, 1)
    assert hits[0].chunk_id == "obs_1_narrative" and hits[0].distance < hits[1].distance
    assert index.watermark() == 2 and index.count() == 2


def test_one_hit_per_record_with_its_best_chunk(index):
    feed = Feed()
    index.apply([feed.obs(1, "grpc deadline exceeded", facts=["grpc deadline propagation", "unrelated fact"])])
    hits = index.query("grpc deadline exceeded", common_pb2.Filters(), 10)
    assert refs(hits) == [(OBS, 1)] and hits[0].chunk_id == "obs_1_narrative"


def test_a_word_near_the_end_of_a_long_narrative_is_findable(index):
    words = [f"filler{i % 97}" for i in range(2000)]
    words[1990] = "zanzibarquux"
    feed = Feed()
    index.apply([feed.obs(1, " ".join(words)), feed.obs(2, "other text about zanzibar")])
    assert index.count() > 10
    hit = index.query("zanzibarquux", common_pb2.Filters(), 5)[0]
    assert hit.ref.id == 1 and hit.chunk_id.startswith("obs_1_narrative_c")
    assert int(hit.chunk_id.rsplit("_c", 1)[1]) >= 10


def test_an_update_removes_documents_the_record_no_longer_produces(index, connection):
    feed = Feed()
    index.apply([feed.obs(1, "narrative", facts=["a fact", "b fact", "c fact"])])
    assert index.count() == 4
    index.apply([feed.obs(1, "narrative", facts=["a fact"])])
    ids = index.collection().get(include=[])["ids"]
    assert sorted(ids) == ["obs_1_fact_0", "obs_1_narrative"]


def test_deletes_remove_every_document_of_the_record_only(index):
    feed = Feed()
    index.apply([feed.obs(1, "alpha text", facts=["f1", "f2"]), feed.obs(2, "beta text"), feed.prompt(1, "prompt one")])
    index.apply([feed.delete(OBS, 1)])
    assert sorted(index.collection().get(include=[])["ids"]) == ["obs_2_narrative", "prompt_1"]
    # An upsert whose record is gone since (no content) is a delete too.
    index.apply([feed._next(common_pb2.Ref(kind=OBS, id=2), store_pb2.CHANGE_OP_UPSERT)])
    assert index.collection().get(include=[])["ids"] == ["prompt_1"]
    assert index.watermark() == feed.seq


def test_filters_are_applied_inside_chroma(index):
    feed = Feed()
    index.apply([
        feed.obs(1, "cache invalidation bug", project="alpha", type="bugfix", epoch=1_000),
        feed.obs(2, "cache invalidation bug", project="beta", type="bugfix", epoch=2_000),
        feed.obs(3, "cache invalidation decision", project="alpha", type="decision", epoch=3_000, platform="codex"),
        feed.summary(4, "cache invalidation learned", project="alpha", epoch=4_000),
        feed.prompt(5, "cache invalidation please", project="alpha", epoch=5_000),
    ])
    q = lambda **f: sorted(refs(index.query("cache invalidation", common_pb2.Filters(**f), 50)))  # noqa: E731
    assert q(project="beta") == [(OBS, 2)]
    assert (OBS, 2) not in q(project="alpha") and len(q(project="alpha")) == 4
    assert q(kinds=[SUM, PROMPT]) == [(SUM, 4), (PROMPT, 5)]
    assert q(obs_types=["decision"]) == [(OBS, 3)]
    assert q(obs_types=["bugfix"], kinds=[SUM]) == []
    assert q(date_start_epoch=2_000, date_end_epoch=4_000) == [(OBS, 2), (OBS, 3), (SUM, 4)]
    assert q(platform_source="codex") == [(OBS, 3)]
    assert q(project="gamma") == []


def test_query_limits_and_text_are_validated(index):
    with pytest.raises(InvalidArgument):
        index.query("  ", common_pb2.Filters(), 5)
    with pytest.raises(InvalidArgument):
        index.query("x" * 10_001, common_pb2.Filters(), 5)
    with pytest.raises(InvalidArgument):
        index.query("ok", common_pb2.Filters(), 201)
    assert index.query("ok", common_pb2.Filters(), 0) == []  # empty index, default limit


def test_the_watermark_survives_reopening(tmp_path, connection):
    feed = Feed()
    VectorIndex(connection, HashEmbedder()).apply([feed.obs(1, "one"), feed.obs(2, "two")])
    connection.close()
    embedder = HashEmbedder()
    reopened = VectorIndex(connection, embedder)
    assert reopened.watermark() == 2 and reopened.count() == 2 and embedder.calls == 0


class OtherModel(HashEmbedder):
    model = "other-model"
    dimension = 384


def test_an_index_built_with_another_model_is_refused(connection, index):
    Feed_ = Feed()
    index.apply([Feed_.obs(1, "text")])
    other = VectorIndex(connection, OtherModel())
    with pytest.raises(FailedPrecondition) as err:
        other.query("text", common_pb2.Filters(), 5)
    message = str(err.value)
    assert "mnemo-hash-v1/384" in message and "other-model/384" in message and "mnemo reindex" in message


def test_a_rebuilt_collection_replaces_the_main_one(connection, index):
    feed = Feed()
    index.apply([feed.obs(1, "old content")])
    other = VectorIndex(connection, OtherModel())
    rebuilt = other.fresh_rebuild_collection()
    other.apply([feed.obs(2, "new content")], rebuilt)
    other.promote(rebuilt)
    assert refs(other.query("new content", common_pb2.Filters(), 5)) == [(OBS, 2)]
    assert other.watermark() == feed.seq
    assert [c.name for c in connection.client().list_collections()] == ["mnemo_records"]


def test_corpus_collections_upsert_query_reset_and_drop(connection):
    corpora = Corpora(connection, HashEmbedder())
    docs = [vector_pb2.CorpusDocument(id=f"d{i}", text=t, observation_id=10 + i)
            for i, t in enumerate(["the cache layer evicts lru", "grpc deadlines propagate", "bananas"])]
    assert corpora.upsert("my.corpus", docs, reset=False) == 3
    top = corpora.query("my.corpus", "cache eviction lru", 2)
    assert [p.id for p in top][0] == "d0" and top[0].observation_id == 10 and top[0].text.startswith("the cache")
    assert corpora.upsert("my.corpus", docs[:1], reset=True) == 1
    assert corpora.drop("my.corpus") is True and corpora.drop("my.corpus") is False
    with pytest.raises(FailedPrecondition):
        corpora.query("my.corpus", "anything", 3)
    with pytest.raises(InvalidArgument):
        corpora.upsert("bad name!", docs, reset=False)


@pytest.mark.parametrize("name", ["a", "x.", "..", "a..b", "-", "_x_", "A" * 64])
def test_every_valid_corpus_name_maps_to_a_valid_chroma_collection(connection, name):
    corpora = Corpora(connection, HashEmbedder())
    doc = vector_pb2.CorpusDocument(id="d", text="text", observation_id=1)
    assert corpora.upsert(name, [doc], reset=False) == 1
    assert collection_name(name).startswith("corpus_")
    assert collection_name(name) != collection_name(name + "x")


def test_repeated_texts_in_a_page_are_embedded_once(connection):
    embedder = HashEmbedder()
    index = VectorIndex(connection, embedder)
    feed = Feed()
    index.apply([feed.obs(1, "same narrative", facts=["same fact"]), feed.obs(2, "same narrative", facts=["other"])])
    assert embedder.texts_embedded == 3 and index.count() == 4
    vectors = index.collection().get(ids=["obs_1_narrative", "obs_2_narrative"], include=["embeddings"])["embeddings"]
    assert (vectors[0] == vectors[1]).all()


def test_a_collection_deleted_behind_our_back_is_recreated_empty(connection, index):
    from mnemo.errors import Unavailable

    feed = Feed()
    index.apply([feed.obs(1, "text")])
    connection.client().delete_collection("mnemo_records")
    with pytest.raises(Unavailable):
        index.count()
    assert index.watermark() == 0 and index.count() == 0  # the follower will re-index from seq 0


def test_a_fresh_directory_replaces_the_old_one_which_is_kept_aside(tmp_path, connection, index):
    feed = Feed()
    index.apply([feed.obs(1, "indexed before the directory was set aside")])
    chroma_dir = tmp_path / "chroma"
    first = index.start_fresh()
    assert index.count() == 0 and index.watermark() == 0  # an empty index: the follower re-indexes
    assert chroma_dir.is_dir() and (chroma_dir.stat().st_mode & 0o777) == 0o700  # reopened, private
    second = index.start_fresh()
    assert [p.name for p in tmp_path.glob("chroma.broken-*")] == [second.name]  # the latest one only
    assert (second / "chroma.sqlite3").exists() and first.name.startswith("chroma.broken-")


def test_a_chroma_server_is_never_reset_by_vector_svc(tmp_path):
    from vector_svc.index import IndexDamaged

    settings = load_settings({"home": str(tmp_path), "chroma_url": "http://127.0.0.1:9"}, environ={})
    with pytest.raises(IndexDamaged) as err:
        ChromaConnection(settings).start_fresh()
    assert "mnemo reindex" in err.value.message and "http://127.0.0.1:9" in err.value.message
