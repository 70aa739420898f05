"""The local stack's lifecycle with real processes: one stack for many starters, retry on
refused, `mnemo up` / `status` / `down`, and `up --foreground` stopping cleanly."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest

from mnemo.config import SERVICES
from mnemo.stack import pid_alive, read_pid, run_down
from tests.conftest import processes_of, subprocess_env
from tests.service.gateway.mcp_support import REPO_ROOT, gateway_env, mcp_session, result_text

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

MNEMO = [sys.executable, "-m", "mnemo.cli"]


def services_of(home: Path) -> dict[str, list[int]]:
    """Every `mnemo.cli serve <svc>` process whose MNEMO_HOME is this test's home."""
    found: dict[str, list[int]] = {svc: [] for svc in SERVICES}
    for pid, argv in processes_of(home):
        if b"serve" not in argv:
            continue
        for svc in SERVICES:
            if svc.encode() in argv and pid_alive(pid):
                found[svc].append(pid)
    return found


@pytest.fixture
def clean_stack(settings):
    """Whatever a test starts in its home is stopped afterwards, pid files or not."""
    yield settings
    run_down(settings, None)
    for pids in services_of(settings.home).values():
        for pid in pids:
            os.kill(pid, signal.SIGKILL)


def mnemo(settings, *args, timeout=120):
    return subprocess.run([*MNEMO, *args], env=subprocess_env(settings), cwd=str(REPO_ROOT),
                          capture_output=True, text=True, timeout=timeout)


STARTER = "from mnemo.config import load_settings; from mnemo.stack import ensure_stack; " \
          "print(ensure_stack(load_settings(), 90), flush=True)"


def test_ten_concurrent_starters_start_one_stack_then_up_status_down(clean_stack):
    settings = clean_stack
    starters = [subprocess.Popen([sys.executable, "-c", STARTER], env=subprocess_env(settings),
                                 cwd=str(REPO_ROOT), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
                for _ in range(10)]
    outputs = [p.communicate(timeout=120)[0].strip() for p in starters]
    assert outputs == ["True"] * 10
    running = services_of(settings.home)
    assert all(len(pids) == 1 for pids in running.values()), running
    for svc in SERVICES:
        assert read_pid(settings, svc).pid == running[svc][0]
    assert not (settings.run_dir / "spawn.lock").exists()

    up = mnemo(settings, "up")  # idempotent: nothing new is started
    assert up.returncode == 0, up.stdout + up.stderr
    assert "claude mcp add -s user mcp-search -e MNEMO_HOME=" in up.stdout and " mcp\n" in up.stdout
    assert '"mcpServers"' in up.stdout
    assert services_of(settings.home) == running

    status = mnemo(settings, "status")
    assert status.returncode == 0, status.stdout + status.stderr
    assert status.stdout.count("healthy") == 3
    for svc in SERVICES:
        assert str(running[svc][0]) in status.stdout and settings.address(svc) in status.stdout
    down = mnemo(settings, "down")
    assert down.returncode == 0 and down.stdout.count("stopped") == 3
    assert mnemo(settings, "status").returncode == 1
    assert not any(services_of(settings.home).values())
    assert not list(settings.run_dir.glob("*.pid"))


@pytest.mark.parametrize("store_backend", ["sqlite", "postgres"])  # postgres: MNEMO_STORE_BACKEND/_DSN in the env
def test_refused_tool_call_starts_the_stack_and_succeeds_after_one_retry(clean_stack, store_backend):
    settings = clean_stack
    assert not any(services_of(settings.home).values())  # nothing on the sockets
    env = gateway_env(settings, MNEMO_LOG_LEVEL="info", MNEMO_MCP_STRUCTURED_CONTENT="true")  # reads ids

    async def scenario():
        async with mcp_session(env) as session:
            saved = await session.call_tool("save_memory", {"text": "the gateway started the stack on demand"})
            assert not saved.is_error, result_text(saved)
            found = await session.call_tool("search", {"query": "stack on demand"})
            assert f"#{saved.structured_content['id']}" in result_text(found)

    anyio.run(scenario)
    if store_backend == "postgres":  # the memory went to PostgreSQL, not to a SQLite file
        import psycopg

        assert not settings.database.exists()
        with psycopg.connect(settings.store_dsn) as conn:
            assert conn.execute("SELECT count(*) FROM observations").fetchone()[0] == 1
    log_lines = (settings.logs_dir / "gateway.log").read_text().splitlines()
    assert sum('"stack_refused_starting"' in line for line in log_lines) == 1  # one start, one retry
    # The stack outlives the gateway (detached on purpose), one process per service.
    assert all(len(pids) == 1 for pids in services_of(settings.home).values())
    assert mnemo(settings, "status").returncode == 0


def test_up_foreground_stops_everything_on_ctrl_c(clean_stack):
    settings = clean_stack
    proc = subprocess.Popen([*MNEMO, "up", "--foreground"], env=subprocess_env(settings), cwd=str(REPO_ROOT),
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    lines = []
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            lines.append(line)
            if line.startswith("mnemo viewer: http://127.0.0.1:"):
                break
        assert lines and lines[-1].startswith("mnemo viewer: http://127.0.0.1:"), "".join(lines)
        assert any(line.startswith("Serving.") for line in lines)
        assert any("claude mcp add -s user mcp-search" in line for line in lines)
        running = services_of(settings.home)
        assert all(len(pids) == 1 for pids in running.values())
        assert [argv for _, argv in processes_of(settings.home) if b"ui" in argv]  # make run serves the viewer
        proc.send_signal(signal.SIGINT)
        assert proc.wait(30) == 0
        assert not any(services_of(settings.home).values())
        assert not [argv for _, argv in processes_of(settings.home) if b"ui" in argv]
        assert not list(settings.run_dir.glob("*.pid"))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
