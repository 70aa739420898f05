"""`mnemo import` / `mnemo export` as subprocesses against a real store_svc."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from mnemo.config import ensure_private_dirs, load_settings, with_overrides
from mnemo.grpc_client import open_channel
from mnemo.v1 import common_pb2, store_pb2, store_pb2_grpc
from tests.conftest import start_service, subprocess_env
from tests.fixtures import claude_mem_db
from tests.service.capture.test_capture_hooks import all_text, counts

pytestmark = pytest.mark.service

REPO = Path(__file__).resolve().parents[3]


def mnemo(settings, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mnemo.cli", *args], cwd=REPO, env=subprocess_env(settings),
                          capture_output=True, text=True, timeout=120)


def add_hook_records(address: str) -> None:
    """What only hooks write: raw tool uses, observations linked to them, a summary with files."""
    channel = open_channel(address)
    try:
        stub = store_pb2_grpc.StoreServiceStub(channel)
        stub.UpsertSession(store_pb2.UpsertSessionRequest(content_session_id="hook-1", project="acme-shop",
                                                          user_prompt="Fix the rounding bug"))
        stub.RecordPrompt(store_pb2.RecordPromptRequest(content_session_id="hook-1", project="acme-shop",
                                                        prompt_text="Fix the rounding bug"))
        rows = [stub.RecordToolUse(store_pb2.RecordToolUseRequest(tool_use=common_pb2.ToolUse(
            content_session_id="hook-1", project="acme-shop", tool_use_id=f"toolu_{n}", tool_name=name, cwd="/r",
            tool_input=json.dumps({"file_path": "/r/src/pricing.py"}), tool_response=json.dumps({"ok": n}),
            prompt_number=1))) for n, name in enumerate(("Read", "Edit"))]
        stub.AddObservations(store_pb2.AddObservationsRequest(observations=[common_pb2.Observation(
            memory_session_id="hook-1", project="acme-shop", type="change", title="Edited src/pricing.py",
            subtitle="Replaced 1 line", narrative="Quantize to cents.", facts=["a", "b"], concepts=["python"],
            files_read=["src/pricing.py"], files_modified=["src/pricing.py"], prompt_number=1,
            tool_use_ids=[r.id for r in rows], external_id="mnemo:k:tool:toolu_1:0")]))
        stub.AddSummaries(store_pb2.AddSummariesRequest(summaries=[common_pb2.Summary(
            memory_session_id="hook-1", project="acme-shop", request="Fix the rounding bug", completed="Fixed",
            files_read=["src/pricing.py"], files_edited=["src/pricing.py"], prompt_number=1,
            external_id="mnemo:k:summary:p1")]))
        stub.CompleteSession(store_pb2.CompleteSessionRequest(content_session_id="hook-1"))
    finally:
        channel.close()


def test_claude_mem_database_imports_once_with_bad_rows_reported(settings, store_server, tmp_path):
    db = claude_mem_db.build(tmp_path / "claude-mem.db", bad_row=True)
    before = db.read_bytes()
    first = mnemo(settings, "import", str(db))
    assert first.returncode == 1, first.stderr  # 1: some records were bad, the rest imported
    assert "bad record at observations row id=99: facts: not a JSON array" in first.stderr
    assert "import: imported 11, already present 0, left out as private 1, bad 1" in first.stdout
    assert db.read_bytes() == before
    stored = counts(settings.database)
    assert stored == {"sdk_sessions": 3, "user_prompts": 3, "observations": 3, "session_summaries": 2, "tool_uses": 0}

    second = mnemo(settings, "import", str(db))
    assert "imported 0, already present 11" in second.stdout
    assert counts(settings.database) == stored

    text = all_text(settings.database).lower()
    assert claude_mem_db.PRIVATE_MARKER.lower() not in text and "tr0ub4dor" not in text

    exported = mnemo(settings, "export", "--project", "acme-shop")
    records = [json.loads(line) for line in exported.stdout.splitlines()]
    obs = {r["title"]: r for r in records if r["kind"] == "observation"}
    fixed = obs["Fixed login redirect loop"]
    assert fixed["files_modified"] == ["src/auth/views.py", "tests/test_login.py"]
    assert (fixed["created_at_epoch"], fixed["created_at"]) == (claude_mem_db.T0 + 900_000, "2026-01-15T14:15:00.000Z")
    assert fixed["external_id"] == "claude-mem:obs:2" and fixed["discovery_tokens"] == 2400
    sessions = {r["content_session_id"]: r for r in records if r["kind"] == "session"}
    assert set(sessions) == {"cc-1111", "cc-2222"} and sessions["cc-2222"]["user_prompt"] == ""
    assert sessions["cc-1111"]["started_at_epoch"] == claude_mem_db.T0


def test_claude_mem_export_json_imports_the_same_records(settings, store_server, tmp_path):
    db = claude_mem_db.build(tmp_path / "claude-mem.db")
    export = tmp_path / "memories.json"
    export.write_text(json.dumps(claude_mem_db.export_document(db), indent=2))
    done = mnemo(settings, "import", str(export))
    assert done.returncode == 0, done.stderr
    assert "imported 11" in done.stdout and "from claude-mem-json" in done.stdout
    assert mnemo(settings, "import", str(db)).stdout.startswith("import: imported 0, already present 11")


def test_export_then_import_into_an_empty_home_is_lossless(settings, store_server, tmp_path):
    db = claude_mem_db.build(tmp_path / "claude-mem.db")
    assert mnemo(settings, "import", str(db)).returncode == 0
    add_hook_records(store_server.address)
    dump = tmp_path / "dump.jsonl"
    assert mnemo(settings, "export", str(dump)).returncode == 0
    original = [json.loads(line) for line in dump.read_text().splitlines()]
    assert {r["kind"] for r in original} == {"session", "prompt", "observation", "summary", "tool_use"}

    other = with_overrides(load_settings({"home": str(tmp_path / "h2")}, environ={}), embedder="hash")
    ensure_private_dirs(other)
    handle, on_stop = start_service("store", other)
    try:
        loaded = mnemo(other, "import", str(dump))
        assert loaded.returncode == 0, loaded.stderr
        assert f"imported {len(original)}, already present 0" in loaded.stdout
        again = subprocess.run([sys.executable, "-m", "mnemo.cli", "export"], cwd=REPO, env=subprocess_env(other),
                               capture_output=True, text=True, timeout=120)
    finally:
        handle.stop(0)
        on_stop()
    copied = [json.loads(line) for line in again.stdout.splitlines()]
    # Row ids are the new database's own; links between rows are not carried by Import (see docs/jsonl.md).
    local = {"id", "tool_use_ids", "observation_ids"}

    def comparable(records):
        return sorted(json.dumps({k: v for k, v in r.items() if k not in local}, sort_keys=True) for r in records)

    assert len(copied) == len(original)
    assert comparable(copied) == comparable(original)
    assert any(r["kind"] == "observation" and r["facts"] and isinstance(r["facts"], list) for r in copied)


def test_an_empty_export_imports_as_no_records(settings, store_server, tmp_path):
    exported = mnemo(settings, "export", "--project", "nothing-here")
    assert exported.returncode == 0 and exported.stdout == "", exported.stderr
    dump = tmp_path / "empty.jsonl"
    dump.write_text(exported.stdout)
    loaded = mnemo(settings, "import", str(dump))
    assert loaded.returncode == 0, loaded.stderr
    assert loaded.stdout.startswith("import: imported 0, already present 0, bad 0 (from jsonl")
