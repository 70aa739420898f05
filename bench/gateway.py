"""Gateway benchmark: cold start and per-call overhead, each next to a baseline measured in the same run.

1. Cold start: spawn -> first tools/list answered, for `mnemo mcp` and for a bare low-level
   MCP SDK server with one tool (target: ratio <= 1.2). The home's first gateway is timed
   alone (its services are already up, but nothing of the gateway ran there yet), then the
   starts every later session makes; each answers its handshake from the tool table.
2. Per call: `search` through MCP (SDK client -> gateway -> search_svc) next to the same
   SearchService.Search made directly over gRPC (target: p50 ratio <= 1.5).
3. Context cost: the tools array of the gateway's tools/list reply, as the host receives it
   (JSON, measured as bench/peer/run.py measures claude-mem's), per tool and in total, next to
   claude-mem 13.25.3's 15-tool list (9,217 chars, issue 18; bench/peer/run.py measures it live).

Runs against a private stack in a temp MNEMO_HOME (hash embedder), stopped at the end.
`--tools-only` prints table 3 alone, from the default profile's table with every capability
reported (no stack; what a healthy stack advertises), and each profile's total.
Usage: .venv/bin/python -m bench.gateway [--starts 7] [--calls 200] [--tools-only]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import TYPE_CHECKING

from bench.harness import REPO, mcp_session, percentile, print_load_average

if TYPE_CHECKING:
    from mnemo.config import Settings

BARE_SERVER = textwrap.dedent('''
    import anyio
    import mcp_types as types
    from mcp.server.lowlevel import Server
    from mcp.server.stdio import stdio_server

    async def list_tools(ctx, params):
        return types.ListToolsResult(tools=[types.Tool(name="echo", description="Echo the text.",
            input_schema={"type": "object", "properties": {"text": {"type": "string"}}})])

    async def call_tool(ctx, params):
        return types.CallToolResult(content=[types.TextContent(type="text", text=str(params.arguments))])

    async def main():
        server = Server("bare", version="0", on_list_tools=list_tools, on_call_tool=call_tool)
        async with stdio_server() as (r, w):
            await server.run(r, w, server.create_initialization_options())

    anyio.run(main)
''')

# claude-mem 13.25.3's tools/list (15 tools) as bench/peer/run.py measured it (issue 18).
CLAUDE_MEM_TOOLS_LIST_CHARS = 9_217
TOOLS_LIST_MAX_CHARS = 10_000  # issue 33: the default profile's 19 tools on the wire

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}}


def _frame(obj: object) -> bytes:
    return (json.dumps(obj) + "\n").encode()


def time_to_first_list(argv: list[str], env: dict[str, str]) -> tuple[float, list[dict]]:
    """Seconds from spawn to the tools/list reply (raw JSON-RPC: no client-side imports counted),
    and the tools array of that reply as received."""
    started = time.perf_counter()
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            env=env, cwd=str(REPO))
    assert proc.stdin is not None and proc.stdout is not None  # both are pipes
    proc.stdin.write(_frame(INIT))
    proc.stdin.write(_frame({"jsonrpc": "2.0", "method": "notifications/initialized"}))
    proc.stdin.write(_frame({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}))
    proc.stdin.flush()
    while True:
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError(f"{argv} exited before answering tools/list")
        reply = json.loads(line)
        if reply.get("id") == 2:
            break
    elapsed = time.perf_counter() - started
    proc.stdin.close()
    proc.wait(10)
    proc.stdout.close()
    return elapsed, reply["result"]["tools"]


def print_tools_cost(tools: list[dict]) -> None:
    """Chars and ~tokens (chars / 4) of each tool definition and of the whole list, next to claude-mem's."""
    print(f"{'tool':<24} {'chars':>7} {'~tokens':>8} {'output schema':>14}")
    for tool in tools:
        chars = len(json.dumps(tool))
        output = len(json.dumps(tool["outputSchema"])) if "outputSchema" in tool else 0
        print(f"{tool['name']:<24} {chars:>7,} {chars // 4:>8,} {output:>14,}")
    total = len(json.dumps(tools))
    wire = wire_chars(tools)
    print(f"{'whole tools array':<24} {total:>7,} {total // 4:>8,}")
    print(f"\n{'measure':<44} {'mnemo':>10} {'claude-mem':>10} {'ratio':>7} {'target':>7}")
    print(f"{f'tools/list chars ({len(tools)} vs 15 tools)':<44} {total:>10,} {CLAUDE_MEM_TOOLS_LIST_CHARS:>10,} "
          f"{total / CLAUDE_MEM_TOOLS_LIST_CHARS:>7.2f} {'-':>7}")
    print(f"{'tools/list result on the wire (host receives)':<44} {wire:>10,} {'':>10} {'':>7} "
          f"{f'<={TOOLS_LIST_MAX_CHARS:,}':>7}")


def wire_chars(tools: list[dict]) -> int:
    """The tools/list result as the gateway writes it on stdout (compact JSON, UTF-8 as is):
    what the host receives (issue 33's budget)."""
    return len(json.dumps({"tools": tools}, ensure_ascii=False, separators=(",", ":")))


def print_profiles_cost() -> None:
    """The whole tools array of each profile (setting mcp_profile), every capability reported."""
    from gateway.server import host_view
    from gateway.tools import PROFILES

    print()
    for name, specs in PROFILES.items():
        total = len(json.dumps(host_view(specs)))
        print(f"{f'profile {name} ({len(specs)} tools)':<44} {total:>10,} {total / CLAUDE_MEM_TOOLS_LIST_CHARS:>7.2f}x")


def default_profile_tools() -> list[dict]:
    """The default profile's tools/list with every capability reported, as the gateway sends it."""
    from gateway.server import host_view
    from gateway.tools import TOOLS

    return host_view(TOOLS)


async def mcp_search_latencies(env: dict[str, str], queries: list[str]) -> list[float]:
    out = []
    async with mcp_session(env) as session:
        await session.list_tools()
        for q in queries[:10]:  # warm up
            await session.call_tool("search", {"query": q, "limit": 10})
        for q in queries:
            started = time.perf_counter()
            result = await session.call_tool("search", {"query": q, "limit": 10})
            out.append(time.perf_counter() - started)
            assert not result.is_error, result.content
    return out


def grpc_search_latencies(settings: Settings, queries: list[str]) -> list[float]:
    from mnemo.grpc_client import open_channel
    from mnemo.v1 import search_pb2, search_pb2_grpc

    channel = open_channel(settings.address("search"))
    stub = search_pb2_grpc.SearchServiceStub(channel)
    out = []
    for q in queries[:10]:
        stub.Search(search_pb2.SearchRequest(query=q, limit=10), timeout=10)
    for q in queries:
        started = time.perf_counter()
        stub.Search(search_pb2.SearchRequest(query=q, limit=10), timeout=10)
        out.append(time.perf_counter() - started)
    channel.close()
    return out


def seed(settings: Settings, n: int) -> None:
    from mnemo.grpc_client import open_channel
    from mnemo.v1 import search_pb2, search_pb2_grpc

    channel = open_channel(settings.address("search"))
    stub = search_pb2_grpc.SearchServiceStub(channel)
    topics = ["deploy", "timeout", "parser", "cache", "migration", "auth token", "retry", "socket", "index", "build"]
    for i in range(n):
        a, b = topics[i % len(topics)], topics[(i * 7 + 3) % len(topics)]
        stub.SaveMemory(search_pb2.SaveMemoryRequest(
            text=f"Observation {i}: the {a} step broke because of the {b} setting; fixed by changing it.",
            title=f"{a} vs {b} #{i}", project="bench"), timeout=30)
    channel.close()


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--starts", type=int, default=7)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--tools-only", action="store_true", help="print the context-cost table alone (no stack)")
    opts = parser.parse_args()
    if opts.tools_only:
        print_tools_cost(default_profile_tools())
        print_profiles_cost()
        print_load_average()
        return 0

    from mnemo.config import load_settings, with_overrides
    from mnemo.logs import configure_logging
    from mnemo.stack import ensure_stack, run_down

    configure_logging("warning")

    home = Path(tempfile.mkdtemp(prefix="mnemo-gwbench-"))
    settings = with_overrides(load_settings({"home": str(home)}, environ={}), embedder="hash", log_level="warning")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MNEMO_")}
    env.update(MNEMO_HOME=str(home), MNEMO_EMBEDDER="hash", MNEMO_LOG_LEVEL="warning")
    bare = home / "bare_server.py"
    bare.write_text(BARE_SERVER)
    try:
        print(f"starting a private stack in {home} ...", flush=True)
        if not ensure_stack(settings, 120):
            print("the stack did not become healthy", file=sys.stderr)
            return 1
        seed(settings, 300)

        gateway_argv = [sys.executable, "-m", "mnemo.cli", "mcp"]
        first_start = time_to_first_list(gateway_argv, env)[0]
        gateway_starts, bare_starts = [], []
        listed: list[dict] = []
        for _ in range(opts.starts):  # interleaved so machine noise hits both alike
            bare_starts.append(time_to_first_list([sys.executable, str(bare)], env)[0])
            elapsed, listed = time_to_first_list(gateway_argv, env)
            gateway_starts.append(elapsed)

        words = ["deploy", "timeout", "parser", "cache", "migration", "token", "retry", "socket", "index", "build"]
        queries = [f"{words[i % 10]} {words[(i * 3 + 1) % 10]}" for i in range(opts.calls)]
        direct = grpc_search_latencies(settings, queries)
        through_mcp = asyncio.run(mcp_search_latencies(env, queries))
    finally:
        run_down(settings, None)
        shutil.rmtree(home, ignore_errors=True)

    cold_g, cold_b = statistics.median(gateway_starts), statistics.median(bare_starts)
    p50_m, p50_d = percentile(through_mcp, 0.5), percentile(direct, 0.5)
    p95_m, p95_d = percentile(through_mcp, 0.95), percentile(direct, 0.95)
    print()
    print(f"{'measure':<44} {'mnemo':>10} {'baseline':>10} {'ratio':>7} {'target':>7}")
    print(f"{'cold start -> first tools/list, median (s)':<44} {cold_g:>10.3f} {cold_b:>10.3f} "
          f"{cold_g / cold_b:>7.2f} {'<=1.2':>7}")
    print(f"{'  first start in a new home (s)':<44} {first_start:>10.3f} {cold_b:>10.3f} "
          f"{first_start / cold_b:>7.2f} {'':>7}")
    print(f"{'search per call p50 (ms): MCP vs gRPC':<44} {p50_m * 1000:>10.2f} {p50_d * 1000:>10.2f} "
          f"{p50_m / p50_d:>7.2f} {'<=1.5':>7}")
    print(f"{'search per call p95 (ms): MCP vs gRPC':<44} {p95_m * 1000:>10.2f} {p95_d * 1000:>10.2f} "
          f"{p95_m / p95_d:>7.2f} {'':>7}")
    print(f"\n{opts.starts} cold starts each (interleaved), {opts.calls} calls each; baseline = bare low-level "
          "MCP server with one tool / SearchService.Search over gRPC directly.\n")
    print_tools_cost(listed)
    print_load_average()
    return 0


if __name__ == "__main__":
    sys.exit(main())
