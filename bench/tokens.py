"""What the model receives from each tool, as the host delivers it, and the token economy of mem_search.

Builds a throwaway store of >= 2,000 generated coding observations (varied titles,
narratives, facts, files, types, ~90 days of work) in a temp MNEMO_HOME, runs the real
store_svc, vector_svc (hash embedder) and search_svc in process, spawns the real gateway
(`mnemo mcp`) with the MCP SDK's stdio client, and calls the tools as a model would (ids and
continuations read from the text). What counts is what Claude Code hands the model: the
result's text, or JSON.stringify(structuredContent) when the result carries structure
(docs/gateway.md). Tokens = characters / 4.

Table 1, per tool: characters and tokens the model receives, with the default gateway (text
only) and with mcp_structured_content on (what a host forwarding structure would deliver).
Table 2, per query: a mem_search index page (10 rows) against the full records it stands for
(get_observations of the page's observations), and the guided path (page + details of 3 picked
ids) against those full records and against the legacy first page of 20 read in full.

Targets (issues 5 and 33): full records >= 5x a page; guided <= 1/5 of the legacy first page.
Run: .venv/bin/python -m bench.tokens [--observations N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import re
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from bench.harness import SERVICES, gateway_env, mcp_session, print_load_average, start_service
from mnemo.config import ensure_private_dirs, load_settings, with_overrides
from mnemo.grpc_client import connect
from mnemo.v1 import common_pb2, store_pb2, store_pb2_grpc, vector_pb2, vector_pb2_grpc
from mnemo.vocab import CHARS_PER_TOKEN

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


ROW_ID = re.compile(r"^\| (#[SP]?\d+) \|", re.MULTILINE)
CONTINUATION = re.compile(r'continuation="(ms_[A-Za-z0-9_-]{24})"')
PICKED = 3  # ids a model picks from a page (mem_search's default maxDetails)


def delivered(result) -> str:
    """What Claude Code hands the model: JSON.stringify(structuredContent) when the result has
    one (compact, non-ASCII as is), else the text blocks."""
    if result.structured_content is not None:
        return json.dumps(result.structured_content, ensure_ascii=False, separators=(",", ":"))
    return "".join(getattr(block, "text", "") for block in result.content)


class Tally:
    """Characters delivered per tool (several calls each), and per query for table 2."""

    def __init__(self) -> None:
        self.chars: dict[str, list[int]] = {}

    async def call(self, session, label: str, tool: str, arguments: dict) -> tuple[str, str]:
        """(what the model receives, the text): the text is where a model reads ids and tokens."""
        result = await session.call_tool(tool, arguments)
        received = delivered(result)
        if result.is_error:
            raise RuntimeError(f"{tool} failed: {received[:300]}")
        self.chars.setdefault(label, []).append(len(received))
        return received, "".join(getattr(block, "text", "") for block in result.content)


async def query_calls(session, tally: Tally, query: str) -> dict[str, int]:
    """One query the way a model works: page, picked details, and the full records of the page."""
    _, page = await tally.call(session, "mem_search (index page)", "mem_search", {"query": query})
    shown = ROW_ID.findall(page)
    token = CONTINUATION.search(page)
    if not shown or token is None:
        raise RuntimeError(f"no rows for {query!r}: {page[:300]}")
    received_page = tally.chars["mem_search (index page)"][-1]
    await tally.call(session, "mem_search (3 details)", "mem_search",
                     {"continuation": token.group(1), "selectedIds": shown[:PICKED]})
    details = tally.chars["mem_search (3 details)"][-1]
    observations = [int(row[1:]) for row in shown if row[1:].isdigit()]
    await tally.call(session, "get_observations (page's records)", "get_observations", {"ids": observations})
    full = tally.chars["get_observations (page's records)"][-1]
    await tally.call(session, "mem_search auto", "mem_search", {"mode": "auto", "query": query})
    _, legacy = await tally.call(session, "search (legacy page 20)", "search", {"query": query})
    legacy_ids = [int(row[1:]) for row in ROW_ID.findall(legacy) if row[1:].isdigit()]
    await tally.call(session, "get_observations (legacy page)", "get_observations", {"ids": legacy_ids})
    await tally.call(session, "timeline (query)", "timeline", {"query": query})
    return {"page": received_page, "details": details, "full": full,
            "legacy": tally.chars["search (legacy page 20)"][-1] + tally.chars["get_observations (legacy page)"][-1]}


async def session_calls(env: dict[str, str]) -> tuple[Tally, list[tuple[str, dict[str, int]]]]:
    tally = Tally()
    per_query = []
    async with mcp_session(env) as session:
        for query in QUERIES:
            per_query.append((query, await query_calls(session, tally, query)))
        await tally.call(session, "session_start_context", "session_start_context", {"project": "shop"})
        await tally.call(session, "smart_outline", "smart_outline", {"file_path": "gateway/tools.py"})
        await tally.call(session, "smart_search", "smart_search", {"query": "profile tools"})
        await tally.call(session, "important_workflow", "important_workflow", {})
    return tally, per_query


def print_per_tool(text_only: Tally, structured: Tally) -> None:
    header = f"{'tool (mean per call)':36} {'calls':>5} {'chars':>7} {'tokens':>7} {'struct chars':>12} {'ratio':>6}"
    print(header)
    print("-" * len(header))
    for label, values in text_only.chars.items():
        chars, other = statistics.mean(values), statistics.mean(structured.chars[label])
        print(f"{label:36} {len(values):5} {chars:7.0f} {chars / CHARS_PER_TOKEN:7.0f} {other:12.0f} "
              f"{other / chars:6.2f}")
    print("(chars/tokens: the default gateway, text only; struct chars: with mcp_structured_content on, "
          "JSON.stringify(structuredContent) as Claude Code forwards it)")


def print_per_query(rows: list[tuple[str, dict[str, int]]]) -> None:
    header = (f"{'query':40} {'page':>6} {'full':>6} {'full/page':>9} {'guided':>7} {'legacy':>7} "
              f"{'g/legacy':>8}")
    print(header)
    print("-" * len(header))
    for query, m in rows:
        guided = m["page"] + m["details"]
        print(f"{query[:40]:40} {tokens_of(m['page']):6} {tokens_of(m['full']):6} {m['full'] / m['page']:9.2f} "
              f"{tokens_of(guided):7} {tokens_of(m['legacy']):7} {guided / m['legacy']:8.2f}")
    page, full, legacy = (sum(m[key] for _, m in rows) for key in ("page", "full", "legacy"))
    guided = sum(m["page"] + m["details"] for _, m in rows)
    print("-" * len(header))
    print(f"{'total (tokens)':40} {tokens_of(page):6} {tokens_of(full):6} {full / page:9.2f} {tokens_of(guided):7} "
          f"{tokens_of(legacy):7} {guided / legacy:8.2f}")
    print(f"median full/page {statistics.median(m['full'] / m['page'] for _, m in rows):.2f}")
    print(f"target full records >= 5x a page: {'met' if full / page >= 5 else 'NOT met'} ({full / page:.2f}x)")
    print(f"target guided <= 0.20 x legacy first page: {'met' if guided / legacy <= 0.2 else 'NOT met'} "
          f"({guided / legacy:.3f})")


def tokens_of(chars: int) -> int:
    return -(-chars // CHARS_PER_TOKEN)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--observations", type=int, default=2400)
    args = parser.parse_args()

    home = Path(tempfile.mkdtemp(prefix="mnemo-bench-"))
    started = []
    try:
        base = load_settings({"home": str(home)}, environ={})
        ensure_private_dirs(base)
        settings = with_overrides(base, embedder="hash", vector_poll_ms=200, log_level="error",
                                  rpc_timeout_s=60)
        started = [start_service(name, settings) for name in SERVICES]
        began = time.monotonic()
        stats = build(settings, args.observations)
        took = time.monotonic() - began
        print(f"store: {stats.observations} observations, built and indexed in {took:.1f} s")
        text_only, per_query = asyncio.run(session_calls(gateway_env(settings)))
        structured, _ = asyncio.run(session_calls(gateway_env(settings, MNEMO_MCP_STRUCTURED_CONTENT="true")))
        print()
        print_per_tool(text_only, structured)
        print()
        print_per_query(per_query)
        print()
        print_load_average()
    finally:
        for handle, on_stop in reversed(started):
            handle.stop(0)
            on_stop()
        shutil.rmtree(home, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
