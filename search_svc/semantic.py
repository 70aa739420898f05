"""The vector leg of a hybrid search (search_svc.retrieval): the query's neighbours, hydrated with
every filter, and what the index had not embedded when it was queried.

One search makes these calls, on a worker thread while the lexical query runs on the caller's:
VectorService.Query (once per alternative of `a OR b`), StoreService.Hydrate, and
StoreService.ReadChanges after the index's watermark. Query hands the watermark it read before
searching, and the index's model, back in its trailing metadata (mnemo.rpc_context), so no
Status call precedes it. A vector_svc that sends neither (an older one) is asked for Status
first, as before, from then on.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any

from mnemo.errors import MnemoError
from mnemo.logs import get_logger
from mnemo.rpc_context import INDEX_MODEL_KEY, INDEX_WATERMARK_KEY
from mnemo.timefmt import now_ms
from mnemo.v1 import common_pb2, store_pb2, vector_pb2
from search_svc.backend import Backend

log = get_logger(__name__)

Key = tuple[int, int]

PROBE_TTL_S = 5.0
# How long a new record may wait for its embedding before the relevance floor judges it
# without one: well above the catch-up lag of normal use (seconds), below a stalled index.
UNEMBEDDED_GRACE_MS = 5 * 60 * 1000
UNEMBEDDED_READ = 500
"""Changes past the vector index's watermark read to tell which records it has not embedded."""


def ref_key(ref: common_pb2.Ref) -> Key:
    return (ref.kind, ref.id)


@dataclass(frozen=True)
class _Pending:
    """The records changed after the vector index's watermark: those read from the change feed,
    and when the feed held more than was read, every record of a kind newer than the newest read
    (ids grow with time, so later changes are mostly later records)."""

    refs: frozenset[Key]
    newer_than: Mapping[int, int]

    def holds(self, key: Key) -> bool:
        return key in self.refs or key[1] > self.newer_than.get(key[0], 1 << 62)


@dataclass
class Semantic:
    """Hydrated vector neighbours (every filter applied), closest first."""

    rows: list[common_pb2.IndexRow] = field(default_factory=list)
    distances: list[float] = field(default_factory=list)
    pending: _Pending | None = None
    """What the index had not embedded when queried; None when unknown."""


@dataclass(frozen=True)
class _Since:
    """The index's state when it was queried: its watermark, and whether it had caught up with the
    change feed then (known only from a Status reply; a query's trailer tells the watermark alone)."""

    watermark: int
    caught_up: bool = False


def not_yet_embedded(lexical: store_pb2.StoreSearchResponse, semantic: Semantic) -> set[Hashable]:
    """Lexical matches the vector index had not embedded when it was queried: changed in the store
    after its watermark (semantic.pending). A record is findable lexically at once; the floor
    judges it once it is embedded. Without a known watermark (the feed could not be read), the
    guess of old: absent from the neighbours and written within UNEMBEDDED_GRACE_MS."""
    if semantic.pending is not None:
        return {ref_key(row.ref) for row in lexical.hits if semantic.pending.holds(ref_key(row.ref))}
    embedded = {ref_key(row.ref) for row in semantic.rows}
    since = now_ms() - UNEMBEDDED_GRACE_MS
    return {ref_key(row.ref) for row in lexical.hits
            if ref_key(row.ref) not in embedded and row.created_at_epoch >= since}


class VectorProbe:
    """Whether vector_svc answers, asked at most every PROBE_TTL_S seconds; and its index's model,
    which every query's reply also tells (note_model)."""

    def __init__(self, backend: Backend, clock: Callable[[], float] = time.monotonic):
        self._backend, self._clock = backend, clock
        self._lock = threading.Lock()
        self._checked_at, self._up = float("-inf"), False
        self._model = ""  # the embedding model vector_svc reported last, and when
        self._model_at = float("-inf")

    def up(self) -> bool:
        with self._lock:
            if self._clock() - self._checked_at < PROBE_TTL_S:
                return self._up
        return self._refresh()

    def _refresh(self) -> bool:
        try:
            status = self._backend.vector.stub.Status(vector_pb2.VectorStatusRequest(), timeout=1.0)
            up = True
            self.note_model(status.model)
        except MnemoError:
            up = False
        self.record(up)
        return up

    def model(self) -> str:
        """The embedding model of vector_svc's index ("" while unknown), checked like up()."""
        with self._lock:
            # Its own age: record() keeps the up/down answer fresh without asking for the model.
            if self._model and self._clock() - self._model_at < PROBE_TTL_S:
                return self._model
        self._refresh()
        return self._model

    def note_model(self, model: str) -> None:
        with self._lock:
            self._model, self._model_at = model, self._clock()

    def record(self, up: bool) -> None:
        with self._lock:
            self._checked_at, self._up = self._clock(), up


class VectorLeg:
    """The neighbours of a query's texts, hydrated, with the index's pending records."""

    def __init__(self, backend: Backend, probe: VectorProbe):
        self.backend, self.probe = backend, probe
        # Cleared when a reply carries no watermark: that vector_svc is asked for Status first.
        self._watermark_in_reply = True

    def neighbours(self, requests: list[vector_pb2.VectorQueryRequest],
                   timeout: float) -> tuple[vector_pb2.VectorQueryResponse, _Since]:
        """The texts' neighbours as one list, and the index's state read before the first query
        (from the replies' trailers, or a Status call). Vector calls only: their failures make the
        answer lexical."""
        since = None
        if not self._watermark_in_reply:
            # The watermark before the query: whatever it covers was in the index the query searched.
            since = self._status(timeout)
        replies, watermarks = [], []
        for request in requests:
            reply, call = self.backend.vector.stub.Query.with_call(request, timeout=timeout)
            replies.append(reply)
            watermarks.append(self._from_trailer(call))
        if since is None and None in watermarks:  # a vector_svc that does not send it (an older one)
            self._watermark_in_reply = False
            since = self._status(timeout)
        return _nearest(replies), since or _Since(min(w for w in watermarks if w is not None))

    def _status(self, timeout: float) -> _Since:
        status = self.backend.vector.stub.Status(vector_pb2.VectorStatusRequest(), timeout=timeout)
        return _Since(status.watermark, caught_up=status.lag <= 0 and status.head_seq > 0)

    def complete(self, reply: vector_pb2.VectorQueryResponse, since: _Since,
                 filters: common_pb2.Filters) -> Semantic:
        """The neighbours hydrated (the store applies every filter) and the records pending then."""
        semantic = self._hydrate(reply, filters)
        semantic.pending = _Pending(frozenset(), {}) if since.caught_up else self._pending(since.watermark)
        return semantic

    def _from_trailer(self, call: Any) -> int | None:
        """The watermark Query read before searching (and the model, noted): None when not sent."""
        trailer = dict(call.trailing_metadata() or ())
        if INDEX_MODEL_KEY in trailer:
            self.probe.note_model(str(trailer[INDEX_MODEL_KEY]))
        value = trailer.get(INDEX_WATERMARK_KEY)
        return int(value) if value is not None else None

    def _hydrate(self, reply: vector_pb2.VectorQueryResponse, filters: common_pb2.Filters) -> Semantic:
        """The neighbours' rows, with every filter applied by the store, closest first."""
        hits = list(reply.hits)
        if not hits:
            return Semantic()
        distance = {ref_key(hit.ref): hit.distance for hit in hits}
        rows = self.backend.store.stub.Hydrate(store_pb2.HydrateRequest(
            refs=[hit.ref for hit in hits], filters=filters)).rows
        return Semantic(rows=list(rows), distances=[distance[ref_key(row.ref)] for row in rows])

    def _pending(self, watermark: int) -> _Pending | None:
        """The records changed after the index's watermark (None when the feed cannot be read here)."""
        try:
            feed = self.backend.store.stub.ReadChanges(
                store_pb2.ReadChangesRequest(after_seq=watermark, limit=UNEMBEDDED_READ))
        except MnemoError as err:  # a user's token may not read the feed (server runtime)
            # What vector_svc's Status says instead (its own token reads the feed's head): when the
            # index has caught up, nothing is pending; otherwise new records are judged by age.
            return self._caught_up_or_unknown(err)
        refs = frozenset(ref_key(change.ref) for change in feed.changes)
        newer_than: dict[int, int] = {}
        if feed.changes and feed.changes[-1].seq < feed.head_seq:  # more than was read
            for kind, rid in refs:
                newer_than[kind] = max(newer_than.get(kind, 0), rid)
        return _Pending(refs, newer_than)

    def _caught_up_or_unknown(self, err: MnemoError) -> _Pending | None:
        try:
            caught_up = self._status(timeout=1.0).caught_up
        except MnemoError:
            caught_up = False
        if caught_up:
            return _Pending(frozenset(), {})
        log.info("change feed unreadable; judging new records by age", code=err.code)
        return None


def _nearest(replies: list[vector_pb2.VectorQueryResponse]) -> vector_pb2.VectorQueryResponse:
    """The neighbours of several queries as one list: each record at its smallest distance, closest first."""
    if len(replies) == 1:
        return replies[0]
    best: dict[Key, vector_pb2.VectorHit] = {}
    for hit in (hit for reply in replies for hit in reply.hits):
        key = ref_key(hit.ref)
        if key not in best or hit.distance < best[key].distance:
            best[key] = hit
    closest = sorted(best.items(), key=lambda item: (item[1].distance, item[0]))
    return vector_pb2.VectorQueryResponse(hits=[hit for _, hit in closest])
