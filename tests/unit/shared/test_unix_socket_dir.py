"""A Unix socket's directory is made private, and a shared one (/tmp) is refused, never chmodded."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from mnemo.errors import InvalidArgument
from mnemo.grpc_server import build_server

pytestmark = pytest.mark.unit


def test_a_socket_in_a_directory_of_ones_own_makes_it_private(tmp_path: Path):
    run = tmp_path / "run"
    run.mkdir(mode=0o755)
    handle = build_server(f"unix:{run / 's.sock'}", lambda server: [])
    try:
        assert stat.S_IMODE(run.stat().st_mode) == 0o700
    finally:
        handle.stop(0)


def test_a_shared_sticky_directory_is_refused_and_left_as_it_was(tmp_path: Path):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    with pytest.raises(InvalidArgument) as refused:
        build_server(f"unix:{shared / 's.sock'}", lambda server: [])
    assert refused.value.field == "listen" and "shared with other users" in str(refused.value)
    assert stat.S_IMODE(shared.stat().st_mode) == 0o1777
