"""No reply echoes a caller's <private> text (issue 33): search, timeline, smart_search,
get_recent_context and session_start_context quoted the query or the project they were given,
private regions included; query_corpus quoted its question (a unit test below covers the one
gateway boundary every reply passes, the corpus tools included)."""

from __future__ import annotations

import anyio
import pytest

from gateway.core import private_free
from tests.conftest import add_observation
from tests.service.gateway.inprocess import gateway_session as mcp_session
from tests.service.gateway.mcp_support import gateway_env, result_text

pytestmark = pytest.mark.e2e

SECRET = "hunter2-do-not-echo"
PRIVATE = f"<private>{SECRET}</private>"


def test_no_tool_echoes_private_text(stack, store_stub, tmp_path):
    add_observation(store_stub, project="alpha", title="Login redirect loop", narrative="Cookie fix.")
    (tmp_path / "shapes.py").write_text("class Circle:\n    def area(self):\n        return 1\n")
    env = gateway_env(stack, MNEMO_MCP_PROFILE="all", MNEMO_PROJECT_ROOT=str(tmp_path))
    calls = [
        ("search", {"query": f"login {PRIVATE} redirect"}),
        ("timeline", {"query": f"login {PRIVATE} redirect"}),
        ("mem_search", {"query": f"login {PRIVATE} redirect"}),
        ("smart_search", {"query": f"area {PRIVATE}"}),
        ("session_start_context", {"project": f"alpha{PRIVATE}"}),
        ("get_recent_context", {"project": f"{PRIVATE}alpha"}),
        ("search", {"query": f"nothing matches {PRIVATE} zzzqqq"}),
    ]

    async def scenario() -> list[str]:
        async with mcp_session(env, cwd=tmp_path) as session:
            return [result_text(await session.call_tool(tool, arguments)) for tool, arguments in calls]

    for (tool, _), text in zip(calls, anyio.run(scenario), strict=True):
        assert SECRET not in text and "<private>" not in text, (tool, text)


def test_the_gateway_strips_private_regions_from_every_reply():
    """Whatever a service or a local tool writes (query_corpus quotes its question), the reply the
    model receives holds no private region (Gateway.call_tool passes every text through
    private_free); text without one passes unchanged, whitespace too."""
    echo = f'Corpus "notes": 2 passage(s) for "why {PRIVATE} loops"\n'
    assert private_free(echo) == 'Corpus "notes": 2 passage(s) for "why  loops"'
    assert private_free("a < b\n") == "a < b\n" and private_free("plain\n") == "plain\n"
