"""mnemo next to claude-mem 13.25.3, measured side by side in one run on one corpus.

Installs bun and claude-mem from npm into a temp dir (two steps: bun, then claude-mem with
--legacy-peer-deps; one combined install loops on peer dependencies), keeps claude-mem's
HOME and data dir inside that dir with telemetry off, Chroma off (its vector path cannot
start offline) and its LLM paths pointed at local stubs (CLAUDE_CODE_PATH is a script that
exits 1, ANTHROPIC_BASE_URL a local HTTP server answering 503), so no real `claude` starts.
The corpus is generated deterministically into claude-mem's own database (created by its
worker), imported into a private mnemo home with `mnemo import`, and both MCP servers are
asked the same queries, interleaved, over raw JSON-RPC on their stdio (no client library on
either side). Prints the table with ratios and the load average. Not part of `make test`.

    .venv/bin/python bench/peer.py [--observations 10000] [--embedder minilm-int8|hash]

mnemo runs with `vector_idle_release_s` at --idle-release (default 30 s, the product's default
is 600): after the searches the bench waits until vector_svc has let its model go, measures
the idle RSS again and times the first search after it (the model's reload).
"""

from __future__ import annotations

import argparse
import http.server
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.peer_corpus import generate_corpus, make_queries  # noqa: E402
from bench.store import cpu_seconds, rss_mib  # noqa: E402

CLAUDE_MEM = "claude-mem@13.25.3"
WARM_QUERIES = 5  # asked of both sides before the timed queries
INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "peer-bench", "version": "0"}}}


# ---------- processes ----------------------------------------------------------------------


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


# ---------- claude-mem ---------------------------------------------------------------------


class ClaudeMem:
    def __init__(self, root: Path, stub_url: str):
        self.root, self.home = root, root / "home"
        self.data = self.home / ".claude-mem"
        self.scripts = root / "node_modules" / "claude-mem" / "plugin" / "scripts"
        self.port = free_port()
        self.data.mkdir(parents=True)
        fake_claude = root / "claude-stub"
        fake_claude.write_text("#!/bin/sh\necho 'local stub: no claude in this benchmark' >&2\nexit 1\n")
        fake_claude.chmod(0o755)
        settings = {"CLAUDE_MEM_WORKER_PORT": str(self.port), "CLAUDE_MEM_DATA_DIR": str(self.data),
                    "CLAUDE_MEM_CHROMA_ENABLED": "false", "CLAUDE_MEM_TELEMETRY": "false",
                    "CLAUDE_CODE_PATH": str(fake_claude), "CLAUDE_MEM_LOG_LEVEL": "WARN"}
        (self.data / "settings.json").write_text(json.dumps(settings))
        self.env = {"PATH": f"{root / 'node_modules' / '.bin'}:{os.environ.get('PATH', '')}",
                    "HOME": str(self.home), "DO_NOT_TRACK": "1", "CLAUDE_MEM_TELEMETRY": "false",
                    "ANTHROPIC_BASE_URL": stub_url, "ANTHROPIC_API_KEY": "local-stub",
                    **settings}

    def install(self) -> None:
        npm = ["npm", "install", "--no-audit", "--no-fund", "--prefix", str(self.root)]
        for extra in (["bun"], ["--legacy-peer-deps", CLAUDE_MEM]):
            subprocess.run(npm + extra, check=True, capture_output=True, timeout=900)

    def worker(self, action: str) -> None:
        subprocess.run(["bun", str(self.scripts / "worker-service.cjs"), action], env=self.env, cwd=str(self.home),
                       check=True, capture_output=True, timeout=120)

    def mcp_argv(self) -> list[str]:
        return ["node", str(self.scripts / "mcp-server.cjs")]

    def hook_ms(self, handler: str, payload: dict) -> float:
        argv = ["node", str(self.scripts / "bun-runner.js"), str(self.scripts / "worker-service.cjs"),
                "hook", "claude-code", handler]
        return timed_run(argv, payload, self.env, self.home)


def timed_run(argv: list[str], payload: dict, env: dict[str, str], cwd: Path) -> float:
    started = time.perf_counter()
    subprocess.run(argv, input=json.dumps(payload).encode(), env=env, cwd=str(cwd), capture_output=True,
                   timeout=120, check=True)
    return (time.perf_counter() - started) * 1000


# ---------- mnemo --------------------------------------------------------------------------


class Mnemo:
    def __init__(self, root: Path, embedder: str, idle_release_s: float):
        from mnemo.config import load_settings, with_overrides

        self.home = root / "mnemo-home"
        self.settings = with_overrides(load_settings({"home": str(self.home)}, environ={}), embedder=embedder,
                                       log_level="warning", vector_idle_release_s=idle_release_s)
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("MNEMO_")}
        self.env.update(MNEMO_HOME=str(self.home), MNEMO_EMBEDDER=embedder, MNEMO_LOG_LEVEL="warning",
                        MNEMO_VECTOR_IDLE_RELEASE_S=str(idle_release_s))

    def up(self) -> None:
        from mnemo.config import ensure_private_dirs
        from mnemo.stack import ensure_stack

        ensure_private_dirs(self.settings)
        if not ensure_stack(self.settings, 180):
            raise RuntimeError("the mnemo stack did not become healthy")

    def down(self) -> None:
        from mnemo.stack import run_down

        run_down(self.settings, None)

    def cli(self, *args: str) -> str:
        done = subprocess.run([sys.executable, "-m", "mnemo.cli", *args], env=self.env, cwd=str(REPO),
                              capture_output=True, text=True, timeout=3600)
        if done.returncode != 0:
            raise RuntimeError(f"mnemo {args[0]}: {done.stderr[-500:]}")
        return done.stdout

    def wait_for_vectors(self, timeout_s: float) -> float:
        """Seconds until the vector index has caught up with the store (polled, no sleep guesses)."""
        started = time.perf_counter()
        while time.perf_counter() - started < timeout_s:
            vector = json.loads(self.cli("stats", "--json")).get("vector") or {}
            if vector.get("lag") == 0:
                return time.perf_counter() - started
            time.sleep(1.0)
        raise RuntimeError(f"vector lag did not reach 0 within {timeout_s:.0f} s")

    def wait_model_released(self, timeout_s: float) -> float:
        """Seconds until vector_svc reports its model let go (Status.model_loaded false)."""
        from mnemo.grpc_client import connect
        from mnemo.v1 import vector_pb2, vector_pb2_grpc

        client = connect(self.settings, "vector", vector_pb2_grpc.VectorServiceStub)
        started = time.perf_counter()
        try:
            while client.stub.Status(vector_pb2.VectorStatusRequest(), timeout=10).model_loaded:
                if time.perf_counter() - started > timeout_s:
                    raise RuntimeError(f"vector_svc kept its model for {timeout_s:.0f} s")
                time.sleep(0.5)
        finally:
            client.close()
        return time.perf_counter() - started

    def vector_off(self) -> None:
        """From now on the stack runs without vector_svc (`vector = "off"`: full-text search only)."""
        from mnemo.config import with_overrides

        self.settings = with_overrides(self.settings, vector="off")
        self.env["MNEMO_VECTOR"] = "off"

    def mcp_argv(self) -> list[str]:
        return [sys.executable, "-m", "mnemo.cli", "mcp"]

    def hook_ms(self, event: str, payload: dict) -> float:
        return timed_run([sys.executable, "-m", "mnemo.cli", "hook", event], payload, self.env, REPO)


# ---------- report -------------------------------------------------------------------------


def p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))] * 1000


def ratio(ours: float, theirs: float) -> str:
    return f"{ours / theirs:.2f}x" if theirs else "n/a"


def tools_size(listed: dict) -> tuple[int, int]:
    """(tool count, chars of the tools array as JSON): what every session pays in context."""
    return len(listed["tools"]), len(json.dumps(listed["tools"]))


def search_rows(cm: StdioPeer, mn: StdioPeer, queries: list[str],
                mnemo_tools: tuple[str, ...] = ("search", "mem_search")) -> dict[str, list[float]]:
    calls = {"claude-mem search": (cm, "search", {"limit": 20}),
             **{f"mnemo {tool}": (mn, tool, {"limit": 20}) for tool in mnemo_tools}}
    times: dict[str, list[float]] = {name: [] for name in calls}
    for q in queries[:WARM_QUERIES]:  # warm both sides alike
        for peer, tool, extra in calls.values():
            peer.call(tool, {"query": q, **extra})
    for i, q in enumerate(queries):
        names = list(calls)[i % len(calls):] + list(calls)[:i % len(calls)]  # rotate who goes first
        for name in names:
            peer, tool, extra = calls[name]
            started = time.perf_counter()
            peer.call(tool, {"query": q, **extra})
            times[name].append(time.perf_counter() - started)
    return times


def hook_rows(cm: ClaudeMem, mn: Mnemo, runs: int) -> dict[str, tuple[list[float], list[float]]]:
    rows: dict[str, tuple[list[float], list[float]]] = {"UserPromptSubmit": ([], []), "PostToolUse": ([], [])}
    for run in range(runs):
        base = {"session_id": f"peer-hook-{run}", "cwd": str(REPO), "transcript_path": ""}
        prompt = {**base, "hook_event_name": "UserPromptSubmit", "prompt": "why does the login redirect loop?"}
        tool = {**base, "hook_event_name": "PostToolUse", "tool_name": "Read", "tool_use_id": f"t{run}",
                "tool_input": {"file_path": str(REPO / "README.md")}, "tool_response": {"content": "x"}}
        rows["UserPromptSubmit"][0].append(cm.hook_ms("session-init", prompt))
        rows["UserPromptSubmit"][1].append(mn.hook_ms("UserPromptSubmit", prompt))
        rows["PostToolUse"][0].append(cm.hook_ms("observation", tool))
        rows["PostToolUse"][1].append(mn.hook_ms("PostToolUse", tool))
    return rows


def print_table(rows: list[tuple[str, str, str, str]], opts: argparse.Namespace) -> None:
    print()
    print("| figure | claude-mem | mnemo | mnemo / claude-mem |\n|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    load = os.getloadavg()
    print(f"\n{opts.observations} observations, {opts.queries} queries interleaved, embedder {opts.embedder}, "
          f"{os.cpu_count()} CPUs, load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")


def measure(cm: ClaudeMem, mn: Mnemo, opts: argparse.Namespace) -> list[tuple[str, str, str, str]]:
    rows = []
    cm.worker("start")  # creates claude-mem's database with its own schema
    cm.worker("stop")
    written = generate_corpus(cm.data / "claude-mem.db", opts.observations)
    cm.worker("start")
    mn.up()
    started = time.perf_counter()
    mn.cli("import", str(cm.data / "claude-mem.db"))
    rate = written / (time.perf_counter() - started)
    indexed_s = mn.wait_for_vectors(opts.index_timeout)
    rows.append(("import of the corpus database", "-", f"{rate:,.0f} records/s ({written:,} records); "
                 f"vectors caught up {indexed_s:.0f} s later", "-"))

    starts: dict[str, list[float]] = {"cm": [], "mn": []}
    listed: dict[str, dict] = {}
    for _ in range(opts.starts):
        for key, side in (("cm", cm), ("mn", mn)):
            elapsed, listed[key] = cold_start(side.mcp_argv(), side.env, side.home if key == "cm" else REPO)
            starts[key].append(elapsed)
    c, m = statistics.median(starts["cm"]), statistics.median(starts["mn"])
    rows.append(("cold start to tools/list p50", f"{c * 1000:.0f} ms", f"{m * 1000:.0f} ms", ratio(m, c)))
    (cn, cc), (mc, mchars) = tools_size(listed["cm"]), tools_size(listed["mn"])
    rows.append(("tool definitions (tools/list JSON)", f"{cn} tools, {cc:,} chars (~{cc // 4:,} tokens)",
                 f"{mc} tools, {mchars:,} chars (~{mchars // 4:,} tokens)", ratio(mchars, cc)))

    cm_peer, mn_peer = StdioPeer(cm.mcp_argv(), cm.env, cm.home), StdioPeer(mn.mcp_argv(), mn.env, REPO)
    try:
        cm_peer.open()
        mn_peer.open()
        cpu_before = side_cpu_s(str(cm.home)), side_cpu_s(str(mn.home))
        times = search_rows(cm_peer, mn_peer, make_queries(opts.queries))
        cm_cpu, mn_cpu = (side_cpu_s(str(cm.home)) - cpu_before[0]), (side_cpu_s(str(mn.home)) - cpu_before[1])
        theirs = times["claude-mem search"]
        for name in ("mnemo search", "mnemo mem_search"):
            rows.append((f"MCP {name.split()[1]} p50 / p95 (hybrid), {opts.observations:,}",
                         f"{p(theirs, .5):.1f} / {p(theirs, .95):.1f} ms (full-text)",
                         f"{p(times[name], .5):.1f} / {p(times[name], .95):.1f} ms",
                         ratio(p(times[name], .5), p(theirs, .5))))
        cm_calls = len(theirs) + WARM_QUERIES
        mn_calls = len(times["mnemo search"]) + len(times["mnemo mem_search"]) + 2 * WARM_QUERIES
        cm_ms, mn_ms = cm_cpu * 1000 / cm_calls, mn_cpu * 1000 / mn_calls
        rows.append(("CPU time per search, every process of the side (mnemo: search and mem_search)",
                     f"{cm_ms:.1f} ms", f"{mn_ms:.1f} ms", ratio(mn_ms, cm_ms)))
        cm_rss, mn_rss = side_rss_mib(str(cm.home)), side_rss_mib(str(mn.home))
        rows.append(("idle RSS of the whole stack after the searches", f"{cm_rss:.0f} MiB", f"{mn_rss:.0f} MiB",
                     ratio(mn_rss, cm_rss)))
        if opts.embedder != "hash":  # the hash embedder has no model to let go
            rows += released_rows(cm, mn, mn_peer, opts)
    finally:
        cm_peer.close()
        mn_peer.close()
    rows += fulltext_rows(cm, mn, opts)
    rows.append(("MCP search p50 at 1k / 10k / 100k", "n/a", "n/a", "run again with --observations 1000 / 100000"))
    for name, (theirs_h, ours_h) in hook_rows(cm, mn, opts.hook_runs).items():
        c, m = statistics.median(theirs_h), statistics.median(ours_h)
        rows.append((f"hook {name} p50", f"{c:.0f} ms", f"{m:.0f} ms", ratio(m, c)))
    return rows


def released_rows(cm: ClaudeMem, mn: Mnemo, mn_peer: StdioPeer,
                  opts: argparse.Namespace) -> list[tuple[str, str, str, str]]:
    """Idle RSS once vector_svc has let its model go, and the first search after that."""
    waited = mn.wait_model_released(opts.idle_release * 3 + 60)
    cm_rss, mn_rss = side_rss_mib(str(cm.home)), side_rss_mib(str(mn.home))
    started = time.perf_counter()
    mn_peer.call("search", {"query": "a question nobody asked before the pause", "limit": 20})
    reload_ms = (time.perf_counter() - started) * 1000
    return [(f"idle RSS once the model is let go ({opts.idle_release:g} s unused; {waited:.0f} s after the searches)",
             f"{cm_rss:.0f} MiB", f"{mn_rss:.0f} MiB", ratio(mn_rss, cm_rss)),
            ("MCP search right after that (loads the model again)", "-", f"{reload_ms:.0f} ms", "-")]


def fulltext_rows(cm: ClaudeMem, mn: Mnemo, opts: argparse.Namespace) -> list[tuple[str, str, str, str]]:
    """mnemo restarted with `vector = "off"` (no vector_svc), against claude-mem again in the same way."""
    mn.down()
    mn.vector_off()
    mn.up()
    cm_peer, mn_peer = StdioPeer(cm.mcp_argv(), cm.env, cm.home), StdioPeer(mn.mcp_argv(), mn.env, REPO)
    try:
        cm_peer.open()
        mn_peer.open()
        times = search_rows(cm_peer, mn_peer, make_queries(opts.queries), mnemo_tools=("search",))
        theirs, ours = times["claude-mem search"], times["mnemo search"]
        cm_rss, mn_rss = side_rss_mib(str(cm.home)), side_rss_mib(str(mn.home))
    finally:
        cm_peer.close()
        mn_peer.close()
    return [(f"MCP search p50 / p95, mnemo full-text only (`vector = \"off\"`), {opts.observations:,}",
             f"{p(theirs, .5):.1f} / {p(theirs, .95):.1f} ms", f"{p(ours, .5):.1f} / {p(ours, .95):.1f} ms",
             ratio(p(ours, .5), p(theirs, .5))),
            ("idle RSS, mnemo full-text only", f"{cm_rss:.0f} MiB", f"{mn_rss:.0f} MiB", ratio(mn_rss, cm_rss))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--observations", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--starts", type=int, default=7)
    parser.add_argument("--hook-runs", type=int, default=5)
    parser.add_argument("--embedder", default="minilm-int8", help="mnemo's embedder (hash: no model)")
    parser.add_argument("--index-timeout", type=float, default=3600)
    parser.add_argument("--idle-release", type=float, default=30.0,
                        help="mnemo's vector_idle_release_s for this run (seconds)")
    parser.add_argument("--keep", action="store_true", help="keep the temp dir (prints its path)")
    opts = parser.parse_args()
    if not (shutil.which("npm") and shutil.which("node")):
        print("bench/peer.py: skipped: npm and node are needed to install and run claude-mem", file=sys.stderr)
        return 0
    sys.path.insert(0, str(REPO))
    root = Path(tempfile.mkdtemp(prefix="mnemo-peer-"))
    stub = llm_stub()
    cm = ClaudeMem(root, f"http://127.0.0.1:{stub.server_address[1]}")
    mn = Mnemo(root, opts.embedder, opts.idle_release)
    try:
        print(f"installing bun and {CLAUDE_MEM} into {root} ...", flush=True)
        cm.install()
        rows = measure(cm, mn, opts)
    finally:
        for stop in (lambda: cm.worker("stop"), mn.down, stub.shutdown):
            try:
                stop()
            except Exception as err:  # a failed stop must not hide the others or the table
                print(f"cleanup: {err}", file=sys.stderr)
        if not opts.keep:
            shutil.rmtree(root, ignore_errors=True)
    print_table(rows, opts)
    return 0


if __name__ == "__main__":
    sys.exit(main())
