"""Requests in flight when the client closes stdin finish and are answered before the gateway
exits (issue 33; docs/gateway.md)."""

from __future__ import annotations

import json
import subprocess

import pytest

from tests.service.gateway.mcp_support import (
    GATEWAY_ARGV,
    REPO_ROOT,
    FaultySearch,
    gateway_env,
    kill_gateway,
    start_fake_search,
)

pytestmark = pytest.mark.e2e

IN_FLIGHT = 4


def _frames() -> bytes:
    frames = [{"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "eof", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"}]
    frames += [{"jsonrpc": "2.0", "id": n, "method": "tools/call",
                "params": {"name": "search", "arguments": {"query": f"deploy {n}"}}} for n in range(IN_FLIGHT)]
    return b"".join(json.dumps(frame).encode() + b"\n" for frame in frames)


def test_calls_running_when_stdin_closes_are_answered_with_their_results(settings):
    servicer = FaultySearch(delay_s=1.0)  # each search is still running when EOF is read
    address = f"unix:{settings.run_dir / 'fake-search.sock'}"
    handle = start_fake_search(servicer, address)
    env = gateway_env(settings, MNEMO_SEARCH_ADDR=address, MNEMO_STORE_ADDR=address, MNEMO_VECTOR_ADDR=address)
    proc = subprocess.Popen(GATEWAY_ARGV, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, env=env, cwd=str(REPO_ROOT))
    try:
        out, _ = proc.communicate(_frames(), timeout=60)  # writes every frame, then closes stdin
        replies = {frame["id"]: frame for frame in map(json.loads, out.splitlines()) if "id" in frame}
        assert proc.returncode == 0
        calls = [replies.get(n) for n in range(IN_FLIGHT)]
        assert all(call is not None and "result" in call for call in calls), calls
        assert all(call["result"]["content"][0]["text"] == "too late" for call in calls), calls
    finally:
        kill_gateway(proc)
        handle.stop(0)
