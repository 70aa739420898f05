"""StoreService.AcquireLease: one holder at a time, renewed by it, taken over once expired, released at once."""

from __future__ import annotations

import threading
import time

import grpc
import pytest

from mnemo.v1 import store_pb2
from tests.conftest import BOTH_BACKENDS

pytestmark = [pytest.mark.service, BOTH_BACKENDS]


def _ask(stub, holder: str, ttl_ms: int = 60_000, name: str = "vector-follower") -> store_pb2.Lease:
    return stub.AcquireLease(store_pb2.AcquireLeaseRequest(name=name, holder=holder, ttl_ms=ttl_ms), timeout=10)


def test_one_holder_at_a_time_renewed_then_released(store_stub):
    first = _ask(store_stub, "a")
    assert first.granted and first.holder == "a" and first.expires_at_epoch > first.acquired_at_epoch
    refused = _ask(store_stub, "b")
    assert (refused.granted, refused.holder, refused.expires_at_epoch) == (False, "a", first.expires_at_epoch)
    renewed = _ask(store_stub, "a", ttl_ms=120_000)
    assert renewed.granted and renewed.acquired_at_epoch == first.acquired_at_epoch
    assert renewed.expires_at_epoch > first.expires_at_epoch
    assert not _ask(store_stub, "b", ttl_ms=0).granted  # only the holder may release
    assert _ask(store_stub, "a", ttl_ms=0).granted
    taken = _ask(store_stub, "b")
    assert taken.granted and taken.holder == "b"
    assert _ask(store_stub, "b", name="other-job").granted  # leases are independent by name


def test_an_expired_lease_is_taken_over(store_stub):
    assert _ask(store_stub, "a", ttl_ms=300).granted
    assert not _ask(store_stub, "b", ttl_ms=300).granted
    deadline = time.monotonic() + 5
    while not (taken := _ask(store_stub, "b", ttl_ms=60_000)).granted:
        assert time.monotonic() < deadline, "the expired lease was never handed over"
        time.sleep(0.05)
    assert taken.holder == "b"
    lost = _ask(store_stub, "a")
    assert not lost.granted and lost.holder == "b"  # the old holder learns it lost the lease


def test_concurrent_candidates_get_exactly_one_grant(store_stub):
    grants: list[str] = []
    start = threading.Barrier(8)

    def candidate(i: int) -> None:
        start.wait()
        if _ask(store_stub, f"replica-{i}").granted:
            grants.append(f"replica-{i}")

    threads = [threading.Thread(target=candidate, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(grants) == 1


@pytest.mark.parametrize(("request_fields", "field"), [
    ({"name": "", "holder": "a", "ttl_ms": 10}, "name"),
    ({"name": "bad name;", "holder": "a", "ttl_ms": 10}, "name"),
    ({"name": "x", "holder": " ", "ttl_ms": 10}, "holder"),
    ({"name": "x", "holder": "h" * 201, "ttl_ms": 10}, "holder"),
    ({"name": "x", "holder": "a", "ttl_ms": -1}, "ttl_ms"),
    ({"name": "x", "holder": "a", "ttl_ms": 3_600_001}, "ttl_ms"),
])
def test_bad_requests_name_the_field(store_stub, request_fields, field):
    with pytest.raises(grpc.RpcError) as caught:
        store_stub.AcquireLease(store_pb2.AcquireLeaseRequest(**request_fields), timeout=10)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert caught.value.details().startswith(f"{field}:")
