"""capture.outbox: the server runtime's queue of hook events (order, privacy, bound, replay)."""

from __future__ import annotations

import json
import stat

import pytest

from capture import outbox as ob
from mnemo.config import load_settings
from mnemo.errors import InvalidArgument, Unavailable

pytestmark = pytest.mark.unit


@pytest.fixture
def settings(tmp_path):
    return load_settings({"home": str(tmp_path)}, environ={})


def test_events_rest_cleaned_private_and_replay_in_order(settings):
    box = ob.Outbox(settings.home)
    for n in range(5):
        assert box.put(settings, "PostToolUse", {"session_id": "s", "n": n,
                                                 "tool_input": {"cmd": f"echo <private>pw{n}</private> ok"}}, "claude")
    assert stat.S_IMODE(box.path.stat().st_mode) == 0o700
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in box.entries())
    assert "pw" not in "".join(p.read_text() for p in box.entries())
    seen = []
    assert box.drain(settings, lambda s, event, payload, platform: seen.append(payload["n"]) or {})
    assert seen == [0, 1, 2, 3, 4] and box.entries() == []


def test_an_entirely_private_prompt_stays_private_in_the_queue(settings):
    box = ob.Outbox(settings.home)
    box.put(settings, "UserPromptSubmit", {"session_id": "s", "prompt": "<private>my password is x</private>"}, "c")
    item = json.loads(box.entries()[0].read_text())
    assert item["payload"]["prompt"] == ob.PRIVATE_PROMPT
    from mnemo.privacy import is_entirely_private

    assert is_entirely_private(item["payload"]["prompt"])


def test_drain_stops_at_an_unreachable_server_and_drops_what_the_server_refuses(settings):
    box = ob.Outbox(settings.home)
    for n in range(4):
        box.put(settings, "Stop", {"session_id": "s", "n": n}, "claude")
    calls = []

    def run(s, event, payload, platform):
        calls.append(payload["n"])
        if payload["n"] == 1:
            raise InvalidArgument("project", "refused for good")
        if payload["n"] == 2:
            raise Unavailable("connection refused")
        return {}

    assert not box.drain(settings, run)
    assert calls == [0, 1, 2] and len(box.entries()) == 2  # 2 and 3 wait for the next hook, in order
    log = (settings.logs_dir / "hooks.log").read_text()
    assert "queued hook event refused by the server, dropped" in log and "refused for good" in log


def test_the_outbox_is_bounded_and_says_so(settings, monkeypatch):
    monkeypatch.setattr(ob, "OUTBOX_MAX_BYTES", 700)
    box = ob.Outbox(settings.home)
    stored = [box.put(settings, "Stop", {"session_id": "s", "text": "x" * 150}, "claude") for _ in range(5)]
    assert stored[:2] == [True, True] and stored[-1] is False
    assert box.size() <= 700
    assert "outbox full: hook event dropped" in (settings.logs_dir / "hooks.log").read_text()


def test_only_one_process_drains_at_a_time(settings):
    box = ob.Outbox(settings.home)
    with box.draining() as first, ob.Outbox(settings.home).draining() as second:
        assert (first, second) == (True, False)
    with box.draining() as again:
        assert again


def test_a_replay_pauses_past_its_budget_and_keeps_the_rest_in_order(settings):
    box = ob.Outbox(settings.home)
    for n in range(3):
        box.put(settings, "Stop", {"session_id": "s", "n": n}, "claude")
    seen = []
    assert not box.drain(settings, lambda s, e, payload, p: seen.append(payload["n"]) or {}, budget_s=-1.0)
    assert seen == [] and len(box.entries()) == 3
    assert box.drain(settings, lambda s, e, payload, p: seen.append(payload["n"]) or {})
    assert seen == [0, 1, 2]
