"""Follower election: of the vector_svc replicas sharing one Chroma server, one follows the feed.

Every replica serves queries; only the holder of the store's lease `vector-follower` reads
the change feed and embeds, so each record is embedded once, not once per replica. A thread
of its own renews the lease every third of its TTL, whatever the follower is doing (a long
page of embeddings must not let the lease lapse); a standby asks at every poll. A replica
that is killed stops renewing, the lease expires, and the next standby that asks takes it
over and resumes from the watermark kept in the shared collection. A holder that cannot
renew in time (the store unreachable, a long pause) stops following before its lease can
have run out, so two replicas never follow at once while the clocks agree; should a paused
holder still finish a page late, applying a page is idempotent (upserts by stable ids), so
the index stays right.
"""

from __future__ import annotations

import os
import secrets
import socket
import threading
import time
from typing import TYPE_CHECKING

from mnemo.errors import MnemoError
from mnemo.logs import get_logger
from mnemo.v1 import store_pb2

if TYPE_CHECKING:  # the store client is handed in: this module itself imports no gRPC
    from mnemo.grpc_client import ServiceClient
    from mnemo.v1.store_pb2_grpc import StoreServiceStub

log = get_logger(__name__)

LEASE_NAME = "vector-follower"
# A holder stops following this share of the TTL before its lease would run out by its own
# clock: it covers the time the renewal call took and small clock drift against the store.
SAFETY_FRACTION = 0.2


def holder_id() -> str:
    """Unique for this process's lifetime: a restarted replica is a new holder."""
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"


class Election:
    """Keeps (or seeks) the lease in the background; `may_follow` says whether to follow now."""

    def __init__(self, store: ServiceClient[StoreServiceStub], ttl_ms: int, poll_s: float,
                 holder: str | None = None):
        self.store = store
        self.ttl_s = ttl_ms / 1000.0
        self.poll_s = min(poll_s, self.ttl_s / 4)  # a standby asks often enough to take over within the TTL
        self.holder = holder or holder_id()
        self.leader = False
        self._valid_until = 0.0  # monotonic time before which this replica surely holds the lease
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def may_follow(self) -> bool:
        return self.leader and time.monotonic() < self._valid_until

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="vector-election", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop renewing and hand the lease on at once, so a standby need not wait for it to expire."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
        if self.leader:
            self.leader = False
            try:
                self.store.stub.AcquireLease(
                    store_pb2.AcquireLeaseRequest(name=LEASE_NAME, holder=self.holder, ttl_ms=0), timeout=2.0)
            except MnemoError as err:  # it expires by itself within its TTL
                log.warning("follower_lease_release_failed", problem=f"{err.code}: {err.message}")

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.tick()
            except Exception:  # never let the thread die: the next tick may succeed
                log.exception("follower_election_crashed_tick")
            self._stop.wait(self.ttl_s / 3 if self.leader else self.poll_s)

    def tick(self) -> None:
        """Renew the lease (the leader) or ask for it (a standby), once."""
        asked = time.monotonic()
        try:
            lease = self.store.stub.AcquireLease(
                store_pb2.AcquireLeaseRequest(name=LEASE_NAME, holder=self.holder, ttl_ms=int(self.ttl_s * 1000)))
        except MnemoError as err:
            # The store is unreachable: follow on only while the lease surely lasts.
            if self.leader and time.monotonic() >= self._valid_until:
                self._lose(f"could not renew: {err.code}: {err.message}")
            return
        if lease.granted:
            if not self.leader:
                log.info("follower_lease_taken", holder=self.holder, ttl_ms=int(self.ttl_s * 1000))
            self.leader = True
            self._valid_until = asked + self.ttl_s * (1 - SAFETY_FRACTION)
        elif self.leader:
            self._lose(f"held by {lease.holder}")

    def _lose(self, why: str) -> None:
        self.leader = False
        self._valid_until = 0.0
        log.warning("follower_lease_lost", holder=self.holder, reason=why)
