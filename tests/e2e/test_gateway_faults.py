"""Fault injection through the real gateway: a call the service saw is never sent twice."""

from __future__ import annotations

import anyio
import pytest

from gateway.tools import BY_NAME
from tests.service.gateway.inprocess import gateway_session as mcp_session
from tests.service.gateway.mcp_support import FaultySearch, gateway_env, result_text, start_fake_search

pytestmark = pytest.mark.e2e


def test_timeout_in_the_service_is_reported_and_not_retried(settings):
    servicer = FaultySearch(delay_s=1.2)
    address = f"unix:{settings.run_dir / 'fake-search.sock'}"
    handle = start_fake_search(servicer, address)
    # Every service address points at the fake, so the gateway's health check finds a
    # "running stack" and starts nothing.
    env = gateway_env(settings, MNEMO_SEARCH_ADDR=address, MNEMO_STORE_ADDR=address,
                      MNEMO_VECTOR_ADDR=address, MNEMO_RPC_TIMEOUT_S="0.4")

    async def scenario():
        async with mcp_session(env) as session:
            tools = await session.list_tools()
            needs_backend = [t.name for t in tools.tools if BY_NAME[t.name].capability]
            # "search" alone serves only the legacy search, which the default profile lists (spec 000's 19).
            assert needs_backend == ["search", "timeline", "get_observations"]
            result = await session.call_tool("search", {"query": "slow"})
            assert result.is_error
            assert result_text(result).startswith("DEADLINE_EXCEEDED:")
            # Let the service finish the call it saw; nothing may arrive a second time.
            assert await anyio.to_thread.run_sync(servicer.finished.wait, 10.0)
            await anyio.sleep(0.3)
            assert servicer.search_calls == 1

    try:
        anyio.run(scenario)
    finally:
        handle.stop(0)
