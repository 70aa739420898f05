"""A priming job against a vector_svc replica that still runs a stalled first attempt of its
reset batch: the generation fence (vector_svc.corpus) keeps a late reset of the same job from
dropping the collection, and where Chroma's lack of a conditional delete still lets one through,
the job sees fewer passages than it sent and fails rather than end "primed" on part of them."""

from __future__ import annotations

from collections.abc import Sequence

import grpc
import pytest

from mnemo.v1 import search_pb2, vector_pb2
from tests.service.search_svc.test_corpus_service import build, prime, seed_observations
from vector_svc.corpus import Corpora as VectorCorpora
from vector_svc.corpus import collection_name

pytestmark = [pytest.mark.service, pytest.mark.chroma]


def _stalled_reset_lands_before_batch(monkeypatch: pytest.MonkeyPatch, number: int) -> list[str]:
    """Before batch `number` arrives, the job's first batch is written again as a reset that
    read the collection's generation before the job's retry and deletes only now."""
    upsert = VectorCorpora.upsert
    seen: list[Sequence[vector_pb2.CorpusDocument]] = []
    generations: list[str] = []

    def replica(
        self: VectorCorpora,
        corpus: str,
        documents: Sequence[vector_pb2.CorpusDocument],
        reset: bool,
        generation: str = "",
        project: str = "",
    ) -> int:
        seen.append(list(documents))
        generations.append(generation)
        if len(seen) == number:
            self.connection.client().delete_collection(collection_name(corpus, project))
            upsert(self, corpus, seen[0], True, generation, project)
        return upsert(self, corpus, documents, reset, generation, project)

    monkeypatch.setattr(VectorCorpora, "upsert", replica)
    return generations


def test_a_job_that_lost_passages_to_another_replica_fails_instead_of_priming(search_stub, store_stub, monkeypatch):
    seed_observations(store_stub, 60)
    build(search_stub, "kb", project="alpha")
    generations = _stalled_reset_lands_before_batch(monkeypatch, 3)
    with pytest.raises(grpc.RpcError) as failed:
        prime(search_stub, "kb")
    assert failed.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert "call prime_corpus again" in (failed.value.details() or "")
    assert len(generations) == 3 and len(set(generations)) == 1 and generations[0]  # one job, one generation
    listed = search_stub.ListCorpora(search_pb2.ListCorporaToolRequest())
    assert [c.priming_state for c in listed.corpora if c.name == "kb"] != ["primed"]
