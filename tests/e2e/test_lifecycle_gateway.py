"""The gateway leaves no orphans: it exits on stdin close, on SIGTERM, and when its parent dies."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from mnemo.stack import pid_alive
from tests.service.gateway.mcp_support import GATEWAY_ARGV, REPO_ROOT, FaultySearch, gateway_env, start_fake_search

pytestmark = pytest.mark.e2e

INITIALIZE = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}) + "\n"


@pytest.fixture
def fake_env(settings):
    address = f"unix:{settings.run_dir / 'fake-search.sock'}"
    handle = start_fake_search(FaultySearch(), address)
    yield gateway_env(settings, MNEMO_SEARCH_ADDR=address, MNEMO_STORE_ADDR=address, MNEMO_VECTOR_ADDR=address,
                      MNEMO_PARENT_CHECK_INTERVAL_S="0.5")
    handle.stop(0)


def wait_gone(pid: int, timeout: float) -> bool:
    """Whether `pid` exits within `timeout` (a bound for a hung test, not a measure of speed)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not pid_alive(pid):
            return True
        time.sleep(0.05)
    return False


def serving_gateway(env: dict[str, str]) -> subprocess.Popen:
    """A gateway that answered initialize, so its signal handlers and stdin reader are armed."""
    proc = subprocess.Popen(GATEWAY_ARGV, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, env=env, cwd=str(REPO_ROOT))
    proc.stdin.write(INITIALIZE.encode())
    proc.stdin.flush()
    assert json.loads(proc.stdout.readline())["id"] == 1
    return proc


def test_exits_when_stdin_closes(fake_env):
    with serving_gateway(fake_env) as proc:
        proc.stdin.close()
        assert proc.wait(10) == 0


def test_exits_on_sigterm(fake_env):
    with serving_gateway(fake_env) as proc:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(10) == 0


INTERMEDIATE = """
import os, subprocess, sys
argv = sys.argv[3:]
gateway = subprocess.Popen(argv, stdin=int(sys.argv[1]), stdout=int(sys.argv[2]), stderr=subprocess.DEVNULL,
                           pass_fds=(int(sys.argv[1]), int(sys.argv[2])))
print(gateway.pid, flush=True)
gateway.wait()
"""


def test_exits_when_its_parent_dies_even_with_stdin_open(fake_env):
    # The test keeps the write end of the gateway's stdin, so only the parent check can end it.
    stdin_r, stdin_w = os.pipe()
    stdout_r, stdout_w = os.pipe()
    parent = subprocess.Popen([sys.executable, "-c", INTERMEDIATE, str(stdin_r), str(stdout_w), *GATEWAY_ARGV],
                              stdout=subprocess.PIPE, env=fake_env, cwd=str(REPO_ROOT),
                              pass_fds=(stdin_r, stdout_w))
    os.close(stdin_r)
    os.close(stdout_w)
    gateway_pid = None
    try:
        gateway_pid = int(parent.stdout.readline())
        os.write(stdin_w, INITIALIZE.encode())
        with os.fdopen(os.dup(stdout_r), "rb") as out:
            assert json.loads(out.readline())["id"] == 1  # serving, and its parent check is armed
        parent.kill()
        parent.wait()
        # Nothing but the parent check can end it: its stdin stays open and no signal is sent.
        assert wait_gone(gateway_pid, 30.0), "the gateway outlived its parent"
    finally:
        os.close(stdin_w)
        os.close(stdout_r)
        parent.stdout.close()
        if gateway_pid and pid_alive(gateway_pid):
            os.kill(gateway_pid, signal.SIGKILL)
