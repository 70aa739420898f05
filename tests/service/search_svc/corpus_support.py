"""What a priming job really sent: the embedding batches vector_svc received, per corpus.

The count is taken where the batches arrive (vector_svc's corpus core, which the
in-process vector service calls for every UpsertCorpusDocuments), so a test sees the
job's effect on the vector side, not a counter the job keeps about itself.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Sequence

import pytest

from mnemo.v1 import vector_pb2
from vector_svc.corpus import Corpora as VectorCorpora


class ReceivedBatches:
    """Batches and passages vector_svc received, per corpus (thread-safe: RPCs run on a pool)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._batches: Counter[str] = Counter()
        self._documents: Counter[str] = Counter()

    def add(self, corpus: str, documents: int) -> None:
        with self._lock:
            self._batches[corpus] += 1
            self._documents[corpus] += documents

    def batches(self, corpus: str) -> int:
        with self._lock:
            return self._batches[corpus]

    def documents(self, corpus: str) -> int:
        with self._lock:
            return self._documents[corpus]


def count_received_batches(monkeypatch: pytest.MonkeyPatch) -> ReceivedBatches:
    """Count every batch vector_svc's corpus core stores from now until the test ends."""
    seen = ReceivedBatches()
    upsert = VectorCorpora.upsert

    def counting(self: VectorCorpora, corpus: str, documents: Sequence[vector_pb2.CorpusDocument],
                 reset: bool, generation: str = "", project: str = "") -> int:
        count = upsert(self, corpus, documents, reset, generation, project)
        seen.add(corpus, len(documents))
        return count

    monkeypatch.setattr(VectorCorpora, "upsert", counting)
    return seen
