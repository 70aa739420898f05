"""Search latency and vector catch-up, through gRPC, with baselines measured in the same run.

Two phases, each on a fresh in-process stack (store_svc, vector_svc, search_svc):

1. Catch-up: N observations (default 5,000) written through StoreService.AddObservations,
   then VectorService.Sync until Status.lag == 0 with the given embedder (default the
   settings default, minilm-int8). Reports observations/s and documents/s embedded and
   indexed. Target: >= 300 observations/s on 2 cores.
2. Latency: a store of M observations (default 100,000) indexed with the "hash" embedder
   (the embedder changes vector quality, not the Chroma/SQLite work per query, and indexing
   100k with the real model would take most of the run; use --latency-embedder to change
   it), then the same queries as
   - lexical only: StoreService.Search (the baseline),
   - vector only:  VectorService.Query,
   - hybrid:       SearchService.Search (validation, both paths, Hydrate, fusion, rendering).
   Reports p50/p95 in ms and the hybrid/lexical ratio.

    .venv/bin/python -m bench.search                       # defaults above (~10 minutes on 2 cores)
    .venv/bin/python -m bench.search --observations 20000 --catchup 2000
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import sys
import time

from bench.harness import Stack, percentile, private_settings
from mnemo.config import Settings
from mnemo.v1 import common_pb2, search_pb2, store_pb2, vector_pb2

COMPONENTS = ["auth middleware", "login form", "session cache", "postgres pool", "schema migration", "json parser",
              "websocket client", "rate limiter", "job queue", "search index", "payment webhook", "image resizer",
              "config loader", "feature flags", "email sender", "csv importer", "grpc gateway", "token refresh",
              "file watcher", "retry policy", "metrics exporter", "dark mode toggle", "upload widget", "cron scheduler"]
PROBLEMS = ["race condition", "memory leak", "timeout", "off-by-one error", "deadlock", "stale cache entry",
            "unicode decoding bug", "null pointer crash", "slow query", "missing index", "double submit",
            "retry storm", "clock skew", "permission error", "broken redirect", "encoding mismatch"]
ACTIONS = ["fixed", "refactored", "documented", "investigated", "benchmarked", "rewrote", "tested", "simplified"]
DETAILS = ["by adding a lock around the shared map", "after profiling the hot path", "using exponential backoff",
           "with a composite index on (project, created_at)", "by moving the call off the event loop",
           "so that retries are idempotent", "after reading the upstream changelog", "by pinning the dependency",
           "with a regression test that reproduces it", "by batching writes into one transaction"]
TYPES = ["bugfix", "feature", "refactor", "discovery", "decision", "change"]
PROJECTS = [f"project-{i}" for i in range(8)]


def observation(rng: random.Random, i: int, epoch0: int) -> common_pb2.Observation:
    comp, prob, act = rng.choice(COMPONENTS), rng.choice(PROBLEMS), rng.choice(ACTIONS)
    detail, other = rng.choice(DETAILS), rng.choice(COMPONENTS)
    return common_pb2.Observation(
        memory_session_id=f"bench-{i // 50}", project=PROJECTS[i % len(PROJECTS)], type=rng.choice(TYPES),
        title=f"{act.capitalize()} {prob} in {comp}",
        narrative=f"We {act} the {prob} in the {comp} {detail}. It showed up when the {other} was under load, "
                  f"and the fix keeps the {comp} predictable. Ticket {i}.",
        facts=[f"The {comp} {prob} happens under load.", f"{detail.capitalize()}."],
        concepts=[rng.choice(["gotcha", "how-it-works", "pattern", "trade-off"])],
        files_modified=[f"src/{comp.replace(' ', '_')}/{rng.randrange(40)}.py"],
        created_at_epoch=epoch0 + i * 1000)


def fill(stack: Stack, count: int, seed: int = 7) -> float:
    """Write `count` observations in batches of 1,000; returns seconds spent."""
    rng = random.Random(seed)
    started = time.monotonic()
    epoch0 = 1_700_000_000_000
    for start in range(0, count, 1000):
        batch = [observation(rng, i, epoch0) for i in range(start, min(count, start + 1000))]
        stack.store.stub.AddObservations(store_pb2.AddObservationsRequest(observations=batch), timeout=300)
    return time.monotonic() - started


def catch_up(stack: Stack) -> tuple[float, int]:
    """Sync until the index has applied the whole feed; (seconds, documents in the index)."""
    started = time.monotonic()
    while True:
        stack.vector.stub.Sync(vector_pb2.VectorSyncRequest(max_changes=0), timeout=3600)
        status = stack.vector.stub.Status(vector_pb2.VectorStatusRequest())
        if status.lag <= 0:
            return time.monotonic() - started, status.documents


def queries(rng: random.Random, n: int) -> list[tuple[str, str]]:
    out = []
    for _ in range(n):
        comp, prob = rng.choice(COMPONENTS), rng.choice(PROBLEMS)
        text = rng.choice([f"how did we fix the {prob} in the {comp}?", f"{comp} {prob}",
                           f"why is the {comp} slow under load", f"{prob} regression test"])
        out.append((text, rng.choice(PROJECTS + [""])))
    return out


def timed(fn, items, repeat: int) -> list[float]:
    samples = []
    for _ in range(repeat):
        for item in items:
            started = time.perf_counter()
            fn(item)
            samples.append((time.perf_counter() - started) * 1000)
    return samples


def make_settings(embedder: str) -> Settings:
    # A long poll interval: the benchmark drives Sync itself, so the follower does not compete.
    return private_settings("search-bench-", embedder=embedder, vector_poll_ms=3_600_000, log_level="warning",
                            rpc_timeout_s=600.0)


def run_catch_up(count: int, embedder: str) -> None:
    settings = make_settings(embedder)
    stack = Stack(embedder, settings=settings)
    try:
        write_s = fill(stack, count)
        seconds, documents = catch_up(stack)
    finally:
        stack.close()
        shutil.rmtree(settings.home, ignore_errors=True)
    print(f"\nCatch-up ({embedder}, {count:,} observations, {documents:,} documents)")
    print(f"  store writes          {count / write_s:10,.0f} observations/s   (baseline: AddObservations)")
    print(f"  vector catch-up       {count / seconds:10,.0f} observations/s   {documents / seconds:,.0f} documents/s"
          f"   target >= 300 obs/s: {'met' if count / seconds >= 300 else 'NOT met'}")


def run_latency(count: int, embedder: str, n_queries: int, repeat: int) -> None:
    settings = make_settings(embedder)
    stack = Stack(embedder, settings=settings)
    try:
        fill_s = fill(stack, count)
        index_s, documents = catch_up(stack)
        qs = queries(random.Random(11), n_queries)

        def lexical(item):
            text, project = item
            stack.store.stub.Search(store_pb2.StoreSearchRequest(
                query=text, filters=common_pb2.Filters(project=project), page=common_pb2.Page(limit=20)))

        def vector(item):
            text, project = item
            stack.vector.stub.Query(vector_pb2.VectorQueryRequest(
                text=text, filters=common_pb2.Filters(project=project), limit=100))

        def hybrid(item):
            text, project = item
            reply = stack.search.stub.Search(search_pb2.SearchRequest(query=text, project=project, limit=20))
            assert reply.strategy == "hybrid", reply.notice

        for fn in (lexical, vector, hybrid):  # warm caches and model once
            timed(fn, qs[:5], 1)
        results = {name: timed(fn, qs, repeat) for name, fn in
                   (("lexical (StoreService.Search)", lexical), ("vector (VectorService.Query)", vector),
                    ("hybrid (SearchService.Search)", hybrid))}
    finally:
        stack.close()
        shutil.rmtree(settings.home, ignore_errors=True)
    print(f"\nLatency on {count:,} observations ({documents:,} vector documents, {embedder} embedder; "
          f"filled in {fill_s:.0f}s, indexed in {index_s:.0f}s), {n_queries} queries x {repeat}, limit 20")
    print(f"  {'path':<32}{'p50 ms':>9}{'p95 ms':>9}{'mean ms':>9}")
    base = None
    for name, samples in results.items():
        p50, p95 = percentile(samples, 0.5), percentile(samples, 0.95)
        base = base or p50
        print(f"  {name:<32}{p50:>9.1f}{p95:>9.1f}{statistics.fmean(samples):>9.1f}   p50 x{p50 / base:.2f} of lexical")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--observations", type=int, default=100_000, help="store size for the latency phase")
    parser.add_argument("--catchup", type=int, default=5_000, help="observations for the catch-up phase (0 = skip)")
    parser.add_argument("--embedder", default=Settings.embedder, help="embedder of the catch-up phase")
    parser.add_argument("--latency-embedder", default="hash", help="embedder of the latency phase")
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    if args.catchup:
        run_catch_up(args.catchup, args.embedder)
    if args.observations:
        run_latency(args.observations, args.latency_embedder, args.queries, args.repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main())
