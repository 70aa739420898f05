"""Following the store's change feed: a background thread plus the Sync/Rebuild/Status operations.

The watermark lives in the collection's metadata and moves only after a page of changes is in
the index, so a restart resumes without re-embedding and a crash mid-page re-applies that page
(applying is idempotent). The store may be down at any time: the thread logs once, backs off,
and carries on when it is back. When Chroma itself fails round after round (a collection
wedged by a kill), the follower rebuilds the index from the store, in a fresh Chroma directory
if it must: the index is a projection of the store, so nothing is lost.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from chromadb.api.models.Collection import Collection

from mnemo.errors import FailedPrecondition, InvalidArgument, MnemoError, Unavailable
from mnemo.logs import get_logger
from mnemo.v1 import store_pb2, vector_pb2
from vector_svc.index import IndexDamaged, ModelMismatch, VectorIndex

if TYPE_CHECKING:  # the store client is handed in: the follower itself imports no gRPC
    from mnemo.grpc_client import ServiceClient
    from mnemo.v1.store_pb2_grpc import StoreServiceStub
    from vector_svc.election import Election
    from vector_svc.idle import Activity

log = get_logger(__name__)

PAGE = 256  # changes per ReadChanges call, applied (embedded, written, watermarked) as one batch
MAX_BACKOFF_S = 5.0
DAMAGED_ROUNDS = 3  # rounds in a row that Chroma fails inside its storage before the index is rebuilt


@dataclass
class SyncResult:
    applied: int
    watermark: int
    documents: int


class Follower:
    """Moves the index forward along the change feed, in the background and on request."""

    def __init__(self, index: VectorIndex, store: ServiceClient[StoreServiceStub], poll_ms: int,
                 election: Election | None = None, activity: Activity | None = None):
        self.index = index
        self.store = store
        self.activity = activity  # applying changes is use: the service does not idle out meanwhile
        # With replicas on one Chroma server, only the lease holder follows (vector_svc.election).
        self.election = election
        self.poll_s = max(poll_ms, 10) / 1000.0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._last_problem = ""
        self._damaged_rounds = 0

    # -- on request ----------------------------------------------------------------------------
    def sync(self, max_changes: int = 0, *, count: bool = True) -> SyncResult:
        """Apply pending changes now: until caught up, or `max_changes` of them. Without `count`,
        the documents are the last count taken (the background rounds: Chroma's count is not free,
        and a poll every vector_poll_ms that applies nothing paid it each time)."""
        if max_changes < 0:
            raise InvalidArgument("max_changes", "must be >= 0 (0 = until caught up)")
        with self.index.write_lock:
            collection = self.index.collection()
            applied = self._pump(collection, max_changes)
            documents = self.index.count() if count else self.index.last_count
            return SyncResult(applied, self.index.watermark(collection), documents)

    def rebuild(self) -> SyncResult:
        """Re-index everything from seq 0 into a side collection, then swap it in. When Chroma
        cannot do even that (its directory is damaged, not one collection), the directory is set
        aside and the index rebuilt in a fresh one."""
        with self.index.write_lock:
            try:
                return self._rebuild_once()
            except IndexDamaged as err:
                aside = self.index.start_fresh()
                log.error("chroma_dir_set_aside", problem=err.message, moved_to=str(aside),
                          consequence="rebuilding the index in a fresh directory; knowledge corpora "
                                      "must be primed again (reprime_corpus)")
                return self._rebuild_once()

    def repair(self, damage: IndexDamaged) -> SyncResult:
        """Rebuild an index that Chroma can no longer read or write (see DAMAGED_ROUNDS)."""
        log.error("index_damaged_rebuilding", problem=damage.message, rounds=self._damaged_rounds)
        result = self.rebuild()
        self._damaged_rounds = 0
        return result

    def _rebuild_once(self) -> SyncResult:
        """One rebuild; the caller (rebuild) holds the write lock."""
        started = time.monotonic()
        rebuilt = self.index.fresh_rebuild_collection()
        applied = self._pump(rebuilt, 0, stoppable=False)
        self.index.promote(rebuilt)
        result = SyncResult(applied, self.index.watermark(), self.index.count())
        seconds = round(time.monotonic() - started, 2)
        log.info("rebuilt", changes=applied, documents=result.documents, seconds=seconds)
        return result

    def status(self) -> vector_pb2.VectorStatusResponse:
        """Answers even while Chroma fails: the watermark is the collection's cached metadata, and
        the document count the last one Chroma gave (the failure itself is in the log). Damage,
        a collection gone while its directory is set aside, an unreachable Chroma server: all
        are Unavailable."""
        try:
            watermark = self.index.watermark()
        except Unavailable:
            watermark = 0  # the collection cannot even be opened: nothing is known to be indexed
        try:
            documents = self.index.count()
        except Unavailable:
            documents = self.index.last_count
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
            documents=documents,
            backend=self.index.backend,
            model_loaded=self.index.embedder.model_loaded,
        )

    def nothing_to_follow(self) -> bool:
        """True when the index holds every change the store has, asked now (vector_svc.idle: exiting
        then loses no work). False while the store or Chroma cannot say."""
        try:
            watermark = self.index.watermark()
            head = self.store.stub.ReadChanges(store_pb2.ReadChangesRequest(after_seq=watermark, limit=1)).head_seq
        except MnemoError:
            return False
        return head <= watermark

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
            if self.activity is not None:
                self.activity.touch()
            if reply.changes[-1].seq >= reply.head_seq:
                break
        return applied

    # -- in the background ---------------------------------------------------------------------
    def start(self) -> None:
        if self.election is not None:
            self.election.start()
        self._thread = threading.Thread(target=self._run, name="vector-follower", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
        if self.election is not None:
            self.election.stop()

    def _run(self) -> None:
        delay = self.poll_s
        while not self._stop.wait(delay):
            if not self._may_follow():
                delay = self.poll_s  # a standby: its election thread asks for the lease meanwhile
                continue
            try:
                delay = self._round(delay)
            except MnemoError as err:  # a rebuild that failed itself: the next round tries again
                self._report(f"{err.code}: {err.message}")
                delay = MAX_BACKOFF_S
            except Exception:  # never let the thread die; the next round may succeed
                log.exception("follower_crashed_round")
                delay = MAX_BACKOFF_S

    def _round(self, delay: float) -> float:
        """One round of catching up; returns the delay before the next one."""
        try:
            self._catch_up()
        except IndexDamaged as err:
            return self._on_damage(err, delay)
        except ModelMismatch as err:
            # Trigger: the index was built by another embedding model than the configured one.
            # Why: distances between two models' vectors mean nothing, so it cannot be queried.
            # Outcome: re-embed the whole store now, as `mnemo reindex` would; lexical meanwhile.
            log.warning("model_changed_reindexing", problem=err.message)
            self.rebuild()
            return self.poll_s
        except MnemoError as err:
            self._report(f"{err.code}: {err.message}")
            return self._backoff(delay)
        self._recovered()
        return self.poll_s

    def _backoff(self, delay: float) -> float:
        return min(max(delay * 2, self.poll_s), MAX_BACKOFF_S)

    def _on_damage(self, damage: IndexDamaged, delay: float) -> float:
        # Trigger: Chroma failed inside its own storage (InternalError), DAMAGED_ROUNDS rounds in a row.
        # Why: a kill mid-upsert can wedge a collection for good (upstream chroma issue 7678):
        # every later read or write of it fails the same way, and retrying the page never heals it.
        # Outcome: rebuild the index from the store, as `mnemo reindex` would; lexical meanwhile.
        self._damaged_rounds += 1
        self._report(f"{damage.code}: {damage.message}")
        if self._damaged_rounds < DAMAGED_ROUNDS:
            return self._backoff(delay)
        self.repair(damage)
        return self.poll_s

    def _catch_up(self) -> None:
        # One page per lock hold, so a Sync or Rebuild call never waits behind a long backlog.
        while not self._stop.is_set() and self._may_follow():
            result = self.sync(max_changes=PAGE, count=False)
            if result.applied:
                log.debug("synced", applied=result.applied, watermark=result.watermark)
            if result.applied < PAGE:
                break
        self.index.recent.clear()  # caught up (or stopping): the vectors kept for repeats go

    def _may_follow(self) -> bool:
        """Without an election this replica always follows; with one, only while it holds the lease."""
        return self.election is None or self.election.may_follow()

    def _report(self, problem: str) -> None:
        if problem != self._last_problem:  # once per distinct problem, not every poll
            log.warning("follower_stalled", problem=problem)
            self._last_problem = problem

    def _recovered(self) -> None:
        self._damaged_rounds = 0
        if self._last_problem:
            log.info("follower_resumed")
            self._last_problem = ""
