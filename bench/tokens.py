"""Token economy of mem_search: guided (index + details of picked ids) vs fetching every result.

Builds a throwaway store of >= 2,000 generated coding observations (varied titles,
narratives, facts, files, types, ~90 days of work) in a temp MNEMO_HOME, runs the real
store_svc, vector_svc (hash embedder) and search_svc in process, then for each query
measures the text a model reads (tokens = characters / 4):

  guided   mem_search index page (default 10 rows) + details of maxDetails (default 3)
           picked ids, each with its timeline context (depth 1) and layer-4 pointers
  page10   full details (GetObservations) of every result on that same 10-row page
  page20   the legacy path: the `search` first page (its default, 20 rows) + full
           details of every result on it (what the workflow note warns against)

Target (issue 5): guided <= 1/5 of fetching every result of the first page.
Run: .venv/bin/python bench/tokens.py [--observations N]
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mnemo.config import ensure_private_dirs, load_settings, with_overrides  # noqa: E402
from mnemo.grpc_client import connect, open_channel  # noqa: E402
from mnemo.v1 import common_pb2, search_pb2, search_pb2_grpc, store_pb2, store_pb2_grpc, vector_pb2, vector_pb2_grpc  # noqa: E402  # noqa: E402

COMPONENTS = {
    "auth": ["src/auth/session.py", "src/auth/tokens.py", "src/auth/middleware.py", "tests/test_login.py"],
    "billing": ["src/billing/invoices.py", "src/billing/stripe_webhook.py", "src/billing/tax.py"],
    "search": ["src/search/indexer.py", "src/search/query_parser.py", "src/search/ranking.py"],
    "cache": ["src/cache/redis_client.py", "src/cache/eviction.py", "src/cache/keys.py"],
    "api": ["src/api/routes/orders.py", "src/api/routes/users.py", "src/api/pagination.py"],
    "database": ["migrations/0042_add_order_index.sql", "src/db/pool.py", "src/db/models/order.py"],
    "frontend": ["web/src/components/Checkout.tsx", "web/src/hooks/useCart.ts", "web/src/pages/Login.tsx"],
    "deploy": ["deploy/k8s/api.yaml", "deploy/terraform/rds.tf", ".github/workflows/ci.yml", "Dockerfile"],
    "logging": ["src/observability/logging.py", "src/observability/metrics.py", "src/observability/trace.py"],
    "notifications": ["src/notify/email.py", "src/notify/templates/receipt.html", "src/notify/worker.py"],
}
PROBLEMS = [
    ("race condition", "two workers read the same row before either wrote it back"),
    ("N+1 query", "the serializer lazily loaded each related row in a loop"),
    ("memory leak", "a module-level dict kept every request context alive"),
    ("timeout", "the upstream call had no deadline and held a pool connection"),
    ("off-by-one error", "the page boundary used <= where < was meant"),
    ("stale cache entry", "the key did not include the tenant id"),
    ("flaky test", "the test depended on dict ordering and wall-clock time"),
    ("unicode handling bug", "names were truncated by bytes instead of characters"),
    ("retry storm", "every client retried immediately without jitter"),
    ("deadlock", "two transactions locked the tables in opposite order"),
    ("silent data loss", "the exception handler swallowed write errors"),
    ("slow startup", "the app imported the ML model at module import time"),
]
ACTIONS = {
    "bugfix": ["Fixed", "Resolved", "Patched"],
    "feature": ["Added", "Implemented", "Introduced"],
    "refactor": ["Refactored", "Extracted", "Simplified"],
    "discovery": ["Discovered", "Traced", "Investigated"],
    "change": ["Changed", "Updated", "Bumped"],
    "decision": ["Decided on", "Chose", "Settled on"],
}
THINGS = ["retry with exponential backoff", "idempotency keys", "cursor-based pagination",
          "a connection pool limit", "structured logging fields", "a feature flag", "request deadlines",
          "a composite index", "an LRU eviction policy", "schema validation", "rate limiting",
          "a background job queue", "optimistic locking", "a circuit breaker", "batch inserts", "signed URLs"]
VERIFY = ["Verified with the integration suite; all 214 tests pass.",
          "Reproduced locally with 50 concurrent clients before and after the change.",
          "Load test p95 dropped from 840 ms to 120 ms.",
          "Added a regression test that failed before the fix.",
          "Checked the staging logs for a day: no recurrence."]
WHY = ["This matters because checkout depends on it.", "Without it, on-call gets paged nightly.",
       "The product team asked for it before the Q3 launch.", "It removes a class of production incidents.",
       "It keeps the API contract stable for mobile clients."]
CONCEPTS = ["how-it-works", "gotcha", "pattern", "trade-off", "problem-solution"]
QUERIES = [
    "race condition in cache eviction", "why did checkout time out", "stripe webhook retries",
    "pagination off by one in orders endpoint", "flaky login test", "database deadlock between transactions",
    "memory leak request context", "how is rate limiting implemented", "redis key tenant id stale cache",
    "slow startup importing model", "unicode names truncated", "composite index migration for orders",
    "idempotency keys for payments", "circuit breaker upstream calls", "structured logging fields tracing",
    "terraform rds configuration change", "email receipt template queue worker", "N+1 query serializer",
    "feature flag rollout decision", "retry storm jitter clients",
]
START_EPOCH = 1_760_000_000_000
STEP_MS = 3_250_000  # 2,400 observations span ~90 days


def tokens(text: str) -> int:
    return -(-len(text) // 4)


def _narrative(rng: random.Random, component: str, problem: tuple[str, str], thing: str,
               files: list[str]) -> str:
    sentences = [
        f"While working on the {component} code, the {problem[0]} showed up under load: {problem[1]}.",
        f"The relevant logic lives in {files[0]}, which is called from {rng.choice(files)} on every request.",
        f"The change introduces {thing} and keeps the old behaviour behind a setting for one release.",
        rng.choice(VERIFY), rng.choice(WHY),
        f"A follow-up is to document the {component} invariants next to the code and in the runbook.",
        f"Edge cases covered: empty input, a tenant with {rng.randint(2, 900)} items, a retry after a crash.",
    ]
    tail = sentences[2:]
    rng.shuffle(tail)
    return " ".join((sentences[:2] + tail)[: rng.randint(4, 7)])


def _observation(rng: random.Random, i: int, session_id: str) -> common_pb2.Observation:
    component = rng.choice(list(COMPONENTS))
    files = COMPONENTS[component]
    kind = rng.choice(list(ACTIONS))
    problem, thing = rng.choice(PROBLEMS), rng.choice(THINGS)
    if kind in ("bugfix", "discovery"):
        title = f"{rng.choice(ACTIONS[kind])} {problem[0]} in {component} {files[0].rsplit('/', 1)[-1]}"
    else:
        title = f"{rng.choice(ACTIONS[kind])} {thing} for {component}"
    part = rng.choice(["entry point", "retry loop", "schema"])
    facts = [f"{rng.choice(files)} owns the {component} {part}",
             f"The {problem[0]} appeared when {problem[1]}", f"{thing.capitalize()} is configured per tenant",
             f"Ticket {component.upper()}-{rng.randint(100, 999)} tracks the rollout"]
    return common_pb2.Observation(
        memory_session_id=session_id, project="shop", type=kind, title=title,
        subtitle=f"{component}: {problem[0]} and {thing}",
        narrative=_narrative(rng, component, problem, thing, files), facts=facts[: rng.randint(3, 4)],
        concepts=rng.sample(CONCEPTS, 2), files_read=rng.sample(files, 2),
        files_modified=[files[0]] if kind != "discovery" else [], created_at_epoch=START_EPOCH + i * STEP_MS)


def generate(count: int, seed: int = 7) -> list[tuple[str, list[common_pb2.Observation]]]:
    """(memory_session_id, observations) per session of 50 observations."""
    rng = random.Random(seed)
    sessions: list[tuple[str, list[common_pb2.Observation]]] = []
    for i in range(count):
        if i % 50 == 0:
            sessions.append((f"bench-{i // 50:03d}", []))
        sessions[-1][1].append(_observation(rng, i, sessions[-1][0]))
    return sessions


def build(settings, count: int) -> store_pb2.StatsResponse:
    store = connect(settings, "store", store_pb2_grpc.StoreServiceStub)
    vector = connect(settings, "vector", vector_pb2_grpc.VectorServiceStub)
    try:
        for session_id, observations in generate(count):
            store.stub.UpsertSession(store_pb2.UpsertSessionRequest(
                content_session_id=session_id, memory_session_id=session_id, project="shop",
                started_at_epoch=observations[0].created_at_epoch))
            store.stub.AddObservations(store_pb2.AddObservationsRequest(observations=observations), timeout=120)
        vector.stub.Sync(vector_pb2.VectorSyncRequest(), timeout=900)
        return store.stub.Stats(store_pb2.StatsRequest())
    finally:
        store.close()
        vector.close()


def _observation_ids(rows) -> list[int]:
    return [row.ref.id for row in rows if row.ref.kind == common_pb2.DOC_KIND_OBSERVATION]


def measure(search, query: str) -> dict[str, int]:
    first = search.MemSearch(search_pb2.MemSearchRequest(query=query))
    picked = [row.display_id for row in first.rows[:3]]
    details = search.MemSearch(search_pb2.MemSearchRequest(continuation=first.continuation,
                                                           selected_ids=picked))
    page10 = search.GetObservations(search_pb2.GetObservationsRequest(ids=_observation_ids(first.rows)))
    legacy = search.Search(search_pb2.SearchRequest(query=query))
    legacy_details = search.GetObservations(search_pb2.GetObservationsRequest(
        ids=_observation_ids(legacy.rows)))
    return {"index": tokens(first.text), "details": tokens(details.text),
            "guided": tokens(first.text) + tokens(details.text), "page10": tokens(page10.text),
            "page20": tokens(legacy.text) + tokens(legacy_details.text)}


def print_table(rows: list[tuple[str, dict[str, int]]]) -> None:
    header = (f"{'query':40} {'index':>6} {'details':>7} {'guided':>7} {'page10':>7} {'page20':>7} "
              f"{'g/p10':>6} {'g/p20':>6}")
    print(header)
    print("-" * len(header))
    for query, m in rows:
        print(f"{query[:40]:40} {m['index']:6} {m['details']:7} {m['guided']:7} {m['page10']:7} "
              f"{m['page20']:7} {m['guided'] / m['page10']:6.2f} {m['guided'] / m['page20']:6.2f}")
    guided, page10, page20 = (sum(m[key] for _, m in rows) for key in ("guided", "page10", "page20"))
    print("-" * len(header))
    print(f"{'total':40} {'':6} {'':7} {guided:7} {page10:7} {page20:7} {guided / page10:6.2f} "
          f"{guided / page20:6.2f}")
    median10 = statistics.median(m["guided"] / m["page10"] for _, m in rows)
    median20 = statistics.median(m["guided"] / m["page20"] for _, m in rows)
    print(f"median ratio: guided/page10 {median10:.2f}, guided/page20 {median20:.2f}")
    for name, ratio in (("page10", guided / page10), ("page20 (legacy first page)", guided / page20)):
        print(f"target guided <= 0.20 x {name}: {'met' if ratio <= 0.2 else 'NOT met'} ({ratio:.3f})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--observations", type=int, default=2400)
    args = parser.parse_args()
    from tests.conftest import start_service

    home = Path(tempfile.mkdtemp(prefix="mnemo-bench-"))
    started = []
    try:
        base = load_settings({"home": str(home)}, environ={})
        ensure_private_dirs(base)
        settings = with_overrides(base, embedder="hash", vector_poll_ms=200, log_level="error",
                                  rpc_timeout_s=60)
        started = [start_service(name, settings) for name in ("store", "vector", "search")]
        began = time.monotonic()
        stats = build(settings, args.observations)
        took = time.monotonic() - began
        print(f"store: {stats.observations} observations, built and indexed in {took:.1f} s")
        channel = open_channel(started[-1][0].address)
        search = search_pb2_grpc.SearchServiceStub(channel)
        print_table([(query, measure(search, query)) for query in QUERIES])
        channel.close()
    finally:
        for handle, on_stop in reversed(started):
            handle.stop(0)
            on_stop()
        shutil.rmtree(home, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
