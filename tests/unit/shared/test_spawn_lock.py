"""The spawn lock is an flock that dies with its owner: a pid in the file decides nothing."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest

from mnemo import spawnlock
from mnemo.stack import lock_path, release_lock, try_acquire_lock
from tests.conftest import REPO_ROOT

pytestmark = pytest.mark.unit

HOLDER = """
import sys, time
from pathlib import Path
from mnemo import spawnlock
assert spawnlock.acquire(Path(sys.argv[1]))
print("held", flush=True)
time.sleep(600)
"""


def start_holder(path) -> subprocess.Popen:
    """Another process that takes the lock and keeps it until it is killed."""
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(path)], stdout=subprocess.PIPE, text=True,
                            cwd=str(REPO_ROOT), env={**os.environ, "PYTHONPATH": str(REPO_ROOT)})
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    return proc


def test_a_lock_file_naming_a_live_unrelated_pid_does_not_block(settings):
    # pid 1 is alive and is not a mnemo starter: the pid reuse case of the issue.
    lock_path(settings).write_text(json.dumps({"pid": 1, "started_at": 0}))
    assert try_acquire_lock(settings)
    assert json.loads(lock_path(settings).read_text())["pid"] == os.getpid()
    release_lock(settings)
    assert not lock_path(settings).exists()


def test_the_lock_is_exclusive_while_its_owner_lives(settings):
    holder = start_holder(lock_path(settings))
    try:
        assert not try_acquire_lock(settings)
        assert spawnlock.is_held(lock_path(settings))
        release_lock(settings)  # not ours: left alone
        assert lock_path(settings).exists() and not try_acquire_lock(settings)
    finally:
        holder.kill()
        holder.wait()
        holder.stdout.close()


def test_an_owner_killed_mid_start_leaves_nothing_that_blocks(settings):
    holder = start_holder(lock_path(settings))
    holder.send_signal(signal.SIGKILL)
    holder.wait()
    holder.stdout.close()
    assert lock_path(settings).exists()  # its file stays, but nobody holds it any more
    assert not spawnlock.is_held(lock_path(settings))
    assert try_acquire_lock(settings)
    release_lock(settings)


def test_the_owner_cannot_take_its_own_lock_twice_and_releases_it(settings):
    assert try_acquire_lock(settings)
    assert not try_acquire_lock(settings)
    release_lock(settings)
    assert not lock_path(settings).exists()
    assert try_acquire_lock(settings)
    release_lock(settings)
