"""Moving a local memory to a team server: `mnemo export` from a SQLite home, `mnemo import` into
a store_svc on PostgreSQL; every record arrives with its timestamps, and importing twice stores once."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from mnemo.v1 import common_pb2, store_pb2
from tests.conftest import subprocess_env
from tests.grpcurl_support import mnemo_command
from tests.server_support import Deployment

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

T0 = 1_700_000_000_000  # an old time: imported records must keep it, not get "now"
# Row ids are the target database's own; everything else must arrive unchanged.
ROW_IDS = {"id", "session_db_id", "observation_ids", "tool_use_ids"}


def _fill(store_stub) -> None:
    """A home with every kind of record, each dated in the past."""
    for n, project in enumerate(("alpha", "beta")):
        sid = f"session-{project}"
        store_stub.UpsertSession(store_pb2.UpsertSessionRequest(
            content_session_id=sid, memory_session_id=sid, project=project, user_prompt="fix the login redirect",
            started_at_epoch=T0 + n))
        store_stub.RecordPrompt(store_pb2.RecordPromptRequest(
            content_session_id=sid, prompt_text=f"why does {project} redirect twice?", created_at_epoch=T0 + 10 + n))
        tool = store_stub.RecordToolUse(store_pb2.RecordToolUseRequest(tool_use=common_pb2.ToolUse(
            content_session_id=sid, tool_use_id=f"toolu_{project}", tool_name="Bash",
            tool_input='{"command": "pytest"}', tool_response="2 failed", project=project,
            created_at_epoch=T0 + 20 + n)))
        store_stub.AddObservations(store_pb2.AddObservationsRequest(observations=[common_pb2.Observation(
            memory_session_id=sid, project=project, type="bugfix", title=f"{project}: redirect loop fixed",
            narrative="The session cookie lacked SameSite, so the login redirected twice.", facts=["SameSite=Lax"],
            concepts=["gotcha"], files_modified=["app/auth.py"], created_at_epoch=T0 + 30 + n,
            tool_use_ids=[tool.id])]))
        store_stub.AddSummaries(store_pb2.AddSummariesRequest(summaries=[common_pb2.Summary(
            memory_session_id=sid, project=project, request="fix the login", learned="SameSite matters",
            completed="cookie fixed", created_at_epoch=T0 + 40 + n)]))


def _mnemo(settings, *args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([*mnemo_command(), *args], env=subprocess_env(settings), capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done


def _records(path: Path) -> list[dict]:
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return sorted((json.dumps({k: v for k, v in r.items() if k not in ROW_IDS}, sort_keys=True) for r in records),
                  key=str)


@pytest.mark.parametrize("target", ["postgres", "sqlite"])
def test_export_then_import_into_the_server_keeps_every_record_and_timestamp(settings, store_stub, home, request,
                                                                           target):
    _fill(store_stub)
    exported = home / "local.jsonl"
    _mnemo(settings, "export", str(exported))
    kinds = [json.loads(line)["kind"] for line in exported.read_text().splitlines()]
    assert sorted(set(kinds)) == ["observation", "prompt", "session", "summary", "tool_use"]

    server_env = {"MNEMO_DB_PATH": str(home / "server.db")}
    if target == "postgres":
        dsn = request.getfixturevalue("postgres_database")
        server_env = {"MNEMO_STORE_BACKEND": "postgres", "MNEMO_STORE_DSN": dsn}
    deployment = Deployment(settings, env=server_env)
    try:
        server = deployment.serve("store", label="server-store")
        first = _mnemo(settings, "import", "--store-addr", server.address, str(exported))
        assert f"imported {len(kinds)}" in first.stdout, first.stdout
        again = _mnemo(settings, "import", "--store-addr", server.address, str(exported))
        assert "imported 0" in again.stdout and f"already present {len(kinds)}" in again.stdout, again.stdout
        moved = home / "server.jsonl"
        _mnemo(settings, "export", "--store-addr", server.address, str(moved))
    finally:
        deployment.close()
    assert _records(moved) == _records(exported)
