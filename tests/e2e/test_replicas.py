"""Replicas: clients balance over a list of addresses and survive a replica killed mid-load;
vector_svc replicas on one Chroma server elect one follower, which a standby replaces.

Everything is real: `mnemo serve` processes over one database, kill -9, a `chroma run` server.
"""

from __future__ import annotations

import math
import re
import threading
import time
from dataclasses import dataclass, field

import grpc
import pytest

from mnemo.grpc_client import open_channel
from mnemo.v1 import common_pb2, search_pb2, search_pb2_grpc, store_pb2, store_pb2_grpc, vector_pb2, vector_pb2_grpc
from tests.conftest import BOTH_BACKENDS, wait_for
from tests.server_support import Deployment, start_chroma, stop_process
from vector_svc.election import LEASE_NAME

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

OBS = common_pb2.DOC_KIND_OBSERVATION
SERVICE_TOKEN = "replicas-service-token"  # every TCP listener needs one, loopback included


@pytest.fixture
def deployment(settings, store_env):
    deployed = Deployment(settings, env={**store_env, "MNEMO_AUTH_TOKEN": SERVICE_TOKEN})
    yield deployed
    deployed.close()


@pytest.fixture
def store_env(settings) -> dict[str, str]:
    """The store backend every store_svc replica of a test shares (one database)."""
    if settings.store_backend == "postgres":
        return {"MNEMO_STORE_BACKEND": "postgres", "MNEMO_STORE_DSN": settings.store_dsn}
    return {"MNEMO_DB_PATH": str(settings.home / "shared.db")}


@dataclass
class Load:
    """Calls made by worker threads: (started, ended, ok) each, and the acknowledged writes."""

    calls: dict[str, list[tuple[float, float, bool]]] = field(default_factory=lambda: {"write": [], "search": []})
    acked: dict[int, str] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, kind: str, started: float, ok: bool, error: str = "") -> None:
        with self.lock:
            self.calls[kind].append((started, time.monotonic(), ok))
            if error:
                self.errors.append(f"{kind}: {error}")

    def served_since(self, moment: float) -> dict[str, int]:
        """Successful calls of each kind that started at or after `moment`."""
        with self.lock:
            return {kind: sum(ok and started >= moment for started, _, ok in calls)
                    for kind, calls in self.calls.items()}

    def failover_s(self, kind: str, moment: float) -> float:
        """From the kill to the end of the first successful call that started after it."""
        after = [end for started, end, ok in self.calls[kind] if ok and started >= moment]
        return min(after) - moment if after else float("inf")

    def longest_in_flight_s(self, kind: str, moment: float) -> float:
        """The longest call that was running when the replica died (retried on the other one)."""
        spans = [end - started for started, end, ok in self.calls[kind] if started <= moment <= end]
        return max(spans, default=0.0)


def _writer(load: Load, stub, worker: int) -> None:
    n = 0
    while not load.stop.is_set():
        n += 1
        title = f"failover w{worker} n{n} zq{worker}x{n}"
        request = store_pb2.AddObservationsRequest(observations=[common_pb2.Observation(
            memory_session_id=f"writer-{worker}", project="failover", type="change", title=title,
            narrative=f"writer {worker} wrote record {n} during the failover drill")])
        started = time.monotonic()
        try:
            ids = stub.AddObservations(request, timeout=15).ids
        except grpc.RpcError as err:
            load.record("write", started, False, f"{err.code().name} {err.details()}")
            continue
        with load.lock:
            load.acked[ids[0]] = title
        load.record("write", started, True)


def _searcher(load: Load, stub, worker: int) -> None:
    while not load.stop.is_set():
        started = time.monotonic()
        try:
            reply = stub.Search(search_pb2.SearchRequest(query=f"failover drill writer {worker % 4}",
                                                         project="failover", limit=5), timeout=15)
            load.record("search", started, bool(reply.text))
        except grpc.RpcError as err:
            load.record("search", started, False, f"{err.code().name} {err.details()}")


def run_load(store_list: str, search_list: str, *, writers: int, searchers: int, before_s: float, served_after: int,
             kill) -> tuple[Load, float]:
    """Writers and searchers through the address lists; `kill()` after `before_s`, then on until
    `served_after` calls of each kind that started after the kill succeeded; returns (load, kill time)."""
    load = Load()
    store_channel = open_channel(store_list, auth_token=SERVICE_TOKEN)
    search_channel = open_channel(search_list, auth_token=SERVICE_TOKEN)
    store, search = store_pb2_grpc.StoreServiceStub(store_channel), search_pb2_grpc.SearchServiceStub(search_channel)
    threads = [threading.Thread(target=_writer, args=(load, store, i)) for i in range(writers)]
    threads += [threading.Thread(target=_searcher, args=(load, search, i)) for i in range(searchers)]
    for thread in threads:
        thread.start()
    try:
        time.sleep(before_s)  # the load itself is what runs meanwhile; nothing here waits for readiness
        moment = time.monotonic()
        kill()
        # Counted, not timed: a loaded machine serves the same calls, only later (the bound is for a hang).
        wait_for(lambda: min(load.served_since(moment).values()) >= served_after, 120,
                 f"{served_after} calls of each kind served after the kill")
    finally:
        load.stop.set()
        for thread in threads:
            thread.join(30)
        store_channel.close()
        search_channel.close()
    return load, moment


@BOTH_BACKENDS
def test_killing_one_store_and_one_search_replica_loses_no_acknowledged_write(deployment, settings, capsys):
    stores = [deployment.serve("store", label=f"store-{i}") for i in range(2)]
    store_list = ",".join(s.address for s in stores)
    vector = deployment.serve("vector", label="vector", store_addr=store_list, vector_poll_ms=100)
    searches = [deployment.serve("search", label=f"search-{i}", store_addr=store_list, vector_addr=vector.address)
                for i in range(2)]
    search_list = ",".join(s.address for s in searches)

    def kill() -> None:
        stores[0].kill()
        searches[0].kill()

    load, moment = run_load(store_list, search_list, writers=4, searchers=4, before_s=3.0, served_after=11, kill=kill)

    writes, found = load.calls["write"], load.calls["search"]
    assert sum(ok for s, _, ok in writes if s < moment) > 10 and sum(ok for s, _, ok in writes if s > moment) > 10
    # A killed replica costs at most the calls in flight on it; the retry policy usually saves even those.
    failed_writes = [c for c in writes if not c[2]]
    failed_searches = [c for c in found if not c[2]]
    assert len(failed_writes) <= 4 and len(failed_searches) <= 4, load.errors[:8]
    # Then the survivors serve: the last calls of each kind (by start) all succeeded.
    for calls in (writes, found):
        assert all(ok for _, _, ok in sorted(calls)[-10:]), load.errors[:8]

    # No acknowledged write is lost: every acked id is there, with the text it was acked for.
    survivor = store_pb2_grpc.StoreServiceStub(open_channel(stores[1].address, auth_token=SERVICE_TOKEN))
    acked = sorted(load.acked)
    for chunk in range(0, len(acked), 200):
        ids = acked[chunk:chunk + 200]
        refs = [common_pb2.Ref(kind=OBS, id=i) for i in ids]
        records = survivor.GetRecords(store_pb2.GetRecordsRequest(refs=refs), timeout=30).records
        assert {r.observation.id: r.observation.title for r in records} == {i: load.acked[i] for i in ids}

    report = {kind: (load.failover_s(kind, moment), load.longest_in_flight_s(kind, moment))
              for kind in ("write", "search")}
    with capsys.disabled():
        print(f"\nfailover ({settings.store_backend}): {len(acked)} acked writes, {len(found)} searches; "
              f"failed writes {len(failed_writes)}, failed searches {len(failed_searches)}; first success after "
              f"the kill: write {report['write'][0] * 1000:.0f} ms, search {report['search'][0] * 1000:.0f} ms; "
              f"longest call in flight at the kill: write {report['write'][1] * 1000:.0f} ms, "
              f"search {report['search'][1] * 1000:.0f} ms")
    # Each kind of call succeeded again after the kill (how soon is printed above, not asserted).
    assert math.isfinite(report["write"][0]) and math.isfinite(report["search"][0])


def _took_lease(service) -> bool:
    return re.search(r'"event": ?"follower_lease_taken"', service.log.read_text(errors="replace")) is not None


def _lease(store_stub) -> store_pb2.Lease:
    """The follower lease as the store holds it, read by a candidate that is refused (it never holds it)."""
    probe = store_stub.AcquireLease(store_pb2.AcquireLeaseRequest(name=LEASE_NAME, holder="test-probe",
                                                                  ttl_ms=60_000), timeout=10)
    assert not probe.granted, "the probe took a lease no replica held"
    return probe


def _applied_pages(log_text: str) -> int:
    return len(re.findall(r'"event": ?"synced"', log_text))


def _wait_caught_up(stub, documents: int, timeout: float = 60.0) -> vector_pb2.VectorStatusResponse:
    deadline = time.monotonic() + timeout
    while True:
        status = stub.Status(vector_pb2.VectorStatusRequest(), timeout=10)
        if status.lag == 0 and status.documents >= documents:
            return status
        assert time.monotonic() < deadline, f"vector index did not catch up: {status}"
        time.sleep(0.05)


def _add(store_stub, first: int, count: int) -> list[int]:
    observations = [common_pb2.Observation(memory_session_id="elect", project="elect", type="change",
                                           title=f"election record {n}", narrative=f"drill record zq{n}x")
                    for n in range(first, first + count)]
    return list(store_stub.AddObservations(store_pb2.AddObservationsRequest(observations=observations), timeout=30).ids)


def test_one_vector_replica_follows_and_a_standby_takes_over_within_the_ttl(settings, deployment):
    chroma, chroma_url = start_chroma(settings.home)
    try:
        store = deployment.serve("store", label="store")
        store_stub = store_pb2_grpc.StoreServiceStub(open_channel(store.address, auth_token=SERVICE_TOKEN))
        ttl_ms = 2000
        vectors = [deployment.serve("vector", label=f"vector-{i}", store_addr=store.address, chroma_url=chroma_url,
                                    vector_lease_ttl_ms=ttl_ms, vector_poll_ms=50, log_level="debug")
                   for i in range(2)]
        ids = _add(store_stub, 0, 300)
        stubs = [vector_pb2_grpc.VectorServiceStub(open_channel(v.address, auth_token=SERVICE_TOKEN)) for v in vectors]
        first = _wait_caught_up(stubs[0], len(ids))
        per_record, rest = divmod(first.documents, len(ids))  # a title and a narrative: the same count each
        assert rest == 0 and per_record >= 1
        leaders = [v for v in vectors if _took_lease(v)]
        assert len(leaders) == 1, "exactly one replica must hold the follower lease"
        leader, standby = leaders[0], next(v for v in vectors if v is not leaders[0])
        assert _applied_pages(leader.log.read_text()) >= 1
        assert _applied_pages(standby.log.read_text()) == 0  # the feed was embedded once, by the leader

        held = _lease(store_stub)  # the leader's, as the store saw it just before the kill
        leader.kill()
        killed_at = time.monotonic()
        ids += _add(store_stub, 300, 100)
        while not _took_lease(standby):
            assert time.monotonic() - killed_at < 120, "the standby never took the lease"  # a hang bound
            time.sleep(0.02)
        takeover_s = time.monotonic() - killed_at
        # Taken over by the store's rules: another holder, and not before the dead leader's lease expired.
        taken = _lease(store_stub)
        assert taken.holder != held.holder and taken.acquired_at_epoch >= held.expires_at_epoch
        survivor = stubs[vectors.index(standby)]
        status = _wait_caught_up(survivor, len(ids) * per_record)
        # Every record's documents are in the index exactly once (stable ids: nothing doubled, none missing).
        assert status.documents == len(ids) * per_record and status.lag == 0
        hits = survivor.Query(vector_pb2.VectorQueryRequest(text="drill record zq350x", limit=3)).hits
        assert ids[350] in [h.ref.id for h in hits]
        assert _applied_pages(standby.log.read_text()) >= 1
        print(f"\nelection: takeover {takeover_s * 1000:.0f} ms after the kill (lease TTL {ttl_ms} ms)")
    finally:
        stop_process(chroma)
