"""The stack heals itself: a service killed with -9 is restarted by the supervisor (with
backoff) and `mnemo status` counts it; a starter killed mid-start blocks no later start."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from mnemo import supervisor
from mnemo.config import SERVICES
from mnemo.stack import lock_path, read_pid, run_down, service_healthy
from tests.conftest import REPO_ROOT, processes_of, subprocess_env, wait_for

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

MNEMO = [sys.executable, "-m", "mnemo.cli"]
STARTER = "from mnemo.config import load_settings; from mnemo.stack import ensure_stack; " \
          "print(ensure_stack(load_settings(), 90), flush=True)"


@pytest.fixture
def clean_home(settings):
    yield settings
    run_down(settings, None)
    for pid, argv in processes_of(settings.home):
        if b"serve" in argv or b"supervise" in argv:
            os.kill(pid, signal.SIGKILL)


def mnemo(settings, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*MNEMO, *args], env=subprocess_env(settings), cwd=str(REPO_ROOT),
                          capture_output=True, text=True, timeout=120)


def restarts_shown(status_output: str, service: str) -> int:
    """The RESTARTS column of `mnemo status` for one service."""
    for line in status_output.splitlines():
        fields = line.split()
        if fields and fields[0] == service:
            return int(fields[4])
    raise AssertionError(f"{service} missing from status:\n{status_output}")


def test_a_service_killed_with_sigkill_is_restarted_and_counted(clean_home):
    settings = clean_home
    up = mnemo(settings, "up")
    assert up.returncode == 0, up.stdout + up.stderr
    assert supervisor.is_running(settings)
    status = mnemo(settings, "status").stdout
    assert all(restarts_shown(status, svc) == 0 for svc in SERVICES), status

    victim = read_pid(settings, "vector")
    assert victim is not None
    os.kill(victim.pid, signal.SIGKILL)

    def restarted():
        info = read_pid(settings, "vector")
        return info is not None and info.pid != victim.pid and service_healthy(settings, "vector")

    wait_for(restarted, 60, "vector_svc restarted by the supervisor")
    status = mnemo(settings, "status")
    assert status.returncode == 0, status.stdout
    assert restarts_shown(status.stdout, "vector") == 1 and restarts_shown(status.stdout, "store") == 0
    assert "supervisor: running" in status.stdout

    down = mnemo(settings, "down")  # the supervisor goes first: nothing comes back after down
    assert down.returncode == 0 and not supervisor.is_running(settings)
    assert not any(service_healthy(settings, svc) for svc in SERVICES)


def test_a_starter_killed_mid_start_blocks_no_later_start(clean_home):
    settings = clean_home
    env = subprocess_env(settings)
    starter = subprocess.Popen([sys.executable, "-c", STARTER], env=env, cwd=str(REPO_ROOT),
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    # Kill it while it holds the spawn lock or waits for the stack it asked for.
    wait_for(lambda: lock_path(settings).exists() or supervisor.is_running(settings), 30, "the start to begin")
    starter.send_signal(signal.SIGKILL)
    starter.wait()

    second = subprocess.run([sys.executable, "-c", STARTER], env=env, cwd=str(REPO_ROOT), capture_output=True,
                            text=True, timeout=120)
    assert second.stdout.strip() == "True", second.stderr[-2000:]
    running = {svc: [pid for pid, argv in processes_of(settings.home) if b"serve" in argv and svc.encode() in argv]
               for svc in SERVICES}
    assert all(len(pids) == 1 for pids in running.values()), running  # one stack, never two
    supervisors = [pid for pid, argv in processes_of(settings.home) if b"supervise" in argv]
    assert len(supervisors) == 1, supervisors
