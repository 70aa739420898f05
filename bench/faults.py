"""Fault suite: writers keep writing while every service is killed with -9, in turn, at
random moments; then nothing acknowledged may be missing or doubled, and the vector index
must match the store exactly.

Writers, for a fixed time:
- MCP: `save_memory` through real gateways (the MCP SDK's stdio client spawning `mnemo mcp`),
- gRPC: StoreService.AddObservations straight to the store (external_id = idempotent retry),
- hooks: `mnemo hook PostToolUse` processes (a hook always answers `{}`: "acknowledged" is
  "the hook process returned", and what it recorded is counted in tool_uses).
A writer retries a failed write with the same content until it is acknowledged (or gives
up after a few tries: then it is not counted as acknowledged).

Meanwhile a killer sends SIGKILL to store, vector, search, store, ... (at least
--kills-per-service each) and times each recovery (kill -> health SERVING again); the
supervisor started by `mnemo up` does the restarting.

Afterwards: acknowledged writes missing, duplicates, PRAGMA integrity_check, the FTS5
integrity-check of each full-text index, and Chroma's documents against the documents the
store's records make (missing, orphan, duplicate), once vector_svc has caught up.
The baseline is the same writers for a while with no kill, in the same run (a ratio of
write throughput). Usage: .venv/bin/python -m bench.faults [--seconds 120] [--kills-per-service 3]
"""

from __future__ import annotations

import argparse
import collections
import functools
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from bench.harness import REPO, mcp_session, p50, print_load_average
from mnemo.config import SERVICES, Settings, load_settings
from mnemo.errors import MnemoError
from mnemo.grpc_client import ServiceClient, connect
from mnemo.stack import read_pid, run_down, service_healthy
from mnemo.v1 import common_pb2, store_pb2, store_pb2_grpc, vector_pb2, vector_pb2_grpc

MNEMO = [sys.executable, "-m", "mnemo.cli"]
TRIES = 8
RETRY_PAUSE_S = 0.25


@dataclass
class Tally:
    """What one kind of writer did: its acknowledged markers, and how many writes failed for good."""

    acked: list[str] = field(default_factory=list)
    given_up: int = 0
    internal: int = 0  # answers INTERNAL: never acceptable, whatever the faults
    lock: threading.Lock = field(default_factory=threading.Lock)

    def ack(self, marker: str) -> None:
        with self.lock:
            self.acked.append(marker)

    def saw_internal(self) -> None:
        with self.lock:
            self.internal += 1


def retry(write: Callable[[], bool], marker: str, tally: Tally) -> None:
    for _ in range(TRIES):
        try:
            if write():
                tally.ack(marker)
                return
        except MnemoError as err:
            if err.code == "INTERNAL":
                tally.saw_internal()
        except (OSError, subprocess.SubprocessError):
            pass
        time.sleep(RETRY_PAUSE_S)
    with tally.lock:
        tally.given_up += 1


# -- writers ------------------------------------------------------------------------------
def _add(client: ServiceClient, request: store_pb2.AddObservationsRequest) -> bool:
    return bool(client.stub.AddObservations(request).ids)


def grpc_writer(settings: Settings, name: str, stop: threading.Event, tally: Tally) -> None:
    client = connect(settings, "store", store_pb2_grpc.StoreServiceStub)
    n = 0
    while not stop.is_set():
        marker = f"fltgrpc{name}n{n}"
        obs = common_pb2.Observation(memory_session_id=f"faults-{name}", project="faults", type="discovery",
                                     title=f"grpc write {marker}", narrative=f"payload {marker} for the fault run",
                                     external_id=marker)
        request = store_pb2.AddObservationsRequest(observations=[obs])
        retry(functools.partial(_add, client, request), marker, tally)
        n += 1
    client.close()


def mcp_writer(env: dict[str, str], name: str, stop: threading.Event, tally: Tally) -> None:
    import anyio

    async def run() -> None:
        async with mcp_session(env) as session:
            n = 0
            while not stop.is_set():
                marker = f"fltmcp{name}n{n}"
                for _ in range(TRIES):
                    result = await session.call_tool("save_memory", {
                        "text": f"mcp write {marker} for the fault run", "project": "faults"})
                    if not result.is_error:
                        tally.ack(marker)
                        break
                    if "".join(getattr(b, "text", "") for b in result.content).startswith("INTERNAL"):
                        tally.saw_internal()
                    await anyio.sleep(RETRY_PAUSE_S)
                else:
                    with tally.lock:
                        tally.given_up += 1
                n += 1

    anyio.run(run)


def hook_writer(env: dict[str, str], name: str, stop: threading.Event, tally: Tally) -> None:
    n = 0
    while not stop.is_set():
        marker = f"flthook{name}n{n}"
        payload = json.dumps({"session_id": f"faults-hook-{name}", "cwd": "/tmp/faults", "tool_name": "Bash",
                              "hook_event_name": "PostToolUse", "tool_use_id": f"tu-{marker}",
                              "tool_input": {"command": f"echo {marker}"},
                              "tool_response": {"stdout": marker, "stderr": "", "interrupted": False}})

        def write(payload: str = payload) -> bool:
            done = subprocess.run([*MNEMO, "hook", "PostToolUse"], input=payload, env=env, capture_output=True,
                                  text=True, timeout=120)
            return done.returncode == 0

        retry(write, marker, tally)
        n += 1


# -- the killer -----------------------------------------------------------------------------
def killer(settings: Settings, seconds: float, per_service: int, recoveries: dict[str, list[float]]) -> None:
    """SIGKILL store, vector, search, store... at random moments spread over the run; every
    kill happens (the run lasts until the last service killed is back)."""
    kills = [svc for _ in range(per_service) for svc in SERVICES]
    slot = seconds / (len(kills) + 1)
    started = time.monotonic()
    for index, service in enumerate(kills):
        moment = started + slot * (index + 1 + random.uniform(-0.4, 0.4))
        time.sleep(max(0.0, moment - time.monotonic()))
        info = read_pid(settings, service)
        while info is None:  # restarted meanwhile, pid file not written yet
            time.sleep(0.05)
            info = read_pid(settings, service)
        os.kill(info.pid, signal.SIGKILL)
        killed = time.monotonic()
        while not (service_healthy(settings, service, timeout=0.5) and _restarted(settings, service, info.pid)):
            time.sleep(0.05)
        recoveries[service].append(time.monotonic() - killed)


def _restarted(settings: Settings, service: str, old_pid: int) -> bool:
    info = read_pid(settings, service)
    return info is not None and info.pid != old_pid


# -- checks ---------------------------------------------------------------------------------
def stored_counts(db: Path) -> dict[str, collections.Counter]:
    """How often each marker is stored, per writer kind (read-only connection)."""
    conn = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True)
    try:
        counts: dict[str, collections.Counter] = {kind: collections.Counter() for kind in ("grpc", "mcp", "hook")}
        for (title,) in conn.execute("SELECT title FROM observations WHERE title LIKE 'grpc write %'"):
            counts["grpc"][title.split()[-1]] += 1
        for (narrative,) in conn.execute("SELECT narrative FROM observations WHERE narrative LIKE 'mcp write %'"):
            counts["mcp"][narrative.split()[2]] += 1
        for (tool_input,) in conn.execute("SELECT tool_input FROM tool_uses WHERE tool_input LIKE '%flthook%'"):
            marker = tool_input[tool_input.index("flthook"):].split('"')[0].split()[0]
            counts["hook"][marker] += 1
        return counts
    finally:
        conn.close()


def crashes_logged(settings: Settings) -> int:
    """Calls answered INTERNAL by any service or tool, as their logs record them (rpc_crashed, tool_crashed)."""
    return sum(path.read_text(errors="replace").count(marker) for path in settings.logs_dir.glob("*.log*")
               for marker in ('"rpc_crashed"', '"tool_crashed"'))


def other_projects(db: Path) -> int:
    """Records stored under a project no writer named: every writer writes to `faults`."""
    conn = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True)
    try:
        return sum(conn.execute(f"SELECT count(*) FROM {table} WHERE project != 'faults'").fetchone()[0]
                   for table in ("observations", "sdk_sessions", "session_summaries"))  # tool uses: by session
    finally:
        conn.close()


def integrity(db: Path) -> tuple[str, str]:
    """(PRAGMA integrity_check, FTS5 integrity-check of every full-text index), on a stopped store."""
    conn = sqlite3.connect(db)
    try:
        pragma = conn.execute("PRAGMA integrity_check").fetchone()[0]
        fts = [name for (name, sql) in conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'")
               if sql and "USING fts5" in sql and "trigram" not in sql]
        failed = []
        for name in fts:
            try:
                conn.execute(f"INSERT INTO {name}({name}) VALUES ('integrity-check')")
            except sqlite3.DatabaseError as err:
                failed.append(f"{name}: {err}")
        return pragma, "ok" if not failed else "; ".join(failed)
    finally:
        conn.close()


def wait_caught_up(settings: Settings, timeout: float = 600, failing_for: float = 60) -> str:
    """How long vector_svc took to reach lag 0 after the run (its lag is printed as it goes);
    gives up early when its Status keeps failing (a broken index does not heal by waiting)."""
    client = connect(settings, "vector", vector_pb2_grpc.VectorServiceStub)
    started = last_ok = time.monotonic()
    lag, said = -1, 0.0
    try:
        while time.monotonic() - started < timeout:
            try:
                lag = client.stub.Status(vector_pb2.VectorStatusRequest()).lag
                last_ok = time.monotonic()
            except MnemoError as err:
                lag = -1
                if time.monotonic() - last_ok > failing_for:
                    return f"FAILED: vector_svc Status fails for {failing_for:g} s: {err.code}: {err}"
            if lag == 0:
                return f"{time.monotonic() - started:.1f} s"
            if time.monotonic() - said > 15:
                said = time.monotonic()
                print(f"  vector lag {lag} after {said - started:.0f} s", flush=True)
            time.sleep(0.2)
        return f"NOT caught up after {timeout:g} s (lag {lag})"
    finally:
        client.close()


def vector_mismatches(settings: Settings) -> dict[str, int]:
    """Chroma's documents against the documents every stored record makes (run with the stack up)."""
    from vector_svc.documents import record_documents
    from vector_svc.embedders import make_embedder

    spans = make_embedder(settings.embedder).token_spans
    expected: collections.Counter = collections.Counter()
    store = connect(settings, "store", store_pb2_grpc.StoreServiceStub)
    conn = sqlite3.connect(f"{settings.database.resolve().as_uri()}?mode=ro", uri=True)
    try:
        for kind, table in ((common_pb2.DOC_KIND_OBSERVATION, "observations"),
                            (common_pb2.DOC_KIND_SUMMARY, "session_summaries"),
                            (common_pb2.DOC_KIND_PROMPT, "user_prompts")):
            ids = [row[0] for row in conn.execute(f"SELECT id FROM {table}")]
            for start in range(0, len(ids), 200):
                refs = [common_pb2.Ref(kind=kind, id=i) for i in ids[start:start + 200]]
                for record in store.stub.GetRecords(store_pb2.GetRecordsRequest(refs=refs)).records:
                    expected.update(doc.id for doc in record_documents(record, spans)[1])
    finally:
        conn.close()
        store.close()
    actual = chroma_ids(settings)
    return {"expected": sum(expected.values()), "indexed": sum(actual.values()),
            "missing": len(set(expected) - set(actual)), "orphan": len(set(actual) - set(expected)),
            "duplicate": sum(n - 1 for n in actual.values() if n > 1)}


def chroma_ids(settings: Settings) -> collections.Counter:
    import chromadb

    client = chromadb.PersistentClient(path=str(settings.chroma_dir))
    collection = client.get_collection("mnemo_records")
    ids: collections.Counter = collections.Counter()
    offset = 0
    while True:
        page = collection.get(limit=5000, offset=offset, include=[])["ids"]
        ids.update(page)
        if len(page) < 5000:
            return ids
        offset += len(page)


def vector_repairs(settings: Settings) -> str:
    """How often vector_svc rebuilt a damaged index by itself (a kill can wedge a Chroma
    collection: upstream chroma issue 7678), and how often it had to set its directory aside."""
    events: collections.Counter = collections.Counter()
    for log in settings.logs_dir.glob("vector.log*"):
        for line in log.read_text(errors="replace").splitlines():
            for event in ("index_damaged_rebuilding", "chroma_dir_set_aside"):
                events[event] += f'"event": "{event}"' in line
    return f"{events['index_damaged_rebuilding']} rebuilds, {events['chroma_dir_set_aside']} directories set aside"


# -- a run ----------------------------------------------------------------------------------
def run_phase(settings: Settings, env: dict[str, str], seconds: float, writers: dict[str, int],
              kills_per_service: int) -> tuple[dict[str, Tally], dict[str, list[float]], float]:
    stop = threading.Event()
    tallies = {kind: Tally() for kind in ("grpc", "mcp", "hook")}
    targets = {"grpc": lambda name, t: grpc_writer(settings, name, stop, t),
               "mcp": lambda name, t: mcp_writer(env, name, stop, t),
               "hook": lambda name, t: hook_writer(env, name, stop, t)}
    phase = "k" if kills_per_service else "b"
    threads = [threading.Thread(target=targets[kind], args=(f"{phase}{i}", tallies[kind]), daemon=True)
               for kind, count in writers.items() for i in range(count)]
    recoveries: dict[str, list[float]] = {svc: [] for svc in SERVICES}
    for thread in threads:
        thread.start()
    started = time.monotonic()
    if kills_per_service:
        killer(settings, seconds, kills_per_service, recoveries)
    time.sleep(max(0.0, started + seconds - time.monotonic()))
    stop.set()
    for thread in threads:
        thread.join(180)
    elapsed = time.monotonic() - started
    return tallies, recoveries, elapsed


def report(phases: dict[str, tuple[dict[str, Tally], dict[str, list[float]], float]],
           counts: dict[str, collections.Counter], checks: dict[str, object]) -> None:
    print(f"\n{'phase':<9} {'writer':<6} {'acked':>7} {'gave up':>8} {'writes/s':>9} {'missing':>8} {'dupes':>6} "
          f"{'INTERNAL':>8}")
    for phase, (tallies, _recoveries, seconds) in phases.items():
        for kind, tally in tallies.items():
            stored = counts[kind]
            missing = sum(1 for marker in tally.acked if stored[marker] == 0)
            dupes = sum(stored[marker] - 1 for marker in set(tally.acked) if stored[marker] > 1)
            print(f"{phase:<9} {kind:<6} {len(tally.acked):>7} {tally.given_up:>8} "
                  f"{len(tally.acked) / seconds:>9.1f} {missing:>8} {dupes:>6} {tally.internal:>8}")
    base = sum(len(t.acked) for t in phases["baseline"][0].values()) / phases["baseline"][2]
    faulty = sum(len(t.acked) for t in phases["kills"][0].values()) / phases["kills"][2]
    print(f"\nthroughput under kills / baseline: {faulty / base:.2f}")
    print(f"\n{'service':<8} {'kills':>6} {'recover p50 s':>14} {'max s':>7}")
    for service, times in phases["kills"][1].items():
        print(f"{service:<8} {len(times):>6} {p50(times):>14.2f} {max(times, default=0.0):>7.2f}")
    print("\n" + "\n".join(f"{name:<26} {value}" for name, value in checks.items()))
    print()
    print_load_average()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=120.0, help="length of the run with kills")
    parser.add_argument("--baseline-seconds", type=float, default=20.0, help="the same writers, no kill")
    parser.add_argument("--kills-per-service", type=int, default=3)
    parser.add_argument("--grpc", type=int, default=2)
    parser.add_argument("--mcp", type=int, default=2)
    parser.add_argument("--hooks", type=int, default=1)
    parser.add_argument("--embedder", default="hash")
    args = parser.parse_args()
    os.umask(0o077)
    home = Path(tempfile.mkdtemp(prefix="mnemo-faults-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("MNEMO_")}
    env.update({"MNEMO_HOME": str(home), "MNEMO_EMBEDDER": args.embedder, "MNEMO_LOG_LEVEL": "warning",
                "MNEMO_VECTOR_POLL_MS": "200", "PYTHONPATH": str(REPO)})
    settings = load_settings({"home": str(home), "embedder": args.embedder}, environ={})
    try:
        up = subprocess.run([*MNEMO, "up"], env=env, capture_output=True, text=True, timeout=180)
        if up.returncode:
            raise SystemExit(up.stdout + up.stderr)
        writers = {"grpc": args.grpc, "mcp": args.mcp, "hook": args.hooks}
        phases = {}
        for phase, seconds, kills in (("baseline", args.baseline_seconds, 0),
                                      ("kills", args.seconds, args.kills_per_service)):
            print(f"{phase}: {seconds:g} s ...", flush=True)
            phases[phase] = run_phase(settings, env, seconds, writers, kills)
        catch_up = wait_caught_up(settings)
        try:
            vectors: dict[str, object] = dict(vector_mismatches(settings))
        except Exception as err:  # noqa: BLE001 - a broken index is a result to print, not a crash
            vectors = {"check": f"FAILED: {type(err).__name__}: {str(err)[:200]}"}
        status = subprocess.run([*MNEMO, "status"], env=env, capture_output=True, text=True, timeout=60).stdout
        run_down(settings, None)
        counts = stored_counts(settings.database)
        pragma, fts = integrity(settings.database)
        checks = {"INTERNAL in any log": crashes_logged(settings),
                  "records of other projects": other_projects(settings.database),
                  "integrity_check": pragma, "fts integrity-check": fts, "vector catch-up after run": catch_up,
                  "vector self-repairs": vector_repairs(settings), **{f"vector {k}": v for k, v in vectors.items()}}
        report(phases, counts, checks)
        print("\n" + status)
        return 0
    finally:
        run_down(settings, None)
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
