"""Vector catch-up rate: observations/s embedded and indexed from the store's change feed.

For each observation profile, N observations are written to a real store_svc; then a real
vector_svc (embedded Chroma) is asked to Sync until it has applied the whole feed. The
baseline, measured in the same run on the same texts, is the embedder alone (no store, no
gRPC, no Chroma): the ratio shows what the pipeline costs on top of the model.

    .venv/bin/python -m bench.vector [--n 1000] [--embedder minilm-int8]
"""

from __future__ import annotations

import argparse
import random
import shutil
import sys
import time

from bench.harness import print_load_average, private_settings, start_service
from mnemo.grpc_client import open_channel
from mnemo.v1 import common_pb2, store_pb2, store_pb2_grpc, vector_pb2, vector_pb2_grpc

WORDS = [
    "the",
    "a",
    "of",
    "to",
    "in",
    "and",
    "for",
    "with",
    "on",
    "by",
    "from",
    "store",
    "vector",
    "index",
    "chroma",
    "sqlite",
    "grpc",
    "service",
    "client",
    "server",
    "session",
    "prompt",
    "observation",
    "summary",
    "search",
    "query",
    "filter",
    "project",
    "cache",
    "token",
    "deadline",
    "retry",
    "timeout",
    "socket",
    "config",
    "schema",
    "migration",
    "embedding",
    "model",
    "chunk",
    "batch",
    "feed",
    "watermark",
    "rebuild",
    "restart",
    "lock",
    "thread",
    "worker",
    "queue",
    "error",
    "bug",
    "fix",
    "feature",
    "refactor",
    "decision",
    "test",
    "file",
    "path",
    "function",
    "class",
    "module",
    "import",
    "export",
    "parse",
    "render",
    "format",
    "response",
    "request",
    "stream",
    "write",
    "read",
    "delete",
    "update",
    "insert",
    "latency",
    "throughput",
    "memory",
    "disk",
    "network",
    "handler",
    "hook",
    "gateway",
    "tool",
]


def sentence(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words)).capitalize() + "."


def observation(rng: random.Random, profile: str) -> common_pb2.Observation:
    if profile == "short":  # one conversational turn, the LoCoMo shape
        return common_pb2.Observation(
            memory_session_id="bench", project="bench", type="discovery", narrative=sentence(rng, rng.randint(12, 25))
        )
    return common_pb2.Observation(  # what the observer writes: title, subtitle, narrative, facts
        memory_session_id="bench",
        project="bench",
        type=rng.choice(["bugfix", "decision", "feature"]),
        title=sentence(rng, 6),
        subtitle=sentence(rng, 12),
        narrative=" ".join(sentence(rng, 12) for _ in range(5)),
        facts=[sentence(rng, 10) for _ in range(3)],
    )


def run_profile(profile: str, count: int, embedder_name: str) -> dict:
    from vector_svc.documents import observation_documents
    from vector_svc.embedders import make_embedder

    rng = random.Random(42)
    observations = [observation(rng, profile) for _ in range(count)]
    settings = private_settings("mnemo-bench-", embedder=embedder_name, vector_poll_ms=3_600_000, log_level="warning")
    home = settings.home
    try:
        # Baseline: the embedder alone on exactly the texts the index will embed.
        embedder = make_embedder(embedder_name)
        texts = [d.text for o in observations for d in observation_documents(o, embedder.token_spans)]
        tokens = sum(len(embedder.token_spans(t)) + 2 for t in texts)
        embedder.embed(texts[:32])  # warm up
        started = time.perf_counter()
        for i in range(0, len(texts), 128):
            embedder.embed(texts[i : i + 128])
        embed_s = time.perf_counter() - started

        store_handle, store_stop = start_service("store", settings)
        store = store_pb2_grpc.StoreServiceStub(open_channel(store_handle.address))
        store.UpsertSession(store_pb2.UpsertSessionRequest(content_session_id="bench", project="bench"))
        for i in range(0, count, 500):
            store.AddObservations(store_pb2.AddObservationsRequest(observations=observations[i : i + 500]))
        vector_handle, vector_stop = start_service("vector", settings)
        vector = vector_pb2_grpc.VectorServiceStub(open_channel(vector_handle.address))
        try:
            vector.Status(vector_pb2.VectorStatusRequest())  # opens the collection and warms up
            started = time.perf_counter()
            synced = vector.Sync(vector_pb2.VectorSyncRequest(), timeout=3600)
            sync_s = time.perf_counter() - started
            assert vector.Status(vector_pb2.VectorStatusRequest()).lag == 0
        finally:
            vector_handle.stop(0)
            vector_stop()
            store_handle.stop(0)
            store_stop()
        return {
            "profile": profile,
            "obs": count,
            "docs_per_obs": synced.documents / count,
            "tokens_per_obs": tokens / count,
            "embed_obs_s": count / embed_s,
            "sync_obs_s": count / sync_s,
            "sync_docs_s": synced.documents / sync_s,
        }
    finally:
        shutil.rmtree(home, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1000, help="observations per profile")
    parser.add_argument("--embedder", default="minilm-int8")
    parser.add_argument("--profiles", default="short,full")
    args = parser.parse_args()
    from mnemo.logs import configure_logging

    configure_logging("warning")
    rows = [run_profile(p, args.n, args.embedder) for p in args.profiles.split(",")]
    print(
        f"\nVector catch-up ({args.embedder}, {args.n:,} observations per profile; "
        "baseline = the embedder alone on the same texts)"
    )
    header = (
        f"{'profile':<8} {'docs/obs':>8} {'tokens/obs':>10} {'embed-only obs/s':>17} "
        f"{'catch-up obs/s':>15} {'docs/s':>8} {'ratio':>6}"
    )
    print(header)
    print("-" * len(header))
    for r in rows:
        print(
            f"{r['profile']:<8} {r['docs_per_obs']:>8.2f} {r['tokens_per_obs']:>10.0f} {r['embed_obs_s']:>17,.0f} "
            f"{r['sync_obs_s']:>15,.0f} {r['sync_docs_s']:>8,.0f} {r['sync_obs_s'] / r['embed_obs_s']:>6.2f}"
        )
    print("\ntarget: >= 300 observations/s on 2 cores (catch-up column)")
    print_load_average()
    return 0


if __name__ == "__main__":
    sys.exit(main())
