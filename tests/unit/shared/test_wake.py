"""The files by which a resting service, its users and the supervisor agree (mnemo/wake.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mnemo import spawnlock, wake

pytestmark = pytest.mark.unit


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    path = tmp_path / "run"
    path.mkdir(mode=0o700)
    return path


def supervisor_state(run_dir: Path, **lists: list[str]) -> None:
    (run_dir / wake.SUPERVISOR_STATE).write_text(json.dumps({"pid": 1, "restarts": {}, **lists}))


def test_without_a_supervisor_nobody_is_asked_and_nothing_is_warming(run_dir):
    supervisor_state(run_dir, resting=["vector"])  # a stale state file of a supervisor killed -9
    assert not wake.request(run_dir, "vector")
    assert not wake.wake_request(run_dir, "vector").exists()
    assert wake.resting(run_dir) == set() and not wake.warming(run_dir, "vector")


def test_a_resting_service_is_asked_for_and_warming_until_it_answers(run_dir):
    lock = run_dir / wake.SUPERVISOR_LOCK
    assert spawnlock.acquire(lock)  # this process plays the supervisor
    try:
        supervisor_state(run_dir, resting=["vector"], waking=[])
        assert wake.resting(run_dir) == {"vector"}
        assert wake.request(run_dir, "vector") and wake.wake_request(run_dir, "vector").exists()
        supervisor_state(run_dir, resting=[], waking=["vector"])
        assert wake.warming(run_dir, "vector") and wake.request(run_dir, "vector")
        supervisor_state(run_dir, resting=[], waking=[])
        assert not wake.request(run_dir, "vector")  # down for another reason: the supervisor's to restart
    finally:
        spawnlock.release(lock)


def test_a_service_deciding_to_rest_drops_the_requests_it_served(run_dir):
    wake.wake_request(run_dir, "vector").touch()  # written while it was starting
    wake.mark_idle(run_dir, "vector")
    assert not wake.wake_request(run_dir, "vector").exists()
    assert wake.idle_marker(run_dir, "vector").exists()
