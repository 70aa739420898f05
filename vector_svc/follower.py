"""Following the store's change feed: a background thread plus the Sync/Rebuild/Status operations.

The watermark lives in the collection's metadata and moves only after a page of changes is in
the index, so a restart resumes without re-embedding and a crash mid-page re-applies that page
(applying is idempotent). The store may be down at any time: the thread logs once, backs off,
and carries on when it is back.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from chromadb.api.models.Collection import Collection

from mnemo.errors import FailedPrecondition, InvalidArgument, MnemoError
from mnemo.logs import get_logger
from mnemo.v1 import store_pb2, vector_pb2
from vector_svc.index import ModelMismatch, VectorIndex

if TYPE_CHECKING:  # the store client is handed in: the follower itself imports no gRPC
    from mnemo.grpc_client import ServiceClient
    from mnemo.v1.store_pb2_grpc import StoreServiceStub

log = get_logger(__name__)

PAGE = 256  # changes per ReadChanges call, applied (embedded, written, watermarked) as one batch
MAX_BACKOFF_S = 5.0


@dataclass
class SyncResult:
    applied: int
    watermark: int
    documents: int


class Follower:
    """Moves the index forward along the change feed, in the background and on request."""

    def __init__(self, index: VectorIndex, store: ServiceClient[StoreServiceStub], poll_ms: int):
        self.index = index
        self.store = store
        self.poll_s = max(poll_ms, 10) / 1000.0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._last_problem = ""

    # -- on request ----------------------------------------------------------------------------
    def sync(self, max_changes: int = 0) -> SyncResult:
        """Apply pending changes now: until caught up, or `max_changes` of them."""
        if max_changes < 0:
            raise InvalidArgument("max_changes", "must be >= 0 (0 = until caught up)")
        with self.index.write_lock:
            collection = self.index.collection()
            applied = self._pump(collection, max_changes)
            return SyncResult(applied, self.index.watermark(collection), self.index.count())

    def rebuild(self) -> SyncResult:
        """Re-index everything from seq 0 into a side collection, then swap it in."""
        with self.index.write_lock:
            started = time.monotonic()
            rebuilt = self.index.fresh_rebuild_collection()
            applied = self._pump(rebuilt, 0, stoppable=False)
            self.index.promote(rebuilt)
            result = SyncResult(applied, self.index.watermark(), self.index.count())
            seconds = round(time.monotonic() - started, 2)
            log.info("rebuilt", changes=applied, documents=result.documents, seconds=seconds)
            return result

    def status(self) -> vector_pb2.VectorStatusResponse:
        watermark = self.index.watermark()
        try:
            head = self.store.stub.ReadChanges(store_pb2.ReadChangesRequest(after_seq=watermark, limit=1)).head_seq
        except MnemoError:
            head = 0  # the store is unreachable: unknown head, reported as 0 (see the proto)
        return vector_pb2.VectorStatusResponse(
            watermark=watermark,
            head_seq=head,
            lag=max(head - watermark, 0),
            model=self.index.embedder.model,
            dimension=self.index.embedder.dimension,
            documents=self.index.count(),
            backend=self.index.backend,
        )

    def _pump(self, collection: Collection, max_changes: int, stoppable: bool = True) -> int:
        applied = 0
        while not (stoppable and self._stop.is_set()):
            want = PAGE if not max_changes else min(PAGE, max_changes - applied)
            if want <= 0:
                break
            after = self.index.watermark(collection)
            reply = self.store.stub.ReadChanges(store_pb2.ReadChangesRequest(after_seq=after, limit=want))
            if not reply.changes:
                if reply.head_seq < after:
                    raise FailedPrecondition(
                        f"the store's change feed ends at seq {reply.head_seq}, before the index watermark "
                        f"{after}: the store was replaced; run `mnemo reindex`"
                    )
                break
            applied += self.index.apply(reply.changes, collection)
            if reply.changes[-1].seq >= reply.head_seq:
                break
        return applied

    # -- in the background ---------------------------------------------------------------------
    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="vector-follower", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def _run(self) -> None:
        delay = self.poll_s
        while not self._stop.wait(delay):
            try:
                self._catch_up()
                self._recovered()
                delay = self.poll_s
            except ModelMismatch as err:
                # Trigger: the index was built by another embedding model than the configured one.
                # Why: distances between two models' vectors mean nothing, so it cannot be queried.
                # Outcome: re-embed the whole store now, as `mnemo reindex` would; lexical meanwhile.
                log.warning("model_changed_reindexing", problem=err.message)
                self.rebuild()
                delay = self.poll_s
            except MnemoError as err:
                self._report(f"{err.code}: {err.message}")
                delay = min(max(delay * 2, self.poll_s), MAX_BACKOFF_S)
            except Exception:  # never let the thread die; the next round may succeed
                log.exception("follower_crashed_round")
                delay = MAX_BACKOFF_S

    def _catch_up(self) -> None:
        # One page per lock hold, so a Sync or Rebuild call never waits behind a long backlog.
        while not self._stop.is_set():
            result = self.sync(max_changes=PAGE)
            if result.applied:
                log.debug("synced", applied=result.applied, watermark=result.watermark)
            if result.applied < PAGE:
                break

    def _report(self, problem: str) -> None:
        if problem != self._last_problem:  # once per distinct problem, not every poll
            log.warning("follower_stalled", problem=problem)
            self._last_problem = problem

    def _recovered(self) -> None:
        if self._last_problem:
            log.info("follower_resumed")
            self._last_problem = ""
