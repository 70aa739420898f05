"""The gateway in the server runtime: the real MCP SDK client spawns the real gateway, which
talks to a real team server (store_svc, vector_svc, search_svc on loopback TCP with a
token) and starts nothing local. Under the local runtime the observation_* tools are absent
and refused."""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

import anyio
import pytest

from gateway.observation_tools import SERVER_ONLY
from mnemo.grpc_client import open_channel
from mnemo.v1 import common_pb2, store_pb2, store_pb2_grpc
from tests.conftest import add_observation, processes_of
from tests.server_runtime_support import TeamServer, free_port, write_token_file
from tests.service.gateway.mcp_support import GATEWAY_ARGV, gateway_env, mcp_session, result_text

pytestmark = pytest.mark.e2e

TOKEN = "team-token-7f3a9c"
READ_TOOLS = {"observation_search", "observation_context", "observation_generation_status"}


@pytest.fixture
def team_server():
    with tempfile.TemporaryDirectory(prefix="mnemo-srv-") as home:
        server = TeamServer.start(Path(home), TOKEN)
        try:
            yield server
        finally:
            server.stop()


def _no_local_stack(home: Path) -> None:
    """Only gateways run with this home: no supervisor, no `mnemo serve`, no socket, no spawn lock."""
    for _, argv in processes_of(home):
        assert b"serve" not in argv and b"supervise" not in argv, argv
    assert not list((home / "run").glob("*.sock")), list((home / "run").iterdir())
    assert not (home / "run" / "spawn.lock").exists()


def test_server_runtime_lists_and_serves_the_observation_tools(settings, team_server):
    token_file = write_token_file(settings.home, TOKEN)
    env = gateway_env(settings, MNEMO_SERVER_URL=team_server.url, MNEMO_TOKEN_FILE=str(token_file),
                      MNEMO_MCP_STRUCTURED_CONTENT="true")  # the test reads ids from structuredContent

    async def scenario():
        async with mcp_session(env) as session:
            listed = {tool.name: tool for tool in (await session.list_tools()).tools}
            assert set(listed) >= SERVER_ONLY
            for name in SERVER_ONLY:
                hinted = bool(listed[name].annotations and listed[name].annotations.read_only_hint)
                assert hinted == (name in READ_TOOLS), name
            assert {"mem_search", "save_memory", "smart_outline"} <= set(listed)
            assert listed["observation_search"].input_schema["properties"]["limit"]["maximum"] == 100
            assert listed["observation_context"].input_schema["properties"]["limit"]["maximum"] == 50

            added = await session.call_tool("observation_add", {
                "projectId": "harbor", "kind": "decision", "metadata": {"ticket": "OPS-12"},
                "content": "Blue-green deploys switch the load balancer only after the canary health check passes."})
            assert not added.is_error, result_text(added)
            oid = added.structured_content["id"]
            again = await session.call_tool("observation_add", {
                "projectId": "harbor", "kind": "decision", "metadata": {"ticket": "OPS-12"},
                "content": "Blue-green deploys switch the load balancer only after the canary health check passes."})
            assert (again.structured_content["id"], again.structured_content["created"]) == (oid, False)

            found = await session.call_tool("observation_search", {"query": "canary health check",
                                                                   "projectId": "harbor"})
            assert not found.is_error, result_text(found)
            assert [row["recordId"] for row in found.structured_content["rows"]] == [oid]

            context = await session.call_tool("observation_context", {"query": "load balancer canary", "limit": 3})
            assert not context.is_error, result_text(context)
            assert f"#{oid}" in result_text(context) and "ticket: OPS-12" in result_text(context)

            event = await session.call_tool("observation_record_event", {
                "projectId": "harbor", "eventType": "PostToolUse", "sourceType": "hook", "generate": True,
                "contentSessionId": "sess-42", "occurredAtEpoch": 1764547200000,
                "payload": {"tool_name": "Edit", "cwd": "/srv/harbor",
                            "tool_input": {"file_path": "/srv/harbor/deploy/switch.py", "old_string": "wait(5)",
                                           "new_string": "wait_for_canary()"},
                            "tool_response": {"filePath": "/srv/harbor/deploy/switch.py"}}})
            assert not event.is_error, result_text(event)
            job = event.structured_content["jobId"]
            assert job and event.structured_content["eventId"] > 0

            status: dict = {}
            with anyio.fail_after(30):
                while status.get("status") not in ("done", "failed"):
                    reply = await session.call_tool("observation_generation_status", {"jobId": job})
                    assert not reply.is_error, result_text(reply)
                    status = reply.structured_content
                    await anyio.sleep(0.05)
            assert (status["status"], status["events"]) == ("done", 1), status
            assert status["observations"] >= 1
            compiled = await session.call_tool("observation_search", {"query": "switch.py", "projectId": "harbor"})
            assert compiled.structured_content["total"] >= 1, result_text(compiled)
            assert compiled.structured_content["rows"][0]["createdAtEpoch"] == 1764547200000  # when it happened

            # Bounds and unknown jobs are refused with the field named.
            too_many = await session.call_tool("observation_search", {"query": "x", "limit": 101})
            assert too_many.is_error and "limit" in result_text(too_many)
            unknown = await session.call_tool("observation_generation_status",
                                              {"jobId": "0" * 32 + ".harbor"})
            assert unknown.is_error and "NOT_FOUND" in result_text(unknown)

            # The rest of the memory goes to the server too.
            saved = await session.call_tool("save_memory", {"text": "Team note: the staging bucket is eu-west-1.",
                                                            "project": "harbor"})
            assert not saved.is_error, result_text(saved)
            _no_local_stack(settings.home)

    anyio.run(scenario)
    _no_local_stack(settings.home)


@pytest.fixture
def scoped_server():
    with tempfile.TemporaryDirectory(prefix="mnemo-srv-") as home:
        server = TeamServer.start(Path(home), TOKEN, user_tokens=True)
        try:
            yield server
        finally:
            server.stop()


def test_a_user_token_writes_as_its_user_and_only_in_its_projects(settings, scoped_server):
    channel = open_channel(scoped_server.store_addr, auth_token=TOKEN)
    try:
        store = store_pb2_grpc.StoreServiceStub(channel)
        secret = store.AddToken(store_pb2.AddTokenRequest(user="ana", projects=["harbor"])).secret
        hidden = add_observation(store, project="vault", title="Vault rotation uses the canary key")
    finally:
        channel.close()
    token_file = settings.home / "ana.token"
    token_file.write_text(secret)
    token_file.chmod(0o600)
    env = gateway_env(settings, MNEMO_SERVER_URL=scoped_server.url, MNEMO_TOKEN_FILE=str(token_file),
                      MNEMO_MCP_STRUCTURED_CONTENT="true")  # the test reads ids from structuredContent

    async def scenario():
        async with mcp_session(env) as session:
            added = await session.call_tool("observation_add", {"projectId": "harbor",
                                                                "content": "The canary key lives in harbor's vault."})
            assert not added.is_error, result_text(added)
            outside = await session.call_tool("observation_add", {"projectId": "vault", "content": "x"})
            assert outside.is_error and "PERMISSION_DENIED" in result_text(outside), result_text(outside)
            found = await session.call_tool("observation_search", {"query": "canary key"})
            assert [row["recordId"] for row in found.structured_content["rows"]] == [
                added.structured_content["id"]], result_text(found)
            return added.structured_content["id"]

    oid = anyio.run(scenario)
    channel = open_channel(scoped_server.store_addr, auth_token=TOKEN)
    try:
        records = store_pb2_grpc.StoreServiceStub(channel).GetRecords(store_pb2.GetRecordsRequest(refs=[
            common_pb2.Ref(kind=common_pb2.DOC_KIND_OBSERVATION, id=i) for i in (oid, hidden)])).records
        assert {r.observation.id: r.observation.writer for r in records} == {oid: "ana", hidden: "admin"}
    finally:
        channel.close()


def test_local_runtime_hides_and_refuses_the_observation_tools(stack):
    async def scenario():
        async with mcp_session(gateway_env(stack)) as session:
            names = {tool.name for tool in (await session.list_tools()).tools}
            assert "mem_search" in names and not names & SERVER_ONLY
            refused = await session.call_tool("observation_search", {"query": "anything"})
            assert refused.is_error
            assert "observation_search requires the server runtime" in result_text(refused)
            assert "server_url" in result_text(refused)

    anyio.run(scenario)


def test_an_unreachable_server_is_named_and_nothing_local_starts(settings):
    port = free_port()
    env = gateway_env(settings, MNEMO_SERVER_URL=f"127.0.0.1:{port}",
                      MNEMO_TOKEN_FILE=str(write_token_file(settings.home, TOKEN)))

    async def scenario():
        async with mcp_session(env) as session:
            names = {tool.name for tool in (await session.list_tools()).tools}
            assert "mem_search" in names  # what any server serves; the rest appear when it answers
            down = await session.call_tool("mem_search", {"query": "anything"})
            assert down.is_error
            assert f"the mnemo server at server_url=127.0.0.1:{port} refused the connection" in result_text(down)
            _no_local_stack(settings.home)

    anyio.run(scenario)


def test_a_token_file_others_can_read_is_refused(settings, team_server):
    token_file = write_token_file(settings.home, TOKEN, mode=0o644)
    env = gateway_env(settings, MNEMO_SERVER_URL=team_server.url, MNEMO_TOKEN_FILE=str(token_file),
                      MNEMO_MCP_STRUCTURED_CONTENT="true")  # the test reads ids from structuredContent
    done = subprocess.run(GATEWAY_ARGV, input="", env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stderr
    assert f"token_file: {token_file} is accessible by others (mode 0644)" in done.stderr
    assert f"chmod 600 {token_file}" in done.stderr and TOKEN not in done.stderr
    _no_local_stack(settings.home)
