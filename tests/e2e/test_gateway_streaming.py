"""Long corpus jobs through the real gateway: progress relayed, heartbeats while the job is
silent, the final result without a progress token, and cancellation reaching the service
when the client cancels or goes away. The job itself is a fault-injecting fake (slow on
purpose); the gateway, the SDK client and gRPC are real.
"""

from __future__ import annotations

import json
import time

import anyio
import grpc
import pytest

from tests.service.gateway.inprocess import gateway_session as mcp_session
from tests.service.gateway.mcp_support import (
    FaultySearch,
    gateway_env,
    kill_gateway,
    result_text,
    spawn_gateway,
    start_fake_search,
)

pytestmark = pytest.mark.e2e

HEARTBEAT_S = 0.2
CAPS = ("search", "corpus")


def fake_stack(settings, servicer):
    address = f"unix:{settings.run_dir / 'fake-search.sock'}"
    handle = start_fake_search(servicer, address)
    env = gateway_env(settings, MNEMO_SEARCH_ADDR=address, MNEMO_STORE_ADDR=address, MNEMO_VECTOR_ADDR=address,
                      MNEMO_HEARTBEAT_INTERVAL_S=str(HEARTBEAT_S))
    return handle, env


def test_progress_heartbeats_and_the_result_without_a_token(settings):
    servicer = FaultySearch(capabilities=CAPS, prime_quiet_s=1.2, prime_steps=4, prime_step_s=0.05)
    handle, env = fake_stack(settings, servicer)
    received: list[tuple[float, float, float | None, str | None]] = []

    async def on_progress(progress, total, message):
        received.append((time.monotonic(), progress, total, message))

    async def scenario():
        async with mcp_session(env) as session:
            started = time.monotonic()
            result = await session.call_tool("prime_corpus", {"name": "notes"}, progress_callback=on_progress)
            assert not result.is_error, result_text(result)
            assert result_text(result) == "Corpus notes primed: 4 chunks."
            # A client that sent no progress token still gets the final result.
            servicer.prime_quiet_s = 0.5
            plain = await session.call_tool("reprime_corpus", {"name": "notes"})
            assert result_text(plain) == "Corpus notes primed: 4 chunks."
            return started

    try:
        started = anyio.run(scenario)
    finally:
        handle.stop(0)
    heartbeats = [r for r in received if r[3] and r[3].startswith("working")]
    assert len(heartbeats) >= 3, received  # the job was silent for 1.2 s; one every 0.2 s
    times = [started] + [r[0] for r in received]
    assert max(b - a for a, b in zip(times, times[1:], strict=False)) < HEARTBEAT_S * 3 + 0.3  # slack for CI
    values = [r[1] for r in received]
    assert values == sorted(values) and len(set(values)) == len(values)  # strictly increasing
    assert received[-1][1] == received[-1][2] == 4.0
    assert [r[3] for r in received if r[3] and r[3].startswith("chunk")][-1] == "chunk 4/4"
    assert servicer.prime_calls == 2


def test_a_failed_job_keeps_its_status_code_in_the_tool_result(settings):
    """The job's stream ends with UNAVAILABLE after one event: the result says UNAVAILABLE and what to do."""
    servicer = FaultySearch(capabilities=CAPS, prime_fails_with=(grpc.StatusCode.UNAVAILABLE,
                                                                 "vector_svc is not reachable"))
    handle, env = fake_stack(settings, servicer)
    received: list[str | None] = []

    async def on_progress(progress, total, message):
        received.append(message)

    async def scenario():
        async with mcp_session(env) as session:
            return await session.call_tool("prime_corpus", {"name": "notes"}, progress_callback=on_progress)

    try:
        result = anyio.run(scenario)
    finally:
        handle.stop(0)
    assert result.is_error
    assert result_text(result).startswith("UNAVAILABLE: vector_svc is not reachable. The memory service")
    assert "chunk 1/3" in received and servicer.prime_calls == 1  # seen by the service: not sent again


def test_client_cancellation_cancels_the_job(settings):
    servicer = FaultySearch(capabilities=CAPS, prime_quiet_s=60.0)
    handle, env = fake_stack(settings, servicer)

    async def scenario():
        async with mcp_session(env) as session:
            with anyio.move_on_after(20):
                async with anyio.create_task_group() as tg:
                    tg.start_soon(session.call_tool, "prime_corpus", {"name": "notes"})
                    assert await anyio.to_thread.run_sync(servicer.prime_started.wait, 15.0)
                    tg.cancel_scope.cancel()  # the SDK sends notifications/cancelled
            assert await anyio.to_thread.run_sync(servicer.prime_cancelled.wait, 5.0)
            # The gateway is still serving after the cancellation.
            assert (await session.list_tools()).tools

    try:
        anyio.run(scenario)
    finally:
        handle.stop(0)


def _frame(obj) -> bytes:
    return (json.dumps(obj) + "\n").encode()


def test_losing_the_client_cancels_the_job_and_exits_with_clean_stdout(settings):
    """A raw client: stdout is parsed line by line (JSON-RPC only), then stdin closes mid-job."""
    servicer = FaultySearch(capabilities=CAPS, prime_quiet_s=60.0)
    handle, env = fake_stack(settings, servicer)
    proc = spawn_gateway(env)
    try:
        proc.stdin.write(_frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}}))
        proc.stdin.flush()
        first = json.loads(proc.stdout.readline())
        assert first["id"] == 1 and first["result"]["serverInfo"]["name"] == "mnemo"
        proc.stdin.write(_frame({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        proc.stdin.write(_frame({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "prime_corpus", "arguments": {"name": "notes"}, "_meta": {"progressToken": "p1"}}}))
        proc.stdin.flush()
        assert servicer.prime_started.wait(15.0)
        heartbeat = json.loads(proc.stdout.readline())
        assert heartbeat["method"] == "notifications/progress" and heartbeat["params"]["progressToken"] == "p1"
        proc.stdin.close()  # the host went away
        assert proc.wait(10) == 0
        assert servicer.prime_cancelled.wait(5.0)
        rest = proc.stdout.read().decode()
        for line in rest.splitlines():
            frame = json.loads(line)  # every line is a JSON-RPC frame
            assert frame["jsonrpc"] == "2.0"
    finally:
        kill_gateway(proc)
        handle.stop(0)
