"""Project-scoped queries through the record -> project map answer exactly what Chroma's `where`
answers, and fall back to it whenever the map cannot vouch for a candidate."""

from __future__ import annotations

from pathlib import Path

import pytest

from mnemo.config import load_settings, with_overrides
from mnemo.v1 import common_pb2
from tests.unit.vector_svc.test_vector_index import Feed
from vector_svc import index as index_module
from vector_svc.embedders import HashEmbedder
from vector_svc.index import ChromaConnection, VectorIndex
from vector_svc.projects import ProjectMap

pytestmark = [pytest.mark.unit, pytest.mark.chroma]

KIND = {common_pb2.DOC_KIND_OBSERVATION: "observation", common_pb2.DOC_KIND_PROMPT: "prompt"}


@pytest.fixture
def index(tmp_path: Path):
    conn = ChromaConnection(with_overrides(load_settings({"home": str(tmp_path)}, environ={}), embedder="hash"))
    yield VectorIndex(conn, HashEmbedder())
    conn.close()


def where_answer(index: VectorIndex, text: str, project: str, limit: int) -> list[tuple[str, int]]:
    """What Chroma's own `where` filter answers, one row per record, closest first."""
    raw = index.collection().query(query_embeddings=index.query_vector(text), n_results=limit * 8,
                                   where={"project": project}, include=["metadatas"])
    seen: list[tuple[str, int]] = []
    for meta in raw["metadatas"][0]:
        key = (meta["kind"], int(meta["record_id"]))
        if key not in seen:
            seen.append(key)
    return seen[:limit]


def fill(index: VectorIndex, feed: Feed) -> None:
    words = ["socket", "retry", "cache", "parser", "deadline", "queue"]
    index.apply([feed.obs(i, f"{words[i % 6]} {words[(i * 5) % 6]} issue number {i}",
                          project=["alpha", "beta", "gamma"][i % 3], facts=[f"{words[i % 6]} fact"])
                 for i in range(1, 90)] + [feed.prompt(500, "why does the socket retry", project="beta")])


def spy(index: VectorIndex, monkeypatch) -> list[bool]:
    """Records, per scoped query, whether the map answered it (True) or Chroma's where (False)."""
    used: list[bool] = []
    original = index._query_project

    def wrapped(*args, **kwargs):
        result = original(*args, **kwargs)
        used.append(result is not None)
        return result

    monkeypatch.setattr(index, "_query_project", wrapped)
    return used


def test_scoped_queries_through_the_map_match_chromas_where(index, monkeypatch):
    fill(index, Feed())
    index.start_project_map().join(30)
    assert index.projects.ready
    used = spy(index, monkeypatch)
    for project in ("alpha", "beta", "gamma"):
        for text in ("socket retry", "cache parser issue"):
            hits = index.query(text, common_pb2.Filters(project=project), 10)
            assert [(KIND[h.ref.kind], h.ref.id) for h in hits] == where_answer(index, text, project, 10)
    assert used and all(used)
    assert index.query("socket", common_pb2.Filters(project="nobody"), 5) == []  # where answers: no such project


def test_records_indexed_after_loading_are_in_the_map_and_deleted_ones_leave_it(index, monkeypatch):
    feed = Feed()
    fill(index, feed)
    index.start_project_map().join(30)
    index.apply([feed.obs(200, "socket retry socket retry", project="alpha")])
    hits = index.query("socket retry socket retry", common_pb2.Filters(project="alpha"), 3)
    assert hits[0].ref.id == 200
    index.apply([feed._next(common_pb2.Ref(kind=common_pb2.DOC_KIND_OBSERVATION, id=200), 2)])  # a delete
    assert index.projects.in_project([("observation", 200)], "alpha") == [None]
    assert 200 not in {h.ref.id for h in index.query("socket retry", common_pb2.Filters(project="alpha"), 10)}


def test_a_candidate_the_map_does_not_know_or_a_small_project_falls_back_to_where(index, monkeypatch):
    fill(index, Feed())
    index.start_project_map().join(30)
    used = spy(index, monkeypatch)
    index.projects.drop([("observation", 3)])  # as if the map had missed a record
    hits = index.query("socket retry", common_pb2.Filters(project="alpha"), 40)
    assert [(KIND[h.ref.kind], h.ref.id) for h in hits] == where_answer(index, "socket retry", "alpha", 40)
    assert used == [False]
    monkeypatch.setattr(index_module, "MAX_SCOPED", 8)  # too few chunks to fill the list: where answers
    index.projects.set([("observation", 3, "alpha")])
    hits = index.query("parser", common_pb2.Filters(project="gamma"), 20)
    assert [(KIND[h.ref.kind], h.ref.id) for h in hits] == where_answer(index, "parser", "gamma", 20)
    assert used == [False, False]


def test_other_filters_and_a_map_not_loaded_use_chromas_where(index, monkeypatch):
    fill(index, Feed())
    used = spy(index, monkeypatch)
    index.query("socket", common_pb2.Filters(project="alpha"), 5)  # not loaded yet
    index.start_project_map().join(30)
    index.query("socket", common_pb2.Filters(project="alpha", obs_types=["discovery"]), 5)
    assert used == []


def test_loading_never_overwrites_what_apply_wrote_meanwhile():
    projects = ProjectMap()

    def page(offset: int, limit: int):
        if offset:
            return [], []
        projects.set([("observation", 1, "new")])  # apply ran between Chroma's read and the map's write
        projects.drop([("observation", 2)])
        metas = [{"kind": "observation", "record_id": 1, "project": "old"},
                 {"kind": "observation", "record_id": 2, "project": "old"},
                 {"kind": "prompt", "record_id": 7, "project": "old"}]
        return ["a", "b", "c"], metas

    assert projects.load(page) == 3 and projects.ready
    assert projects.in_project([("observation", 1), ("observation", 2), ("prompt", 7)], "new") == [True, None, False]
    assert projects.in_project([("prompt", 7), ("summary", 1)], "old") == [True, None]


def test_with_a_chroma_server_the_map_is_not_used(tmp_path):
    settings = with_overrides(load_settings({"home": str(tmp_path)}, environ={}), chroma_url="http://127.0.0.1:9")
    index = VectorIndex(ChromaConnection(settings), HashEmbedder())
    assert index.start_project_map() is None and not index.projects.ready
