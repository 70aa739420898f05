"""`mnemo hook` as real subprocesses against a real store_svc."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from bench.replay import PROJECT, make_workspace, payloads, replay, run_hook
from mnemo.grpc_client import open_channel
from mnemo.v1 import store_pb2, store_pb2_grpc
from tests.conftest import subprocess_env

pytestmark = pytest.mark.service

SECRETS = ("ghp_A1b2C3d4", "tok_live_9f8e7d6c", "STAGINGKEYdoNotStore", "sk-ant-api03-STAGING")


def all_text(db_path: Path) -> str:
    """Every value of every column of every table (FTS shadow tables included), read-only."""
    conn = sqlite3.connect(f"{db_path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        chunks = []
        for table in tables:
            for row in conn.execute(f'SELECT * FROM "{table}"'):
                for value in row:
                    if isinstance(value, bytes):
                        chunks.append(value.decode("latin-1"))
                    elif value is not None:
                        chunks.append(str(value))
        return "\n".join(chunks)
    finally:
        conn.close()


def counts(db_path: Path) -> dict[str, int]:
    conn = sqlite3.connect(f"{db_path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        return {t: conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]
                for t in ("sdk_sessions", "user_prompts", "observations", "session_summaries", "tool_uses")}
    finally:
        conn.close()


@pytest.fixture
def workspace(settings, tmp_path):
    return make_workspace(tmp_path)


def test_replayed_session_is_recorded_compiled_and_summarized(settings, store_server, workspace):
    repo, transcript = workspace
    env = subprocess_env(settings)
    tool_events = ["PostToolUse", "PostToolUseFailure"]
    runs = replay(repo, transcript, env, events=["UserPromptSubmit", "PreToolUse", *tool_events, "Stop"])
    before = counts(settings.database)
    # Replayed tool uses and Stop (a host retrying hooks) store nothing twice.
    runs += replay(repo, transcript, env, events=[*tool_events, "Stop"])
    after = counts(settings.database)
    for table in ("sdk_sessions", "observations", "tool_uses", "session_summaries"):
        assert after[table] == before[table], table
    runs += replay(repo, transcript, env, events=["SessionEnd"])
    for run in runs:
        assert (run.returncode, run.reply()) == (0, {}), run.stderr
    log = settings.logs_dir / "hooks.log"
    assert not log.exists() or ("error" not in log.read_text() and "redone" not in log.read_text()), log.read_text()

    channel = open_channel(store_server.address)
    stub = store_pb2_grpc.StoreServiceStub(channel)
    try:
        [session] = [i.session for i in stub.Export(store_pb2.ExportRequest()) if i.WhichOneof("item") == "session"]
        assert (session.project, session.status) == (PROJECT, "completed")
        assert session.user_prompt.startswith("The checkout total is off by a cent")
        items = list(stub.Export(store_pb2.ExportRequest(project=PROJECT)))
        observations = [i.observation for i in items if i.WhichOneof("item") == "observation"]
        summaries = [i.summary for i in items if i.WhichOneof("item") == "summary"]
        tool_uses = [i.tool_use for i in items if i.WhichOneof("item") == "tool_use"]
        prompts = [i.prompt for i in items if i.WhichOneof("item") == "prompt"]
    finally:
        channel.close()

    assert [p.prompt_text for p in prompts] == [
        "The checkout total is off by a cent when a discount code is applied. Fix the rounding bug in the cart "
        "pricing and make sure the tests pass."]
    assert "TodoWrite" not in {t.tool_name for t in tool_uses}  # a skip-listed tool
    assert len(tool_uses) == 8 and all(t.observation_ids for t in tool_uses)
    [edit_use] = [t for t in tool_uses if t.tool_use_id == "toolu_01EditPricing"]
    assert json.loads(edit_use.tool_input)["old_string"] == "    return price * (1 - discount)"  # as sent
    by_title = {o.title: o for o in observations}
    burst = next(o for o in observations if o.type == "discovery" and o.files_read)
    assert list(burst.files_read) == ["src/shop/pricing.py", "tests/test_pricing.py"]
    assert len(burst.tool_use_ids) == 3  # grep + two reads merged into one discovery
    failing = by_title["Tests failed: python -m pytest -q tests/test_pricing.py: test_discount_rounding"]
    assert failing.type == "bugfix" and "1 failed, 2 passed" in failing.facts
    assert "Failing test: tests/test_pricing.py::test_discount_rounding" in failing.facts
    assert "First error: E AssertionError: assert Decimal('17.991') == Decimal('17.99')" in failing.facts
    assert by_title["Tests passed: python -m pytest -q tests/test_pricing.py (3 passed)"].type == "discovery"
    [fix] = [o for o in observations if o.title.startswith("Fixed: ")]
    [failed_use] = [t for t in tool_uses if t.tool_use_id == "toolu_01PytestFails"]
    [passed_use] = [t for t in tool_uses if t.tool_use_id == "toolu_01PytestPasses"]
    assert fix.type == "bugfix" and sorted(fix.tool_use_ids) == sorted([failed_use.id, passed_use.id])
    assert f"Failure observation #{failing.id}" in fix.facts
    # The failure is stored as the host reported it, and nothing compiled from it claims success.
    assert json.loads(failed_use.tool_response)["error"].startswith("Exit code 1\nF..")
    for observation in (o for o in observations if failed_use.id in o.tool_use_ids and o.id != fix.id):
        assert "Outcome: succeeded" not in observation.facts and "passed:" not in observation.title
    edits = [o for o in observations if o.type == "change"]
    assert {f for o in edits for f in o.files_modified} == {"src/shop/pricing.py"}

    [edit] = [t for t in tool_uses if t.tool_use_id == "toolu_01EditPricing"]
    assert json.loads(edit.tool_input)["file_path"].endswith("src/shop/pricing.py")
    [edit_obs] = [o for o in observations if o.id in edit.observation_ids]
    assert edit_obs.title == "Edited src/shop/pricing.py" and list(edit_obs.tool_use_ids) == [edit.id]
    [read] = [t for t in tool_uses if t.tool_use_id == "toolu_01ReadPricing"]
    assert list(read.observation_ids) == [burst.id]

    [summary] = summaries
    assert summary.request.startswith("The checkout total is off by a cent")
    assert "src/shop/pricing.py" in summary.investigated
    assert "failed at first and passed after the changes" in summary.learned
    assert "The assistant said (unverified): Fixed the rounding bug" in summary.learned
    assert "Tests pass" in summary.completed and summary.next_steps.startswith("Next step: add a test")
    assert list(summary.files_edited) == ["src/shop/pricing.py"] and summary.prompt_number == 1

    assert not any((settings.home / "capture").iterdir())  # SessionEnd dropped the local journal
    text = all_text(settings.database)
    for secret in SECRETS:
        assert secret not in text, secret
    assert "[REDACTED]" in text



def test_an_entirely_private_prompt_is_stored_nowhere(settings, store_server, workspace):
    repo, transcript = workspace
    env = subprocess_env(settings)
    base = {"session_id": "private-session-1", "cwd": str(repo), "transcript_path": str(transcript)}
    marker = "Tr0ub4dor-zebra-4419"
    prompt = (f"<Private>rotate the prod password to {marker}</PRIVATE>  "
              "<private>and <private>nested</private> too</private>")
    runs = [
        run_hook("UserPromptSubmit", {**base, "hook_event_name": "UserPromptSubmit", "prompt": prompt}, env),
        run_hook(
            "PostToolUse",
            {
                **base,
                "tool_name": "Bash",
                "tool_use_id": "toolu_p1",
                "tool_input": {"command": f"echo {marker}"},
                "tool_response": {"stdout": marker},
            },
            env,
        ),
        run_hook("Stop", {**base, "hook_event_name": "Stop"}, env),
        run_hook("SessionEnd", {**base, "hook_event_name": "SessionEnd"}, env),
    ]
    assert [(r.returncode, r.reply()) for r in runs] == [(0, {})] * 4
    text = all_text(settings.database).lower()
    assert marker.lower() not in text and "tr0ub4dor" not in text and "nested" not in text
    assert counts(settings.database) == dict.fromkeys(
        ("sdk_sessions", "user_prompts", "observations", "session_summaries", "tool_uses"), 0
    )

    # The next, public prompt of the same session is recorded again.
    public = run_hook("UserPromptSubmit", {**base, "prompt": "now list the files"}, env)
    assert public.returncode == 0
    assert counts(settings.database)["user_prompts"] == 1
    assert marker.lower() not in all_text(settings.database).lower()


GARBAGE = [
    ("SessionStart", ""),
    ("UserPromptSubmit", "not json at all"),
    ("PostToolUse", "[1, 2, 3]"),
    ("Stop", '{"session_id": 5, "tool_name": ["x"]}'),
    ("SessionEnd", '{"cwd": "/tmp"}'),
    ("NoSuchEvent", '{"session_id": "s"}'),
]


def test_garbage_stdin_gets_a_valid_empty_reply(settings, store_server):
    # Remote addresses for the services not running here: nothing may be spawned by a slip.
    env = subprocess_env(settings, MNEMO_SEARCH_ADDR="127.0.0.1:1", MNEMO_VECTOR_ADDR="127.0.0.1:1")
    for event, stdin in GARBAGE:
        run = run_hook(event, stdin, env)
        assert run.returncode == 0 and run.stdout == "{}", (event, run.stderr)
    assert counts(settings.database)["sdk_sessions"] == 0
    log = [json.loads(line) for line in (settings.logs_dir / "hooks.log").read_text().splitlines()]
    assert {e["hook"] for e in log if e["level"] == "error"} == {e for e, _ in GARBAGE[:5]}  # each logged why


def test_an_unreachable_stack_never_breaks_the_host(settings, tmp_path):
    repo, transcript = make_workspace(tmp_path)
    env = subprocess_env(
        settings,
        MNEMO_STORE_ADDR="127.0.0.1:1",
        MNEMO_SEARCH_ADDR="127.0.0.1:1",
        MNEMO_VECTOR_ADDR="127.0.0.1:1",
        MNEMO_RPC_TIMEOUT_S="2",
    )
    for event, payload in payloads(repo, transcript, events=["SessionStart", "UserPromptSubmit", "PostToolUse"])[:3]:
        run = run_hook(event, payload, env)  # run_hook's own timeout fails a hook that hangs
        assert run.returncode == 0 and run.reply() == {}, run.stderr
    log = [json.loads(line) for line in (settings.logs_dir / "hooks.log").read_text().splitlines()]
    assert {entry["hook"] for entry in log if entry["level"] == "error"} >= {"SessionStart", "UserPromptSubmit"}
    assert all("UNAVAILABLE" in e["error"] or "Unavailable" in e["error"] for e in log if e["level"] == "error")
