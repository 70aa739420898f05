"""mnemo.health: the standard-library health check agrees with grpc's on a real server's socket."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from mnemo.grpc_client import check_health
from mnemo.grpc_server import build_server
from mnemo.health import unix_healthy

pytestmark = pytest.mark.unit


def test_a_serving_server_is_healthy_and_one_shutting_down_is_not(tmp_path: Path):
    run = tmp_path / "run"
    run.mkdir(mode=0o700)
    sock = run / "s.sock"
    handle = build_server(f"unix:{sock}", lambda server: [], auth_token="a-token-the-check-needs-not")
    try:
        assert unix_healthy(str(sock)) is True
        assert check_health(f"unix:{sock}") is True
        handle.health.enter_graceful_shutdown()  # every service NOT_SERVING, as on SIGTERM
        assert unix_healthy(str(sock)) is False
        assert check_health(f"unix:{sock}") is False
    finally:
        handle.stop(0)


def test_nothing_listening_is_not_healthy(tmp_path: Path):
    assert unix_healthy(str(tmp_path / "none.sock")) is False
    (tmp_path / "file.sock").write_text("not a socket")
    assert unix_healthy(str(tmp_path / "file.sock")) is False


def test_a_server_that_never_answers_is_not_healthy_within_the_timeout(tmp_path: Path):
    import socket

    path = tmp_path / "mute.sock"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(1)  # accepts the connection in the kernel, never reads or writes
    try:
        assert unix_healthy(str(path), timeout=0.2) is False
    finally:
        listener.close()


def test_the_health_check_imports_no_grpc():
    code = "import sys; from mnemo.processes import service_healthy; print('grpc' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_the_supervisors_command_line_imports_no_grpc():
    """`mnemo supervise` parses its own flags alone: the full parser imports the viewer's client."""
    code = ("import sys; from mnemo.cli import parse; args = parse(['supervise']); "
            "from mnemo.processes import service_healthy; print(args.command, 'grpc' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["supervise", "False"]
