"""The store computes evidence and specificity only for searches search_svc fuses: a full-text
search shown in the store's own order asks it not to (StoreSearchRequest.skip_fusion_inputs),
and gets the same rows, scores and totals."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from mnemo.config import Settings, with_overrides
from mnemo.v1 import common_pb2, store_pb2
from search_svc.backend import Backend
from search_svc.fusion import RelevanceFloor
from search_svc.retrieval import Retrieval
from tests.conftest import add_observation, sync_vectors

pytestmark = [pytest.mark.service, pytest.mark.chroma]

HASH_FLOOR = {"mnemo-hash-v1": RelevanceFloor(gate=0.2, keep=0.12)}  # a test floor, as in test_search_relevance_floor


class RecordingStore:
    """The store stub, with every StoreSearchRequest kept."""

    def __init__(self, stub: Any):
        self._stub = stub
        self.searches: list[store_pb2.StoreSearchRequest] = []

    def Search(self, request: store_pb2.StoreSearchRequest) -> store_pb2.StoreSearchResponse:  # noqa: N802 (gRPC's name)
        self.searches.append(request)
        return self._stub.Search(request)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stub, name)


@pytest.fixture
def notes(store_stub, vector_stub) -> None:
    for place in ("admin", "billing", "checkout", "profile", "signup", "settings"):
        add_observation(store_stub, project="web", title=f"Login redirect from the {place} page",
                        narrative=f"the login redirect looped on the {place} page after a failed cookie check")
    sync_vectors(vector_stub)


@contextmanager
def retrieval_over(settings: Settings) -> Iterator[tuple[Retrieval, RecordingStore]]:
    backend = Backend.connect(settings)
    store = RecordingStore(backend.store.stub)
    backend.store.stub = store
    retrieval = Retrieval(backend, settings, floors=HASH_FLOOR)
    try:
        yield retrieval, store
    finally:
        retrieval.close()
        backend.close()


def test_a_full_text_search_asks_no_fusion_inputs(settings, store_server, notes):
    with retrieval_over(with_overrides(settings, vector="off")) as (retrieval, store):
        result = retrieval.hybrid("login redirect", common_pb2.Filters(project="web"), limit=4, offset=1)
        assert len(result.rows) == 4 and result.counts.total == 6
        assert store.searches and all(s.skip_fusion_inputs for s in store.searches)


def test_a_fused_search_asks_for_them(settings, store_server, vector_server, notes):
    with retrieval_over(settings) as (retrieval, store):
        result = retrieval.hybrid("login redirect", common_pb2.Filters(project="web"), limit=3)
        assert result.strategy != "lexical" and result.rows
        assert not store.searches[0].skip_fusion_inputs


def test_skipping_them_leaves_rows_scores_and_totals_as_they_were(store_stub, notes):
    def search(skip: bool) -> store_pb2.StoreSearchResponse:
        return store_stub.Search(store_pb2.StoreSearchRequest(query="cookie redirect", skip_fusion_inputs=skip,
                                                              page=common_pb2.Page(limit=4)))

    full, bare = search(False), search(True)
    assert all(hit.evidence > 0 and hit.specificity > 0 for hit in full.hits)
    assert all(hit.evidence == 0 and hit.specificity == 0 for hit in bare.hits)
    for hit in full.hits:
        hit.evidence, hit.specificity = 0.0, 0.0
    assert list(bare.hits) == list(full.hits) and bare.total == full.total == 6
