"""No TCP listener without a credential, loopback included: any user of the machine can reach
127.0.0.1. Only `--insecure-no-auth` (a name that says what it costs) lifts the rule there,
with a warning at start; Unix sockets in the private run directory need no token."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import time

import grpc
import pytest

from mnemo.errors import InvalidArgument
from mnemo.grpc_client import check_health
from mnemo.grpc_server import build_server, check_bind_policy
from mnemo.v1 import store_pb2, store_pb2_grpc
from tests.conftest import REPO_ROOT, subprocess_env
from tests.grpcurl_support import free_port, mnemo_command

pytestmark = pytest.mark.service


@pytest.mark.parametrize("listen", ["127.0.0.1:0", "localhost:7000", "[::1]:7000"])
def test_loopback_tcp_without_a_token_is_refused(listen):
    with pytest.raises(InvalidArgument, match="every user of this machine"):
        check_bind_policy(listen)
    check_bind_policy(listen, auth_token="t")
    check_bind_policy(listen, insecure_no_auth=True)


def test_beyond_loopback_the_unsafe_flag_lifts_nothing():
    with pytest.raises(InvalidArgument, match="beyond loopback"):
        check_bind_policy("0.0.0.0:7000", auth_token="t", insecure_no_auth=True)


def test_a_unix_socket_needs_no_token(tmp_path):
    check_bind_policy(f"unix:{tmp_path}/s.sock")


def test_build_server_refuses_loopback_tcp_without_a_token():
    with pytest.raises(InvalidArgument, match="--insecure-no-auth"):
        build_server("127.0.0.1:0", lambda server: [])


def _serve(settings, *flags: str) -> tuple[subprocess.Popen, str]:
    address = f"127.0.0.1:{free_port()}"
    proc = subprocess.Popen([*mnemo_command(), "serve", "store", "--listen", address, *flags], cwd=REPO_ROOT,
                            env=subprocess_env(settings, PYTHONPATH=str(REPO_ROOT)), stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    return proc, address


def test_mnemo_serve_on_loopback_without_a_token_exits_and_creates_nothing(settings):
    proc, _ = _serve(settings)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode != 0
    assert "--auth-token-file" in stderr and "--insecure-no-auth" in stderr, stderr
    assert not settings.database.exists()


def test_insecure_no_auth_serves_and_warns_at_start(settings):
    proc, address = _serve(settings, "--insecure-no-auth")
    try:
        deadline = time.monotonic() + 60
        while not check_health(address, timeout=0.5):
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()[1][-2000:]
        with grpc.insecure_channel(address) as channel:  # no token at all: that is what the flag allows
            assert store_pb2_grpc.StoreServiceStub(channel).Stats(store_pb2.StatsRequest(), timeout=10)
    finally:
        proc.terminate()
        _, stderr = proc.communicate(timeout=30)
    assert "unauthenticated_listener" in stderr and "WARNING: 127.0.0.1" in stderr


def test_a_served_token_refuses_calls_without_it(settings):
    token_file = settings.home / "service.token"
    made = subprocess.run([*mnemo_command(), "server", "token", "service-file", str(token_file)], cwd=REPO_ROOT,
                          env=subprocess_env(settings, PYTHONPATH=str(REPO_ROOT)), capture_output=True, text=True,
                          timeout=60)
    assert made.returncode == 0, made.stderr
    proc, address = _serve(settings, "--auth-token-file", str(token_file))
    try:
        deadline = time.monotonic() + 60
        while not check_health(address, timeout=0.5):
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()[1][-2000:]
        with grpc.insecure_channel(address) as channel, pytest.raises(grpc.RpcError) as refused:
            store_pb2_grpc.StoreServiceStub(channel).Stats(store_pb2.StatsRequest(), timeout=10)
        assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED
    finally:
        proc.terminate()
        proc.communicate(timeout=30)


def test_service_file_is_born_private_and_never_overwritten(tmp_path):
    from mnemo.server_tokens import write_service_token

    path = tmp_path / "service.token"
    old_umask = os.umask(0)  # even a permissive umask gives a 0600 file
    try:
        assert write_service_token(str(path))
    finally:
        os.umask(old_umask)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    first = path.read_text()
    assert len(first.strip()) >= 43
    assert not write_service_token(str(path))
    assert path.read_text() == first
    link = tmp_path / "planted"
    link.symlink_to(tmp_path / "elsewhere")
    assert not write_service_token(str(link))  # O_EXCL: a planted link is never followed
    assert not (tmp_path / "elsewhere").exists()


def test_the_cli_parses_the_unsafe_flag():
    done = subprocess.run([sys.executable, "-m", "mnemo.cli", "serve", "--help"], cwd=REPO_ROOT,
                          capture_output=True, text=True, timeout=60)
    assert "--insecure-no-auth" in done.stdout
