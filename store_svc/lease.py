"""Named leases: one holder at a time, so replicas can elect one of them for a job.

vector_svc replicas sharing a Chroma server use the lease `vector-follower`, so the change
feed is embedded once: the holder renews it well within its TTL; when the holder dies, the
lease expires and the next replica that asks takes it over.

Each call is one write transaction (the store's writer lock on SQLite, the advisory lock on
PostgreSQL), so two replicas asking at the same moment cannot both be granted. Time is the
store's clock: every replica compares against the same clock, not its own. The table is
migration 6; the SQL here is standard (`?` parameters, no dialect functions), so both backends
run it as it is.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from mnemo.errors import InvalidArgument
from mnemo.timefmt import now_ms
from mnemo.v1 import store_pb2

if TYPE_CHECKING:  # the store is handed in
    from store_svc.core import Store

MAX_TTL_MS = 3_600_000
MAX_HOLDER_CHARS = 200
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")


def check(request: store_pb2.AcquireLeaseRequest) -> None:
    if not _NAME.match(request.name):
        raise InvalidArgument("name", "must be 1-100 letters, digits, '.', '_' or '-', starting with a letter or digit")
    if not request.holder.strip():
        raise InvalidArgument("holder", "is required")
    if len(request.holder) > MAX_HOLDER_CHARS:
        raise InvalidArgument("holder", f"must be at most {MAX_HOLDER_CHARS} characters")
    if not 0 <= request.ttl_ms <= MAX_TTL_MS:
        raise InvalidArgument("ttl_ms", f"must be 0 (release) to {MAX_TTL_MS}")


def acquire(store: Store, request: store_pb2.AcquireLeaseRequest) -> store_pb2.Lease:
    """Grant, renew or release the lease (see AcquireLease in store.proto)."""
    check(request)
    name, holder, ttl = request.name, request.holder, request.ttl_ms
    with store.writing() as conn:
        now = now_ms()
        row = conn.execute("SELECT holder, expires_at_epoch, acquired_at_epoch FROM leases WHERE name = ?",
                           (name,)).fetchone()
        if row is None:
            if ttl == 0:  # releasing a lease nobody holds: nothing to do
                return store_pb2.Lease(name=name, granted=True)
            conn.execute("INSERT INTO leases(name, holder, expires_at_epoch, acquired_at_epoch, renewed_at_epoch) "
                         "VALUES (?, ?, ?, ?, ?)", (name, holder, now + ttl, now, now))
            return store_pb2.Lease(name=name, granted=True, holder=holder, expires_at_epoch=now + ttl,
                                   acquired_at_epoch=now)
        current, expires, acquired = row["holder"], row["expires_at_epoch"], row["acquired_at_epoch"]
        mine = current == holder and expires > now
        if ttl == 0:
            if current == holder:  # a graceful stop hands the lease on at once instead of after its TTL
                conn.execute("UPDATE leases SET expires_at_epoch = ?, renewed_at_epoch = ? WHERE name = ?",
                             (min(expires, now), now, name))
                return store_pb2.Lease(name=name, granted=True)
            return _refused(name, current, expires, acquired, now)
        if not mine and expires > now:
            return _refused(name, current, expires, acquired, now)
        taken = acquired if mine else now
        conn.execute("UPDATE leases SET holder = ?, expires_at_epoch = ?, acquired_at_epoch = ?, renewed_at_epoch = ? "
                     "WHERE name = ?", (holder, now + ttl, taken, now, name))
        return store_pb2.Lease(name=name, granted=True, holder=holder, expires_at_epoch=now + ttl,
                               acquired_at_epoch=taken)


def _refused(name: str, holder: str, expires: int, acquired: int, now: int) -> store_pb2.Lease:
    if expires <= now:  # expired: nobody holds it, whatever the row still says
        return store_pb2.Lease(name=name, granted=False)
    return store_pb2.Lease(name=name, granted=False, holder=holder, expires_at_epoch=expires,
                           acquired_at_epoch=acquired)
