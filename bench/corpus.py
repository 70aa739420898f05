"""Priming throughput of a knowledge corpus: observations per second.

Runs the real stack in process (store_svc, vector_svc, search_svc on Unix sockets in a
temporary home), seeds N observations (default 10,000), builds one corpus over all of
them, and primes it: once with the `hash` embedder (the baseline: everything but the
model) and once with the real `minilm-int8` model, in the same run. The vector service's
change-feed follower is parked (a poll interval of a day): the corpus has its own
collection, and the follower embedding the same observations into the main collection
would compete for the CPU during the measurement.

    .venv/bin/python -m bench.corpus [--observations 10000] [--embedders hash,minilm-int8]
"""

from __future__ import annotations

import argparse
import importlib
import shutil
import sys
import tempfile
import time
from pathlib import Path

from bench.harness import load_average
from mnemo.config import ensure_private_dirs, load_settings, with_overrides
from mnemo.grpc_client import open_channel
from mnemo.v1 import (
    common_pb2,
    search_pb2,
    search_pb2_grpc,
    store_pb2,
    store_pb2_grpc,
    vector_pb2,
    vector_pb2_grpc,
)
from mnemo.vocab import OBSERVATION_TYPES
from search_svc.corpus import observation_passages

TYPES = OBSERVATION_TYPES[:6]  # the kinds of work; the security types stay rare
WORDS = [
    "cache", "token", "session", "pool", "retry", "index", "schema", "socket", "parser", "config", "migration",
    "lock", "queue", "buffer", "encoder", "stream", "cursor", "vector", "window", "budget"
]


def observation(i: int) -> common_pb2.Observation:
    """A realistic-sized observation: title, subtitle, a ~500-character narrative, three facts."""
    topic = [WORDS[(i * k) % len(WORDS)] for k in (1, 3, 7, 11)]
    narrative = " ".join(
        f"Step {n}: the {topic[n % 4]} layer of module {i % 97} was changed so the {topic[(n + 1) % 4]} "
        f"path no longer blocks."
        for n in range(6)
    )
    return common_pb2.Observation(
        memory_session_id=f"bench-{i // 50}",
        project="bench",
        type=TYPES[i % len(TYPES)],
        title=f"{topic[0].title()} {topic[1]} fix #{i}",
        subtitle=f"Why the {topic[2]} {topic[3]} mattered",
        narrative=narrative,
        facts=[f"The {topic[k]} limit is {i % 50 + k}" for k in range(3)],
        concepts=[topic[0], "how-it-works"],
        files_modified=[f"src/{topic[1]}/{i % 40}.py"],
        created_at_epoch=1_767_225_600_000 + i * 60_000,
    )


def start(name: str, settings):
    return importlib.import_module(f"{name}_svc.main").start(settings, settings.listen_address(name))


def run_one(embedder: str, observations: int) -> dict:
    home = Path(tempfile.mkdtemp(prefix="mnemo-bench-"))
    servers = []
    try:
        settings = load_settings({"home": str(home)}, environ={})
        ensure_private_dirs(settings)
        settings = with_overrides(
            settings, embedder=embedder, log_level="warning", rpc_timeout_s=120.0, vector_poll_ms=86_400_000
        )
        for name in ("store", "vector", "search"):
            servers.append(start(name, settings))
        store = store_pb2_grpc.StoreServiceStub(open_channel(settings.address("store")))
        vector = vector_pb2_grpc.VectorServiceStub(open_channel(settings.address("vector")))
        search = search_pb2_grpc.SearchServiceStub(open_channel(settings.address("search")))
        for start_at in range(0, observations, 1000):
            batch = [observation(i) for i in range(start_at, min(observations, start_at + 1000))]
            store.AddObservations(store_pb2.AddObservationsRequest(observations=batch))
        began = time.perf_counter()
        built = search.BuildCorpus(
            search_pb2.BuildCorpusRequest(
                name="bench", filter=store_pb2.CorpusFilter(project="bench", limit=observations)
            ),
            timeout=600,
        )
        build_s = time.perf_counter() - began
        assert built.corpus.stats.observation_count == observations, built.text
        began = time.perf_counter()
        events = list(search.PrimeCorpus(search_pb2.CorpusNameRequest(name="bench"), timeout=3600))
        prime_s = time.perf_counter() - began
        final = events[-1]
        if final.phase != "done":
            raise RuntimeError(f"priming failed: {final.message}")
        hits = vector.QueryCorpus(vector_pb2.QueryCorpusRequest(corpus="bench", project="bench", text="cache", limit=1))
        assert hits.passages
        embed_events = sum(e.phase == "embed" for e in events)
        passages = sum(len(observation_passages(observation(i))) for i in range(observations))
        return {
            "embedder": embedder,
            "observations": observations,
            "batches": embed_events,
            "passages": passages,
            "build_s": build_s,
            "prime_s": prime_s,
            "obs_per_s": observations / prime_s,
        }
    finally:
        for handle, on_stop in reversed(servers):
            handle.stop(0)
            on_stop()
        shutil.rmtree(home, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--observations", type=int, default=10_000)
    parser.add_argument("--embedders", default="hash,minilm-int8")
    args = parser.parse_args()
    rows = [run_one(name.strip(), args.observations) for name in args.embedders.split(",") if name.strip()]
    load = load_average()
    print(f"Corpus priming, {args.observations:,} observations (one run each; load average {load})")
    print(
        f"{'embedder':<14}{'passages':>9}{'batches':>9}{'build s':>9}{'prime s':>9}{'obs/s':>9}"
        f"{'pass/s':>9}{'vs hash':>9}"
    )
    baseline = next((r["obs_per_s"] for r in rows if r["embedder"] == "hash"), rows[0]["obs_per_s"])
    for r in rows:
        print(
            f"{r['embedder']:<14}{r['passages']:>9}{r['batches']:>9}{r['build_s']:>9.2f}"
            f"{r['prime_s']:>9.2f}{r['obs_per_s']:>9.1f}{r['passages'] / r['prime_s']:>9.1f}"
            f"{r['obs_per_s'] / baseline:>9.3f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
