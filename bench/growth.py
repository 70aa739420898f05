"""Search latency as the store grows: 10k -> 100k -> 1M observations, one fresh stack per size.

For each size, store_svc, vector_svc and search_svc run as separate processes (as `mnemo up`
runs them) in a private temp home; N observations are written through
StoreService.AddObservations and indexed by vector_svc's own follower (the `hash` embedder by
default: indexing 1M observations with the real model would take hours on 2 cores; the
embedder changes which neighbours come back, not the Chroma and SQLite work per query). Then
the same queries, over gRPC:
- lexical: StoreService.Search (the full-text leg, 100 candidates as search_svc asks),
- vector:  VectorService.Query (100 records, the vector leg),
- hybrid:  SearchService.Search (both legs, Hydrate, fusion, rendering; limit 20),
each unfiltered and scoped to one of 8 projects, and recall@20 of hybrid and lexical on
labelled queries ("<problem> in the <component>": relevant = every observation whose title
names both). Prints p50/p95 per size, the growth factor per 10x, the CPU time each service
process spends per hybrid search, and vector_svc's RSS.

    .venv/bin/python -m bench.growth                          # 10,000 and 100,000
    .venv/bin/python -m bench.growth --sizes 1000000          # 1M (indexing alone: hours here)
    .venv/bin/python -m bench.growth --sizes 10000 --embedder minilm-int8
    .venv/bin/python -m bench.growth --sizes 1000000 --vector off   # 1M full-text only (no vector_svc)
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.harness import REPO, cpu_seconds, percentile, print_load_average, rss_mib
from bench.search import COMPONENTS, PROBLEMS, PROJECTS, observation, timed
from mnemo.config import ensure_private_dirs, load_settings
from mnemo.grpc_client import check_health, connect
from mnemo.v1 import (
    common_pb2,
    search_pb2,
    search_pb2_grpc,
    store_pb2,
    store_pb2_grpc,
    vector_pb2,
    vector_pb2_grpc,
)

SERVICES = ("store", "vector", "search")
BATCH = 1000


class Processes:
    """The three services as child processes of this benchmark, in one private home."""

    def __init__(self, home: Path, embedder: str, vector: bool = True):
        self.home = home
        self.services = SERVICES if vector else tuple(name for name in SERVICES if name != "vector")
        self.settings = load_settings({"home": str(home)}, environ={})
        ensure_private_dirs(self.settings)
        env = {k: v for k, v in os.environ.items() if not k.startswith("MNEMO_")}
        env.update(MNEMO_HOME=str(home), MNEMO_EMBEDDER=embedder, MNEMO_LOG_LEVEL="warning",
                   MNEMO_RPC_TIMEOUT_S="600", MNEMO_VECTOR="on" if vector else "off", PYTHONPATH=str(REPO))
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        for name in self.services:
            self.procs[name] = subprocess.Popen(
                [sys.executable, "-m", "mnemo.cli", "serve", name], env=env, cwd=str(REPO),
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            while not check_health(self.settings.address(name), timeout=1.0):
                if self.procs[name].poll() is not None:
                    self.close()
                    raise RuntimeError(f"{name}_svc exited; see {home}/logs")
                time.sleep(0.1)
        self.store = connect(self.settings, "store", store_pb2_grpc.StoreServiceStub)
        self.vector = connect(self.settings, "vector", vector_pb2_grpc.VectorServiceStub) if vector else None
        self.search = connect(self.settings, "search", search_pb2_grpc.SearchServiceStub)

    @property
    def vector_on(self) -> bool:
        return "vector" in self.services

    def rss_mib(self, name: str) -> float:
        return rss_mib(self.procs[name].pid)

    def cpu_s(self) -> dict[str, float]:
        """CPU seconds (user + system) each service process has used so far."""
        return {name: cpu_seconds(proc.pid) for name, proc in self.procs.items()}

    def close(self) -> None:
        for client in (getattr(self, attr, None) for attr in ("store", "vector", "search")):
            if client is not None:
                client.close()
        for proc in reversed(list(self.procs.values())):
            proc.terminate()
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def fill(stack: Processes, count: int) -> dict[tuple[str, str], list[int]]:
    """Write `count` observations; returns (problem, component) -> ids of those whose title names both."""
    rng = random.Random(7)
    labels: dict[tuple[str, str], list[int]] = {}
    for start in range(0, count, BATCH):
        batch = [observation(rng, i, 1_700_000_000_000) for i in range(start, min(count, start + BATCH))]
        ids = stack.store.stub.AddObservations(store_pb2.AddObservationsRequest(observations=batch),
                                               timeout=600).ids
        for obs, obs_id in zip(batch, ids, strict=True):
            for prob in PROBLEMS:
                if f" {prob} in " in obs.title:
                    labels.setdefault((prob, obs.title.split(" in ", 1)[1]), []).append(obs_id)
    return labels


def wait_indexed(stack: Processes, timeout_s: float) -> tuple[float, float]:
    """Seconds until vector_svc's follower caught up, and vector_svc's peak RSS meanwhile."""
    started, peak = time.monotonic(), 0.0
    while time.monotonic() - started < timeout_s:
        peak = max(peak, stack.rss_mib("vector"))
        if stack.vector.stub.Status(vector_pb2.VectorStatusRequest()).lag <= 0:
            return time.monotonic() - started, peak
        time.sleep(1.0)
    raise TimeoutError("the vector index did not catch up")


def latency(stack: Processes, project: bool) -> dict[str, list[float]]:
    rng = random.Random(11)
    items = [(f"{rng.choice(PROBLEMS)} {rng.choice(COMPONENTS)}", rng.choice(PROJECTS) if project else "")
             for _ in range(40)]

    def lexical(item):
        stack.store.stub.Search(store_pb2.StoreSearchRequest(
            query=item[0], filters=common_pb2.Filters(project=item[1]), page=common_pb2.Page(limit=100)))

    def vector(item):
        stack.vector.stub.Query(vector_pb2.VectorQueryRequest(
            text=item[0], filters=common_pb2.Filters(project=item[1]), limit=100))

    def hybrid(item):
        reply = stack.search.stub.Search(search_pb2.SearchRequest(query=item[0], project=item[1], limit=20))
        assert reply.strategy == ("hybrid" if stack.vector_on else "lexical"), reply.notice

    calls = {"lexical": lexical, "vector": vector, "hybrid": hybrid}
    if not stack.vector_on:  # full-text only: search_svc answers from the store alone
        del calls["vector"]
    for fn in calls.values():
        timed(fn, items[:5], 1)  # warm-up: channels, caches
    out = {name: timed(fn, items, 2) for name, fn in calls.items() if name != "hybrid"}
    before = stack.cpu_s()
    out["hybrid"] = timed(hybrid, items, 2)
    after = stack.cpu_s()
    out["hybrid_cpu_ms"] = [(after[name] - before[name]) * 1000 / len(out["hybrid"]) for name in stack.services]
    return out


def recall(stack: Processes, labels: dict[tuple[str, str], list[int]]) -> dict[str, float]:
    """Mean recall@20 over 30 labelled queries: found relevant / min(20, relevant)."""
    picked = random.Random(3).sample(sorted(labels), min(30, len(labels)))
    sums = {"hybrid": 0.0, "lexical": 0.0}
    for prob, comp in picked:
        relevant, query = set(labels[(prob, comp)]), f"{prob} in the {comp}"
        hybrid = stack.search.stub.Search(search_pb2.SearchRequest(query=query, limit=20)).rows
        lexical = stack.store.stub.Search(store_pb2.StoreSearchRequest(
            query=query, page=common_pb2.Page(limit=20))).hits
        for name, rows in (("hybrid", hybrid), ("lexical", lexical)):
            sums[name] += len({r.ref.id for r in rows} & relevant) / min(20, len(relevant))
    return {name: total / len(picked) for name, total in sums.items()}


def run_size(size: int, embedder: str, timeout_s: float, vector: bool = True) -> dict:
    home = Path(tempfile.mkdtemp(prefix="mnemo-growth-"))
    stack = Processes(home, embedder, vector)
    try:
        started = time.monotonic()
        labels = fill(stack, size)
        fill_s = time.monotonic() - started
        index_s, peak = wait_indexed(stack, timeout_s) if stack.vector_on else (0.0, 0.0)
        out = {"size": size, "fill_s": fill_s, "index_s": index_s, "peak_rss": peak,
               "all": latency(stack, project=False), "project": latency(stack, project=True),
               "recall": recall(stack, labels), "rss": {name: stack.rss_mib(name) for name in stack.services},
               "services": stack.services, "vector_on": stack.vector_on}
    finally:
        stack.close()
        shutil.rmtree(home, ignore_errors=True)
    return out


def report(results: list[dict], embedder: str) -> None:
    print(f"\nSearch p50 / p95 in ms over gRPC by store size ({embedder} embedder, separate service processes)")
    last = "hybrid" if results[0]["vector_on"] else "full-text"  # SearchService.Search either way
    print(f"{'observations':>12} {'scope':<8} {'lexical':>14} {'vector':>14} {last:>14}  recall@20 {last}/lexical")
    for r in results:
        for scope in ("all", "project"):
            cells = [f"{percentile(r[scope][n], .5):6.1f} /{percentile(r[scope][n], .95):6.1f}"
                     if n in r[scope] else "-" for n in ("lexical", "vector", "hybrid")]
            extra = f"  {r['recall']['hybrid']:.3f} / {r['recall']['lexical']:.3f}" if scope == "all" else ""
            print(f"{r['size']:>12,} {scope:<8} {cells[0]:>14} {cells[1]:>14} {cells[2]:>14}{extra}")
    for a, b in zip(results, results[1:], strict=False):
        growth = b["size"] / a["size"]
        for scope in ("all", "project"):
            factor = percentile(b[scope]["hybrid"], .5) / percentile(a[scope]["hybrid"], .5)
            print(f"{last} p50 ({scope}) {a['size']:,} -> {b['size']:,}: x{factor:.2f} for x{growth:.0f} records "
                  f"({'sub-linear' if factor < growth else 'NOT sub-linear'})")
    for r in results:
        for scope in ("all", "project"):
            cpu = " / ".join(f"{ms:.1f}" for ms in r[scope]["hybrid_cpu_ms"])
            print(f"{r['size']:,} {scope}: CPU per {last} search in {' / '.join(r['services'])}: {cpu} ms")
    for r in results:
        rss = ", ".join(f"{name}_svc {mib:.0f}" for name, mib in r["rss"].items())
        indexed = (f"indexed in {r['index_s']:.0f} s (vector_svc RSS peak {r['peak_rss']:.0f} MiB)"
                   if r["vector_on"] else "no vector index (`--vector off`)")
        print(f"{r['size']:,}: filled in {r['fill_s']:.0f} s, {indexed}; RSS after the queries: {rss} MiB")
    print_load_average()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000", help="comma list of observation counts")
    parser.add_argument("--embedder", default="hash")
    parser.add_argument("--index-timeout", type=float, default=4 * 3600)
    parser.add_argument("--vector", choices=("on", "off"), default="on",
                        help="off: no vector_svc, full-text search only (1M without hours of indexing)")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    results = []
    for size in sizes:
        results.append(run_size(size, args.embedder, args.index_timeout, vector=args.vector == "on"))
        report(results[-1:], args.embedder)  # each size as soon as it is measured
    if len(results) > 1:
        report(results, args.embedder)
    return 0


if __name__ == "__main__":
    sys.exit(main())
