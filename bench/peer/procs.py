"""bench/peer/run.py's processes: MCP servers over raw JSON-RPC, the processes of one side (found by a
marker in their command line or environment) with their CPU time, RSS and PSS, a local LLM stub."""

from __future__ import annotations

import http.server
import json
import os
import socket
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

from bench.harness import cpu_seconds, rss_mib

INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "peer-bench", "version": "0"}}}


class StdioPeer:
    """One MCP server over raw JSON-RPC lines: no client library on either side."""

    def __init__(self, argv: list[str], env: dict[str, str], cwd: Path):
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, env=env, cwd=str(cwd))
        self.next_id = 1

    def send(self, obj: dict) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write((json.dumps(obj) + "\n").encode())
        self.proc.stdin.flush()

    def request(self, method: str, params: dict | None = None) -> dict:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, **({"params": params} if params else {})})
        assert self.proc.stdout is not None
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError("the MCP server exited")
            reply = json.loads(line)
            if reply.get("id") == self.next_id:
                return reply

    def open(self) -> dict:
        """initialize + initialized + tools/list; returns the tools/list result."""
        self.send(INIT)
        assert self.proc.stdout is not None
        while json.loads(self.proc.stdout.readline()).get("id") != 0:
            pass
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return self.request("tools/list")["result"]

    def call(self, tool: str, arguments: dict) -> dict:
        reply = self.request("tools/call", {"name": tool, "arguments": arguments})
        if "error" in reply or reply["result"].get("isError"):
            raise RuntimeError(f"{tool} failed: {json.dumps(reply)[:300]}")
        return reply["result"]

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)


def cold_start(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, dict]:
    started = time.perf_counter()
    peer = StdioPeer(argv, env, cwd)
    listed = peer.open()
    elapsed = time.perf_counter() - started
    peer.close()
    return elapsed, listed


def side_pids(marker: str) -> list[str]:
    """Every process (but this one) whose command line or environment names `marker`."""
    pids = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        if int(pid) == os.getpid():
            continue
        try:
            seen = (Path(f"/proc/{pid}/cmdline").read_bytes() + Path(f"/proc/{pid}/environ").read_bytes())
        except OSError:
            continue
        if marker.encode() in seen:
            pids.append(pid)
    return pids


def _side_total(marker: str, measure: Callable[[int], float]) -> float:
    """`measure` summed over the side's processes (one that exits meanwhile counts nothing)."""
    total = 0.0
    for pid in side_pids(marker):
        try:
            total += measure(int(pid))
        except OSError:
            continue
    return total


def side_rss_mib(marker: str) -> float:
    """Summed RSS of the side's processes."""
    return _side_total(marker, rss_mib)


def side_cpu_s(marker: str) -> float:
    """CPU seconds (user + system) the side's processes have used so far."""
    return _side_total(marker, cpu_seconds)


class _Refuse(http.server.BaseHTTPRequestHandler):
    def _refuse(self) -> None:
        self.send_response(503)
        self.end_headers()
        self.wfile.write(b'{"error":"local stub: no LLM in this benchmark"}')

    do_GET = do_POST = _refuse

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 (the base class names it)
        pass


def llm_stub() -> http.server.ThreadingHTTPServer:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Refuse)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def timed_run(argv: list[str], payload: dict, env: dict[str, str], cwd: Path) -> float:
    started = time.perf_counter()
    subprocess.run(argv, input=json.dumps(payload).encode(), env=env, cwd=str(cwd), capture_output=True,
                   timeout=120, check=True)
    return (time.perf_counter() - started) * 1000


def pss_mib(pid: int) -> float:
    """Proportional set size (shared pages split among their users), MiB: what a process costs the
    machine when several share libraries or a model file."""
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        if line.startswith("Pss:"):
            return int(line.split()[1]) / 1024
    return 0.0


def side_pss_mib(marker: str) -> float:
    """Summed PSS of the side's processes."""
    return _side_total(marker, pss_mib)


def side_memory(marker: str, name: str | None = None) -> tuple[float, float, float]:
    """(RSS, PSS, RSS of the side's processes whose command line holds `name`), MiB."""
    part = 0.0
    if name:
        for pid in side_pids(marker):
            try:
                if name.encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                    part += rss_mib(int(pid))
            except OSError:
                continue
    return side_rss_mib(marker), side_pss_mib(marker), part
