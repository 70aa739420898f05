"""Corpus jobs end to end through the gateway and the real stack: progress with heartbeats
while a slowed embedder works, and a cancelled job recorded as such."""

from __future__ import annotations

import time

import anyio
import pytest

from mnemo.config import with_overrides
from mnemo.v1 import search_pb2
from tests.service.gateway.inprocess import gateway_session as mcp_session
from tests.service.gateway.mcp_support import gateway_env, result_text

pytestmark = [pytest.mark.e2e, pytest.mark.chroma]

HEARTBEAT_S = 0.25


@pytest.fixture
def settings(settings):
    # Fault injection: every embedding batch takes 1.5 s, so priming is silent for a while.
    return with_overrides(settings, embed_delay_ms=1500)


def seed(search_stub, n: int = 12) -> None:
    for i in range(n):
        search_stub.SaveMemory(search_pb2.SaveMemoryRequest(
            text=f"Release step {i}: the deploy pipeline needs the artifact checksum before upload.",
            title=f"Release step {i}", type="discovery", project="shipyard", concepts=["release"]), timeout=10)


def test_prime_streams_progress_and_heartbeats_then_cancel_is_recorded(stack, search_stub):
    caps = set(search_stub.GetCapabilities(search_pb2.GetCapabilitiesRequest()).capabilities)
    if "corpus" not in caps:
        pytest.skip(f"backend reports {sorted(caps)}: corpora not served yet")
    seed(search_stub)
    env = gateway_env(stack, MNEMO_HEARTBEAT_INTERVAL_S=str(HEARTBEAT_S))
    received: list[tuple[float, float, float | None, str | None]] = []

    async def on_progress(progress, total, message):
        received.append((time.monotonic(), progress, total, message))

    async def scenario():
        async with mcp_session(env) as session:
            unknown = await session.call_tool("prime_corpus", {"name": "no-such-corpus"})
            assert unknown.is_error and result_text(unknown).startswith("NOT_FOUND: "), result_text(unknown)
            assert "no-such-corpus" in result_text(unknown)
            built = await session.call_tool("build_corpus", {"name": "releases", "project": "shipyard"})
            assert not built.is_error, result_text(built)
            primed = await session.call_tool("prime_corpus", {"name": "releases"}, progress_callback=on_progress)
            assert not primed.is_error, result_text(primed)
            listed = await session.call_tool("list_corpora", {})
            assert "releases" in result_text(listed) and "primed" in result_text(listed)

            # Cancel a reprime once it has started: the service records the job as cancelled.
            with anyio.move_on_after(60):
                async with anyio.create_task_group() as tg:
                    started = anyio.Event()

                    async def note(progress, total, message):
                        started.set()

                    tg.start_soon(lambda: session.call_tool("reprime_corpus", {"name": "releases"},
                                                            progress_callback=note))
                    await started.wait()
                    tg.cancel_scope.cancel()
            for _ in range(100):
                text = result_text(await session.call_tool("list_corpora", {}))
                if "cancelled" in text:
                    break
                await anyio.sleep(0.1)
            assert "cancelled" in text, text

    anyio.run(scenario)
    assert received, "no progress notification arrived"
    assert sum(1 for r in received if r[3] and r[3].startswith("working")) >= 2, received
    assert received[-1][2] and received[-1][1] == received[-1][2]  # done == total at the end
    values = [r[1] for r in received]
    assert values == sorted(values)
