"""Spec 000 conformance over MCP: the real SDK client and the gateway's server in process
(tests/service/gateway/inprocess.py) over real services.

Each test is one deviation an audit found, closed: the tool list follows the running stack
(and says so with notifications/tools/list_changed), the legacy tools accept parameters of
older clients, string-or-number ids, read-only annotations counted, the code tools wired,
operators typed in plain text matched as text (`Baz*` a prefix, `NOT` a word), and a remote
search_addr that nothing listens on reported as what it is.
"""

from __future__ import annotations

import re
import socket
from pathlib import Path

import anyio
import pytest

from gateway.tools import TOOLS
from tests.conftest import add_observation, start_service
from tests.service.gateway.inprocess import gateway_session as mcp_session
from tests.service.gateway.mcp_support import gateway_env, result_text

pytestmark = pytest.mark.e2e

LIST_CHANGED = "notifications/tools/list_changed"
EMBEDDING_TOOLS = {"prime_corpus", "reprime_corpus", "query_corpus"}


class Notifications:
    """Collects the methods of the notifications a session receives; `wait` polls for one."""

    def __init__(self) -> None:
        self.methods: list[str] = []

    async def __call__(self, message) -> None:
        method = getattr(message, "method", None)
        if method:
            self.methods.append(method)

    async def wait(self, method: str, count: int, timeout: float) -> None:
        with anyio.fail_after(timeout):
            while self.methods.count(method) < count:
                await anyio.sleep(0.05)


def _remote_env(settings, **extra: str) -> dict[str, str]:
    """The gateway pointed at search_svc's socket as an explicit address: it then starts no
    local stack of its own, so only the services the test runs are up."""
    return gateway_env(settings, MNEMO_SEARCH_ADDR=settings.address("search"), **extra)


def test_the_tool_list_follows_vector_svc_and_says_when_it_changed(settings, store_server):
    vector, vector_stop = start_service("vector", settings)
    search, search_stop = start_service("search", settings)
    notes = Notifications()

    async def scenario() -> None:
        nonlocal vector, vector_stop
        env = _remote_env(settings, MNEMO_CAPABILITIES_CHECK_S="0.2")
        async with mcp_session(env, message_handler=notes) as session:
            tools_capability = session.initialize_result.capabilities.tools
            assert tools_capability is not None and tools_capability.list_changed is True
            names = {tool.name for tool in (await session.list_tools()).tools}
            assert names >= EMBEDDING_TOOLS

            vector.stop(0.5)
            vector_stop()
            await notes.wait(LIST_CHANGED, 1, timeout=30)
            names = {tool.name for tool in (await session.list_tools()).tools}
            assert not EMBEDDING_TOOLS & names, "tools that need vector_svc are still listed"
            assert {"mem_search", "get_tool_uses", "list_corpora", "build_corpus", "smart_outline"} <= names

            vector, vector_stop = start_service("vector", settings)
            await notes.wait(LIST_CHANGED, 2, timeout=30)
            names = {tool.name for tool in (await session.list_tools()).tools}
            assert names >= EMBEDDING_TOOLS

    try:
        anyio.run(scenario)
    finally:
        search.stop(0.5)
        search_stop()
        vector.stop(0.5)
        vector_stop()


def test_default_profile_lists_16_tools_with_read_only_hints_and_serves_code_tools(stack, store_stub, tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "shapes.py").write_text(
        "class Circle:\n    def area(self):\n        return 3.14 * self.r ** 2\n\n\ndef unit():\n    return Circle()\n"
    )

    async def scenario() -> None:
        async with mcp_session(gateway_env(stack), cwd=tmp_path) as session:
            tools = (await session.list_tools()).tools
            assert len(tools) == 19 == len(TOOLS)
            read_only = {t.name for t in tools if t.annotations and t.annotations.read_only_hint}
            assert len(read_only) == 12 and {"smart_search", "smart_outline", "smart_unfold"} <= read_only
            writes = {t.name for t in tools} - read_only
            assert writes == {"save_memory", "work_state_write", "build_corpus", "prime_corpus", "query_corpus",
                              "rebuild_corpus", "reprime_corpus"}
            assert all(t.annotations is None or t.annotations.read_only_hint is not True
                       for t in tools if t.name in writes)

            outline = await session.call_tool("smart_outline", {"file_path": "pkg/shapes.py"})
            assert not outline.is_error, result_text(outline)
            assert outline.structured_content is None  # the model reads the text (issue 33)
            assert all(f" {name}" in result_text(outline) for name in ("Circle", "area", "unit"))
            unfolded = await session.call_tool("smart_unfold", {"file_path": "pkg/shapes.py",
                                                                "symbol_name": "Circle.area"})
            assert "3.14 * self.r ** 2" in result_text(unfolded)
            found = await session.call_tool("smart_search", {"query": "circle"})
            assert "class Circle" in result_text(found)
            outside = await session.call_tool("smart_outline", {"file_path": "../etc/passwd"})
            assert outside.is_error and "file_path" in result_text(outside)

    anyio.run(scenario)


def test_legacy_tools_ignore_unknown_arguments_and_name_them(stack, store_stub):
    oid = add_observation(store_stub, project="relics", title="Legacy callers still pass old parameters",
                         narrative="Older clients send someOldParam with every search call.")

    async def scenario() -> None:
        async with mcp_session(gateway_env(stack)) as session:
            found = await session.call_tool("search", {"query": "old parameters", "someOldParam": 1})
            assert not found.is_error, result_text(found)
            assert f"| #{oid} |" in result_text(found)
            assert result_text(found).rstrip().endswith("Ignored unknown arguments: 'someOldParam'.")
            around = await session.call_tool("timeline", {"anchor": oid, "format": "full"})
            assert not around.is_error and "Ignored unknown arguments: 'format'." in result_text(around)
            details = await session.call_tool("get_observations", {"ids": [oid], "detail": "all"})
            assert not details.is_error and "'detail'" in result_text(details)
            # mem_search stays locked down.
            strict = await session.call_tool("mem_search", {"query": "old", "someOldParam": 1})
            assert strict.is_error and result_text(strict).startswith("INVALID_ARGUMENT: someOldParam: ")

    anyio.run(scenario)


def test_selected_ids_take_numbers_and_a_trailing_newline_is_no_id(stack, store_stub):
    oid = add_observation(store_stub, project="ids", title="Numbers as ids", narrative="The selected id is 4.0.")

    async def scenario() -> None:
        async with mcp_session(gateway_env(stack)) as session:
            index = await session.call_tool("mem_search", {"query": "numbers as ids", "project": "ids"})
            assert not index.is_error, result_text(index)
            token = re.search(r'continuation="(ms_[A-Za-z0-9_-]{24})"', result_text(index)).group(1)
            picked = await session.call_tool("mem_search", {"continuation": token, "selectedIds": [float(oid)],
                                                            "query": "numbers as ids", "project": "ids"})
            assert not picked.is_error, result_text(picked)
            assert f"## #{oid} · " in result_text(picked)
            newline = await session.call_tool("mem_search", {"continuation": token, "selectedIds": [f"#{oid}\n"],
                                                             "query": "numbers as ids", "project": "ids"})
            assert newline.is_error and "selectedIds" in result_text(newline)

    anyio.run(scenario)


def test_operators_typed_in_plain_text_are_matched_as_text(settings, store_server, store_stub):
    """No vector_svc here: the rows are what the lexical path matched, nothing a neighbour adds."""
    bazooka = add_observation(store_stub, project="literal", title="Bazooka loader", narrative="Loads bundles.")
    gate = add_observation(store_stub, project="literal", title="The NOT gate inverts its input",
                           narrative="Logic cell.")
    latch = add_observation(store_stub, project="literal", title="A latch holds its state", narrative="Logic cell.")
    search, search_stop = start_service("search", settings)

    async def rows(session, query: str) -> list[str]:
        found = await session.call_tool("search", {"query": query, "project": "literal"})
        assert not found.is_error, result_text(found)
        return re.findall(r"^\| (#\d+) \|", result_text(found), flags=re.MULTILINE)

    async def scenario() -> None:
        async with mcp_session(_remote_env(settings)) as session:
            assert await rows(session, "Baz") == []
            assert await rows(session, "Baz*") == [f"#{bazooka}"]  # a prefix built by mnemo, not FTS5 syntax
            assert set(await rows(session, "NOT latch")) == {f"#{gate}", f"#{latch}"}  # NOT is a word here
            assert await rows(session, "NEAR(Bazooka loader)") == [f"#{bazooka}"]

    try:
        anyio.run(scenario)
    finally:
        search.stop(0.5)
        search_stop()


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_a_remote_search_addr_nobody_listens_on_is_reported_as_refused(settings):
    address = f"127.0.0.1:{_closed_port()}"
    env = gateway_env(settings, MNEMO_SEARCH_ADDR=address)

    async def scenario() -> None:
        async with mcp_session(env) as session:
            with anyio.fail_after(15):  # at once, not after a 60 s wait for a stack it never starts
                result = await session.call_tool("search", {"query": "anything"})
            text = result_text(result)
            assert result.is_error and text.startswith("UNAVAILABLE: ")
            assert address in text and "refused" in text and "search_addr" in text
            assert "did not become healthy" not in text

    anyio.run(scenario)
    assert not (Path(settings.run_dir) / "supervisor.pid").exists()
