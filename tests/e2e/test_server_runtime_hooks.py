"""Hooks in the server runtime: with the team server down, a recorded session runs (exit 0,
`{}`) and queues privately; when the server is back, the next hook replays the queue in
order, and every record is on the server exactly once, as many as a local run stores.
Replaying the queue again (acknowledgements lost) adds nothing."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import sqlite3
import stat
import tempfile
from pathlib import Path

import pytest

from bench.replay import make_workspace, payloads, replay, run_hook, wait_for_workers
from capture.outbox import OUTBOX_DIR, RECEIVED_KEY
from mnemo.config import load_settings, with_overrides
from mnemo.stack import run_down
from tests.conftest import processes_of, start_service, subprocess_env
from tests.server_runtime_support import TeamServer, free_port, server_runtime_env, write_token_file

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

TOKEN = "hooks-team-token-19b2"
TABLES = ("sdk_sessions", "user_prompts", "observations", "session_summaries", "tool_uses")
SECRETS = ("STAGINGKEYdoNotStore", "ghp_A1b2C3d4", "tok_live_9f8e7d6c")
WRITING_EVENTS = ["UserPromptSubmit", "PostToolUse", "PostToolUseFailure", "Stop"]


def _read_only(db_path: Path) -> contextlib.closing[sqlite3.Connection]:
    return contextlib.closing(sqlite3.connect(f"{db_path.resolve().as_uri()}?mode=ro", uri=True))


def counts(db_path: Path) -> dict[str, int]:
    with _read_only(db_path) as conn:
        return {t: conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in TABLES}


def _prompt_times(db_path: Path) -> list[int]:
    with _read_only(db_path) as conn:
        return [row[0] for row in conn.execute("SELECT created_at_epoch FROM user_prompts ORDER BY id")]


def _local_reference(repo: Path, transcript: Path) -> dict[str, int]:
    """What the same session stores through the local runtime."""
    with tempfile.TemporaryDirectory(prefix="mnemo-ref-") as home:
        settings = with_overrides(load_settings({"home": home}, environ={}), log_level="warning")
        handle, on_stop = start_service("store", settings)
        try:
            env = subprocess_env(settings)
            for run in replay(repo, transcript, env, events=["SessionStart", *WRITING_EVENTS, "SessionEnd"]):
                assert (run.returncode, run.reply()) == (0, {}), run.stderr
            wait_for_workers(settings.home)
            return counts(settings.database)
        finally:
            handle.stop(0.5)
            on_stop()
            stop_what_the_hooks_started(settings)


def stop_what_the_hooks_started(settings) -> None:
    """The hooks found the store and started the rest of a stack (a supervisor, vector, search)
    in this home: stop it, or it outlives the test and restarts the store in a deleted folder."""
    run_down(settings, None)
    for pid, argv in processes_of(settings.home):
        if b"serve" in argv or b"supervise" in argv:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def test_hooks_queue_while_the_server_is_down_and_replay_once_when_it_is_back(settings, tmp_path):
    repo, transcript = make_workspace(tmp_path)
    port = free_port()
    env = server_runtime_env(settings, f"127.0.0.1:{port}", write_token_file(settings.home, TOKEN))
    outbox = settings.home / OUTBOX_DIR

    # The server is down: every hook still answers at once, and the writes wait in the outbox.
    runs = replay(repo, transcript, env, events=["SessionStart", *WRITING_EVENTS])
    wait_for_workers(settings.home)
    for run in runs:
        assert (run.returncode, run.reply()) == (0, {}), (run.event, run.stderr)
    queued = sorted(outbox.glob("*.json"))
    assert len(queued) == len([e for e, _ in payloads(repo, transcript, WRITING_EVENTS)])
    assert stat.S_IMODE(outbox.stat().st_mode) == 0o700
    assert {stat.S_IMODE(p.stat().st_mode) for p in queued} == {0o600}
    on_disk = "".join(p.read_text(encoding="utf-8") for p in queued)
    for secret in SECRETS:  # the fixture's <private> region and tokens: cleaned before they rest on disk
        assert secret not in on_disk, secret
    hooks_log = (settings.logs_dir / "hooks.log").read_text()
    assert "team server unreachable: hook event queued" in hooks_log
    assert TOKEN not in on_disk and TOKEN not in hooks_log  # the bearer token is neither queued nor logged
    # Nothing local was started for it.
    for _, argv in processes_of(settings.home):
        assert b"serve" not in argv and b"supervise" not in argv, argv
    assert not list((settings.home / "run").glob("*.sock"))
    saved = tmp_path / "queued-copy"
    shutil.copytree(outbox, saved)

    with tempfile.TemporaryDirectory(prefix="mnemo-srv-") as server_home:
        server = TeamServer.start(Path(server_home), TOKEN, port=port)
        try:
            # Back: the next hook (SessionEnd) replays the queue in order, then does its own work.
            end = run_hook("SessionEnd", dict(payloads(repo, transcript, ["SessionEnd"]))["SessionEnd"], env)
            assert (end.returncode, end.reply()) == (0, {}), end.stderr
            wait_for_workers(settings.home)
            assert not list(outbox.glob("*.json"))
            stored = counts(server.settings.database)
            assert stored == _local_reference(repo, transcript)
            assert min(stored.values()) >= 1, stored
            # Replayed records keep the time the host fired their event, not the replay's.
            fired = [json.loads(p.read_text())["payload"][RECEIVED_KEY] for p in sorted(saved.glob("*.json"))
                     if json.loads(p.read_text())["event"] == "UserPromptSubmit"]
            assert _prompt_times(server.settings.database) == fired

            # The same events once more, as after a lost acknowledgement: nothing is stored twice.
            for entry in saved.glob("*.json"):
                shutil.copy(entry, outbox / entry.name)
            start = run_hook("SessionStart", dict(payloads(repo, transcript, ["SessionStart"]))["SessionStart"], env)
            assert (start.returncode, start.reply()["hookSpecificOutput"]["hookEventName"]) == (0, "SessionStart")
            assert not list(outbox.glob("*.json"))
            assert counts(server.settings.database) == stored
        finally:
            server.stop()
    log = (settings.logs_dir / "hooks.log").read_text()
    assert "outbox drained" in log and "dropped" not in log, log
