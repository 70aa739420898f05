"""What every benchmark shares: a private stack (store_svc, vector_svc and search_svc in this
process, or a spawned `mnemo mcp`), percentiles, a table printer, the load-average line and
the per-process CPU and memory readings. One definition each, so two benches that print "p95"
or "load average" mean the same thing.
"""

from __future__ import annotations

import importlib
import os
import shutil
import sys
import tempfile
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from mnemo.config import Settings, ensure_private_dirs, load_settings, with_overrides

REPO = Path(__file__).resolve().parents[1]
GATEWAY_ARGV = [sys.executable, "-m", "mnemo.cli", "mcp"]
SERVICES = ("store", "vector", "search")


# -- figures ----------------------------------------------------------------------------------
def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..1) of the samples; 0 for none."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def p50(values: Sequence[float]) -> float:
    return percentile(values, 0.5)


def load_average() -> str:
    """The 1, 5 and 15 minute load averages: every figure is printed with them, since the
    machine is shared and wall times scale with its load."""
    return " ".join(f"{v:.2f}" for v in os.getloadavg())


def print_load_average(when: str = "") -> None:
    print(f"load average (1, 5, 15 min){f' {when}' if when else ''}: {load_average()} ({os.cpu_count()} cores)")


def print_table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> None:
    """A Markdown table with aligned columns (pastes into docs/*.md as it is)."""
    cells = [[str(cell) for cell in row] for row in [header, *rows]]
    widths = [max(len(row[column]) for row in cells) for column in range(len(header))]
    lines = [cells[0], ["-" * width for width in widths], *cells[1:]]
    for row in lines:
        print("| " + " | ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)) + " |")


# -- processes --------------------------------------------------------------------------------
def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process (Linux /proc): a load-independent cost measure."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mib(pid: int) -> float:
    """Resident memory of a process (Linux /proc), MiB; 0 for one with no memory of its own left."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


# -- the stack --------------------------------------------------------------------------------
def private_settings(prefix: str, **overrides: Any) -> Settings:
    """Settings over a fresh private home (no user config), with the bench's overrides."""
    home = Path(tempfile.mkdtemp(prefix=prefix))
    base = load_settings({"home": str(home)}, environ={})
    ensure_private_dirs(base)
    return with_overrides(base, **overrides)


def start_service(name: str, settings: Settings, listen: str | None = None):
    """One service in this process: (grpc handle, on_stop)."""
    module = importlib.import_module(f"{name}_svc.main")
    return module.start(settings, listen or settings.listen_address(name))


class Stack:
    """store_svc, vector_svc and search_svc in this process, with a client for each."""

    def __init__(self, embedder: str, home: Path | None = None, settings: Settings | None = None):
        from mnemo.grpc_client import connect
        from mnemo.v1 import search_pb2_grpc, store_pb2_grpc, vector_pb2_grpc

        self._own_home = home is None and settings is None
        if settings is None:
            overrides = {"embedder": embedder, "vector_poll_ms": 200, "log_level": "warning", "rpc_timeout_s": 120.0}
            settings = (
                with_overrides(load_settings({"home": str(home)}, environ={}), **overrides)
                if home
                else private_settings("mnemo-bench-", **overrides)
            )
            ensure_private_dirs(settings)
        self.settings = settings
        self.hybrid_ms: list[float] = []  # SearchService.Search latencies of the hybrid column
        self._servers = [start_service(name, settings) for name in SERVICES]
        self.store = connect(settings, "store", store_pb2_grpc.StoreServiceStub)
        self.vector = connect(settings, "vector", vector_pb2_grpc.VectorServiceStub)
        self.search = connect(settings, "search", search_pb2_grpc.SearchServiceStub)

    def close(self) -> None:
        for client in (self.store, self.vector, self.search):
            client.close()
        for handle, on_stop in reversed(self._servers):
            handle.stop(0)
            on_stop()
        if self._own_home:
            shutil.rmtree(self.settings.home, ignore_errors=True)


# -- the gateway ------------------------------------------------------------------------------
def subprocess_env(settings: Settings, **extra: str) -> dict[str, str]:
    """Environment for a spawned mnemo process: the settings' home, no user config, quiet logs."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MNEMO_")}
    env.update(
        {
            "MNEMO_HOME": str(settings.home),
            "MNEMO_EMBEDDER": settings.embedder,
            "MNEMO_LOG_LEVEL": "warning",
            "MNEMO_VECTOR_POLL_MS": str(settings.vector_poll_ms),
        }
    )
    if settings.store_backend != "sqlite":
        env.update({"MNEMO_STORE_BACKEND": settings.store_backend, "MNEMO_STORE_DSN": settings.store_dsn})
    env.update(extra)
    return env


def gateway_env(settings: Settings, **extra: str) -> dict[str, str]:
    """subprocess_env for `mnemo mcp`, logging to the home and importing this checkout."""
    env = subprocess_env(settings, **extra)
    env.setdefault("MNEMO_LOG_FILE", str(settings.logs_dir / "gateway.log"))
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return env


@asynccontextmanager
async def mcp_session(
    env: dict[str, str], *, message_handler=None, cwd: Path = REPO, args: tuple[str, ...] = ()
) -> AsyncIterator:
    """An initialized SDK ClientSession talking to a freshly spawned gateway (`mnemo mcp *args`,
    started in `cwd`); `message_handler` receives the server's notifications."""
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(command=GATEWAY_ARGV[0], args=[*GATEWAY_ARGV[1:], *args], env=env, cwd=str(cwd))
    with open(os.devnull, "w") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write, message_handler=message_handler) as session,
        ):
            await session.initialize()
            yield session
