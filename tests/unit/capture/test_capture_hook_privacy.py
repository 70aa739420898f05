"""What a hook keeps on the host: identifiers privacy-cleaned, a state file without the
session id, and a hooks.log that is private and rotated past its cap."""

from __future__ import annotations

import io
import json
import os
import stat
import types

import pytest

from capture import hook_call, hooks
from capture.journal import STATE, Journal, SessionState
from mnemo.config import load_settings, with_overrides

pytestmark = pytest.mark.unit

SECRET = "zqhiddenvalue"


def test_every_identifier_field_is_cleaned_and_content_is_left_to_its_handler():
    payload = {name: f"id <private>{SECRET}</private> ok" for name in hooks.IDENTIFIER_FIELDS}
    payload["tool_use_id"] = "toolu_1 token=abcdefghijklmnop"
    payload["prompt"] = f"<private>{SECRET}</private>"  # the prompt handler decides (entirely private)
    cleaned = hooks.without_private_identifiers(payload)
    for name in hooks.IDENTIFIER_FIELDS:
        assert SECRET not in cleaned[name], name
    assert cleaned["session_id"] == "id  ok"
    assert "abcdefghijklmnop" not in cleaned["tool_use_id"]
    assert cleaned["prompt"] == payload["prompt"]
    assert hooks.without_private_identifiers({"session_id": "plain"}) == {"session_id": "plain"}


def test_a_hook_run_keys_and_stores_by_the_cleaned_session_id(tmp_path, monkeypatch):
    settings = load_settings({"home": str(tmp_path)}, environ={})
    raw = {"session_id": f"s-<private>{SECRET}</private>", "prompt": f"<private>{SECRET}</private>",
           "cwd": f"/tmp/p<private>{SECRET}</private>"}
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(json.dumps(raw).encode())))
    monkeypatch.setattr("sys.stdout", io.StringIO())
    # An entirely private prompt: stored nowhere, so no stack is needed, only the journal's state.
    assert hooks.run(settings, types.SimpleNamespace(event="UserPromptSubmit", platform="claude")) == 0
    journal = Journal(settings.home / "capture", "claude", "s-")
    state_text = (journal.dir / STATE).read_text()
    assert json.loads(state_text)["private"] is True
    every_byte = b"".join(p.read_bytes() for p in tmp_path.rglob("*") if p.is_file())
    assert SECRET.encode() not in every_byte and b"s-" not in state_text.encode()


def test_the_state_file_holds_no_session_id_and_older_states_still_load(tmp_path):
    journal = Journal(tmp_path, "claude", "the-session-id")
    journal.save_state(SessionState("claude", "proj", memory_session_id="m", prompt_number=3))
    assert "the-session-id" not in (journal.dir / STATE).read_text()
    (journal.dir / STATE).write_text(json.dumps({"content_session_id": "the-session-id", "platform": "claude",
                                                 "project": "proj", "prompt_number": 4}))
    loaded = journal.load_state()
    assert loaded is not None and loaded.prompt_number == 4 and loaded.project == "proj"


def test_hooks_log_is_private_and_rotates_past_its_cap(tmp_path, monkeypatch):
    previous = os.umask(0)
    try:
        settings = with_overrides(load_settings({"home": str(tmp_path)}, environ={}), log_max_bytes=4096,
                                  log_backups=2)
        monkeypatch.setattr(hook_call, "_LOG_FILES", {})
        for n in range(200):
            hook_call.log(settings, "warning", "something to note", n=n, padding="x" * 100)
    finally:
        os.umask(previous)
    logs = sorted(settings.logs_dir.glob("hooks.log*"))
    assert [p.name for p in logs] == ["hooks.log", "hooks.log.1", "hooks.log.2"]
    for path in logs:
        assert path.stat().st_size <= 4096
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(settings.logs_dir.stat().st_mode) == 0o700
    last = json.loads(logs[0].read_text().splitlines()[-1])
    assert last["n"] == 199 and last["event"] == "something to note"
