"""The spawn lock: exclusive, released only by its owner, broken when dead or stale."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from mnemo.config import with_overrides
from mnemo.stack import lock_path, registration_text, release_lock, settings_env, try_acquire_lock

pytestmark = pytest.mark.unit


def dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def write_lock(settings, pid: int, started: float) -> None:
    lock_path(settings).write_text(json.dumps({"pid": pid, "started_at": started}))


def test_exclusive_and_released_by_its_owner(settings):
    assert try_acquire_lock(settings)
    owner = json.loads(lock_path(settings).read_text())
    assert owner["pid"] == os.getpid()
    assert not try_acquire_lock(settings)  # held by a live owner, fresh
    release_lock(settings)
    assert not lock_path(settings).exists()
    assert try_acquire_lock(settings)
    release_lock(settings)


def test_only_the_owner_releases(settings):
    write_lock(settings, os.getppid(), time.time())
    release_lock(settings)
    assert lock_path(settings).exists()


def test_lock_of_a_dead_owner_is_broken(settings):
    write_lock(settings, dead_pid(), time.time())
    assert try_acquire_lock(settings)
    assert json.loads(lock_path(settings).read_text())["pid"] == os.getpid()
    release_lock(settings)


def test_garbage_lock_is_judged_by_age(settings):
    lock_path(settings).write_text("{not json")
    os.utime(lock_path(settings), (time.time() - 10, time.time() - 10))
    assert try_acquire_lock(settings)
    release_lock(settings)


def test_spawned_services_inherit_the_starters_settings(settings):
    env = settings_env(with_overrides(settings, embedder="hash", rpc_timeout_s=2.5, skip_tools=("A", "B")))
    assert env["MNEMO_HOME"] == str(settings.home)
    assert (env["MNEMO_EMBEDDER"], env["MNEMO_RPC_TIMEOUT_S"], env["MNEMO_SKIP_TOOLS"]) == ("hash", "2.5", "A,B")
    assert "MNEMO_CURSOR_TTL_S" not in env  # defaults are not repeated


def test_registration_text_names_the_command_and_home(settings):
    text = registration_text(settings)
    assert "claude mcp add -s user mcp-search -e MNEMO_HOME=" in text and text.count(" mcp") >= 1
    assert '"mcpServers"' in text and str(settings.home) in text
