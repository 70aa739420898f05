"""store_svc benchmark: ingest rate, full-text search latency, database size per observation.

For stores of 10k and 100k generated observations:
- batch ingest through gRPC (batches of 500) against `mnemo serve store` running as a
  subprocess on loopback TCP, next to the same batches written in-process to another
  file (the baseline: the ratio is the cost of the service layer);
- full-text search p50/p95 through gRPC next to the same queries run in-process on the
  same file (the ratio shows the service's overhead);
- database bytes per observation.

Run: .venv/bin/python -m bench.store [--sizes 10000,100000]
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from bench.harness import REPO, cpu_seconds, load_average, percentile
from mnemo.grpc_client import check_health, open_channel
from mnemo.logs import configure_logging
from mnemo.v1 import common_pb2, store_pb2, store_pb2_grpc
from mnemo.vocab import OBSERVATION_TYPES
from store_svc.core import Store

BATCH = 500
TYPES = OBSERVATION_TYPES[:6]  # the kinds of work; the security types stay rare
CONCEPTS = ("how-it-works", "gotcha", "pattern", "trade-off", "problem-solution", "why-it-exists")
_WORDS = [
    "auth", "token", "session", "cookie", "redirect", "middleware", "login", "logout", "password", "hash", "salt",
    "cache", "redis", "memcached", "query", "index", "sqlite", "postgres", "migration", "schema", "column", "table",
    "trigger", "transaction", "rollback", "commit", "lock", "retry", "timeout", "deadline", "backoff", "queue",
    "worker", "thread", "pool", "async", "await", "future", "promise", "callback", "event", "handler", "router",
    "endpoint", "request", "response", "header", "status", "payload", "json", "parse", "serialize", "encode",
    "decode", "config", "setting", "environment", "variable", "flag", "default", "override", "precedence", "file",
    "path", "directory", "module", "package", "import", "export", "build", "compile", "bundle", "test", "fixture",
    "mock", "assert", "coverage", "benchmark", "latency", "throughput", "memory", "leak", "garbage", "collector",
    "profile", "trace", "span", "metric", "log", "level", "error", "exception", "stack", "frame", "parser",
    "tokenizer", "lexer", "grammar", "syntax", "tree", "node", "visitor", "compiler", "optimizer", "vector",
    "embedding", "model", "search", "rank", "score", "filter", "sort", "page", "cursor", "offset", "limit", "stream",
    "chunk", "buffer", "socket", "connection", "channel", "server", "client", "proxy", "gateway", "service",
    "container", "deploy", "kubernetes", "docker", "image", "registry", "version", "release", "tag", "branch",
    "merge", "rebase", "conflict", "review", "patch", "diff", "commit", "hook", "script", "shell", "command"
]
_FILLER = [
    "the", "a", "was", "because", "when", "then", "so", "that", "it", "we", "this", "with", "for", "and", "of", "to",
    "in", "on", "after", "before"
]


def _vocabulary() -> tuple[list[str], list[float]]:
    """~3,500 words with Zipf-like frequencies: the technical words above mixed into generated ones,
    so a query word matches a realistic share of observations (not nearly all of them)."""
    rng = random.Random(7)
    syllables = ["ka", "lo", "mi", "ret", "san", "dor", "vel", "qua", "ni", "bex", "tor", "fen", "gal", "ux", "pri"]
    generated = {"".join(rng.choice(syllables) for _ in range(rng.randint(2, 4))) for _ in range(4000)}
    words = sorted(generated) + _WORDS
    rng.shuffle(words)
    weights, total = [], 0.0
    for rank in range(1, len(words) + 1):
        total += 1.0 / rank**1.05
        weights.append(total)
    return words, weights


_VOCAB, _CUMULATIVE = _vocabulary()


def _word(rng: random.Random) -> str:
    if rng.random() < 0.05:
        return f"{rng.choice(_WORDS)}_{rng.randint(1, 5000)}"  # identifiers
    return rng.choices(_VOCAB, cum_weights=_CUMULATIVE)[0]


def _sentence(rng: random.Random, n: int) -> str:
    words = [rng.choice(_FILLER) if rng.random() < 0.35 else _word(rng) for _ in range(n)]
    return " ".join(words).capitalize() + "."


def make_observation(rng: random.Random, i: int) -> common_pb2.Observation:
    session = f"bench-session-{i // 50}"
    return common_pb2.Observation(
        memory_session_id=session,
        project=f"project-{i % 7}",
        type=rng.choice(TYPES),
        title=_sentence(rng, rng.randint(5, 10))[:300],
        subtitle=_sentence(rng, 12),
        narrative=" ".join(_sentence(rng, rng.randint(10, 20)) for _ in range(rng.randint(4, 7))),
        facts=[_sentence(rng, 10) for _ in range(3)],
        concepts=rng.sample(CONCEPTS, 2),
        files_read=[f"src/{rng.choice(_WORDS)}/{rng.choice(_WORDS)}.py"],
        files_modified=[f"src/{rng.choice(_WORDS)}/{rng.choice(_WORDS)}_{i % 97}.py"],
        prompt_number=i % 20 + 1,
        discovery_tokens=rng.randint(100, 5000),
        created_at_epoch=1_760_000_000_000 + i * 60_000,
    )


QUERIES = [
    "how did we fix the login redirect loop",
    "why does the cache use redis",
    "sqlite migration rollback transaction",
    "retry timeout backoff for the worker queue",
    "where is the tokenizer parser grammar",
    "memory leak in the garbage collector",
    "docker image registry deploy",
    "auth token cookie session expired",
    "benchmark latency throughput",
    "vector embedding model search rank",
    "merge conflict rebase branch",
    "config environment variable precedence",
]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_server(home: Path) -> tuple[subprocess.Popen, str]:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("MNEMO_")}
    env.update(MNEMO_HOME=str(home), MNEMO_LOG_LEVEL="warning", PYTHONPATH=str(REPO),
               MNEMO_INSECURE_NO_AUTH="true")  # a throwaway store on loopback, measured without auth
    entry = REPO / ".venv/bin/mnemo"
    command = [str(entry)] if entry.exists() else [sys.executable, "-m", "mnemo.cli"]
    proc = subprocess.Popen(
        [*command, "serve", "store", "--listen", f"127.0.0.1:{port}"],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    address = f"127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while not check_health(address, timeout=0.5):
        if proc.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"store did not start: {proc.stderr.read().decode()[-2000:] if proc.stderr else ''}")
        time.sleep(0.05)
    return proc, address


def send_concurrently(stub, batches, streams: int) -> None:
    def worker(part):
        for batch in part:
            stub.AddObservations(batch, timeout=300)

    threads = [threading.Thread(target=worker, args=(batches[i::streams],)) for i in range(streams)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def run_size(n: int, workdir: Path) -> dict[str, float]:
    rng = random.Random(n)
    batches = []
    for start in range(0, n, BATCH):
        batches.append(
            store_pb2.AddObservationsRequest(
                observations=[make_observation(rng, i) for i in range(start, min(n, start + BATCH))]
            )
        )

    home = workdir / f"grpc-{n}"
    home.mkdir()
    proc, address = start_server(home)
    channel = open_channel(address)
    stub = store_pb2_grpc.StoreServiceStub(channel)
    try:
        half = len(batches) // 2
        cpu0, started = cpu_seconds(proc.pid), time.perf_counter()
        for batch in batches[:half]:
            stub.AddObservations(batch, timeout=300)
        first = sum(len(b.observations) for b in batches[:half])
        grpc_rate = first / (time.perf_counter() - started)
        started = time.perf_counter()
        send_concurrently(stub, batches[half:], 2)
        concurrent_rate = (n - first) / (time.perf_counter() - started)
        server_cpu_us = (cpu_seconds(proc.pid) - cpu0) / n * 1e6

        baseline = Store(workdir / f"inproc-{n}.db")
        started = time.perf_counter()
        for batch in batches:
            baseline.add_observations(batch)
        inproc_rate = n / (time.perf_counter() - started)
        baseline.close()

        local = Store(home / "mnemo.db")  # same file the server writes
        grpc_ms, local_ms = [], []
        for _ in range(5):
            for query in QUERIES:
                request = store_pb2.StoreSearchRequest(query=query, page=common_pb2.Page(limit=20))
                t0 = time.perf_counter()
                remote = stub.Search(request, timeout=30)
                grpc_ms.append((time.perf_counter() - t0) * 1000)
                t0 = time.perf_counter()
                mine = local.search(request)
                local_ms.append((time.perf_counter() - t0) * 1000)
                assert remote.total == mine.total and remote.total > 0, query
        stats = stub.Stats(store_pb2.StatsRequest(), timeout=30)
        local.close()
    finally:
        channel.close()
        proc.terminate()
        proc.wait(timeout=30)
    return {
        "n": n,
        "grpc_rate": grpc_rate,
        "inproc_rate": inproc_rate,
        "concurrent_rate": concurrent_rate,
        "server_cpu_us": server_cpu_us,
        "grpc_p50": statistics.median(grpc_ms),
        "grpc_p95": percentile(grpc_ms, 0.95),
        "local_p50": statistics.median(local_ms),
        "local_p95": percentile(local_ms, 0.95),
        "bytes_per_obs": stats.db_bytes / n,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000")
    args = parser.parse_args()
    configure_logging("warning")
    workdir = Path(tempfile.mkdtemp(prefix="mnemo-bench-"))
    try:
        results = [run_size(int(s), workdir) for s in args.sizes.split(",")]
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print(f"load average at the end: {load_average()} on {os.cpu_count()} CPUs (wall-clock rates scale with it)")
    print(
        f"{'observations':>12} | {'gRPC obs/s':>10} | {'2 streams':>9} | {'in-proc':>7} | {'ratio':>5} | "
        f"{'srv CPU us/obs':>14} | {'search gRPC p50/p95 ms':>22} | {'in-proc p50/p95 ms':>18} | "
        f"{'p50 ratio':>9} | {'bytes/obs':>9}"
    )
    print("-" * 145)
    for r in results:
        print(
            f"{r['n']:>12,} | {r['grpc_rate']:>10,.0f} | {r['concurrent_rate']:>9,.0f} | {r['inproc_rate']:>7,.0f} | "
            f"{r['grpc_rate'] / r['inproc_rate']:>5.2f} | {r['server_cpu_us']:>14.0f} | "
            f"{r['grpc_p50']:>10.2f} / {r['grpc_p95']:<9.2f} | {r['local_p50']:>8.2f} / {r['local_p95']:<7.2f} | "
            f"{r['grpc_p50'] / r['local_p50']:>9.2f} | {r['bytes_per_obs']:>9,.0f}"
        )
    print("gRPC obs/s: first half of the batches, one at a time; 2 streams: second half, two senders;")
    print("in-proc: the same batches through Store.add_observations in this process (baseline);")
    print("srv CPU us/obs: server process CPU per observation (1e6 / it = ingest ceiling of one core).")
    print("target: ingest through gRPC >= 5,000 observations/s")


if __name__ == "__main__":
    main()
