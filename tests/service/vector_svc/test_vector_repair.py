"""vector_svc repairs an index that Chroma can no longer read or write, by itself.

A SIGKILL in the middle of an upsert can wedge an embedded Chroma collection for good (upstream
chroma-core/chroma issue 7678): every later get, count, query or upsert of it raises the same
InternalError. That cannot be produced on demand, so a fault-injection wrapper around Chroma's
Collection raises exactly that error for a wedged collection (or for every collection of a wedged
directory); everything else is real: the store, the gRPC servers, the follower, Chroma itself.
"""

from __future__ import annotations

import functools
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc
import pytest
from chromadb.api.models.Collection import Collection
from chromadb.errors import InternalError as ChromaInternalError

from mnemo.config import Settings
from mnemo.v1 import common_pb2, vector_pb2
from tests.conftest import wait_for
from tests.service.vector_svc.test_vector_service import VectorProcess, add_observations, query, wait_caught_up
from vector_svc.follower import DAMAGED_ROUNDS
from vector_svc.index import BROKEN_SUFFIX, MAIN_COLLECTION

pytestmark = [pytest.mark.service, pytest.mark.chroma]

OBS = common_pb2.DOC_KIND_OBSERVATION
WEDGED = ("Error executing plan: Error sending backfill request to compactor: "
          "Failed to apply logs to the hnsw segment writer")
DATA_OPERATIONS = ("count", "get", "upsert", "delete", "query")


class Wedge:
    """Makes Chroma fail as a wedged HNSW segment does: every data operation, every time."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, chroma_dir: Path):
        self.chroma_dir = chroma_dir
        self.next_main = False  # wedge the main collection at its next operation
        self.collection_ids: set = set()
        self.directory_inode: int | None = None
        self.raised = 0
        for name in DATA_OPERATIONS:
            monkeypatch.setattr(Collection, name, self._faulty(getattr(Collection, name)))

    def _faulty(self, operation: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(operation)
        def call(collection: Collection, *args: Any, **kwargs: Any) -> Any:
            if self._wedged(collection):
                self.raised += 1
                raise ChromaInternalError(WEDGED)
            return operation(collection, *args, **kwargs)

        return call

    def _wedged(self, collection: Collection) -> bool:
        if self.next_main and collection.name == MAIN_COLLECTION:
            self.collection_ids.add(collection.id)
            self.next_main = False
        if collection.id in self.collection_ids:
            return True
        # A directory is identified by its inode: one set aside keeps it, a fresh one has another.
        return self.directory_inode is not None and self.chroma_dir.stat().st_ino == self.directory_inode


@pytest.fixture
def wedge(monkeypatch: pytest.MonkeyPatch, settings: Settings) -> Wedge:
    return Wedge(monkeypatch, settings.chroma_dir)


def status_until_repaired(vector: VectorProcess, wedge: Wedge, documents: int) -> vector_pb2.VectorStatusResponse:
    """Polls Status, which must answer all along (never INTERNAL, never an error), until the
    index holds `documents` documents again with lag 0 after the fault was injected."""

    def repaired():
        status = vector.stub.Status(vector_pb2.VectorStatusRequest())
        assert status.head_seq > 0 and status.watermark <= status.head_seq
        done = wedge.raised >= DAMAGED_ROUNDS and status.lag == 0 and status.documents == documents
        return status if done else None

    return wait_for(repaired, 60, "vector_svc rebuilt the damaged index")


def seed(settings: Settings, store_stub: Any) -> tuple[VectorProcess, list[int]]:
    ids = add_observations(store_stub, "alpha", [
        {"narrative": "the sqlite database was locked during the migration"},
        {"narrative": "bananas are a yellow fruit"},
    ])
    vector = VectorProcess(settings)
    assert wait_caught_up(vector.stub).documents == 2
    return vector, ids


def test_a_wedged_collection_is_rebuilt_from_the_store_while_status_answers(settings, store_stub, wedge):
    vector, ids = seed(settings, store_stub)
    try:
        wedge.next_main = True
        later = add_observations(store_stub, "alpha", [{"narrative": "a kernel panic after the driver update"}])
        with pytest.raises(grpc.RpcError) as err:  # the wedged index: unavailable, never INTERNAL
            query(vector.stub, "kernel panic")
        assert err.value.code() == grpc.StatusCode.UNAVAILABLE
        details = err.value.details() or ""
        assert "damaged" in details and "rebuilds it from the store" in details

        status = status_until_repaired(vector, wedge, documents=3)

        assert status.watermark == status.head_seq
        assert query(vector.stub, "kernel panic", limit=1) == [(OBS, later[0])]
        assert query(vector.stub, "yellow fruit", limit=1) == [(OBS, ids[1])]
        assert not list(settings.chroma_dir.parent.glob(f"{settings.chroma_dir.name}{BROKEN_SUFFIX}*"))
    finally:
        vector.stop()


def test_an_unusable_chroma_directory_is_set_aside_and_the_index_rebuilt(settings, store_stub, wedge):
    vector, ids = seed(settings, store_stub)
    try:
        wedge.directory_inode = settings.chroma_dir.stat().st_ino  # every collection in it fails
        later = add_observations(store_stub, "alpha", [{"narrative": "a kernel panic after the driver update"}])

        status_until_repaired(vector, wedge, documents=3)

        aside = list(settings.chroma_dir.parent.glob(f"{settings.chroma_dir.name}{BROKEN_SUFFIX}*"))
        assert len(aside) == 1 and (aside[0] / "chroma.sqlite3").exists()  # kept for diagnosis
        assert stat.S_IMODE(settings.chroma_dir.stat().st_mode) == 0o700
        assert query(vector.stub, "kernel panic", limit=1) == [(OBS, later[0])]
        assert query(vector.stub, "database locked", limit=1) == [(OBS, ids[0])]
    finally:
        vector.stop()
