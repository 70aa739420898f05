"""The hooks' standard-library HTTP/2 client against a real store_svc."""

from __future__ import annotations

import json

import pytest

from capture import rpcs
from capture.client import HookClients
from mnemo.errors import InvalidArgument
from mnemo.h2c import CallFailed, H2Channel, Refused
from mnemo.v1 import common_pb2, store_pb2

pytestmark = pytest.mark.service


def socket_path(settings) -> str:
    return settings.address("store")[len("unix:"):]


def test_unary_calls_share_one_connection_and_respect_flow_control(settings, store_server):
    channel = H2Channel(socket_path(settings), 10.0)
    try:
        session = common_pb2.Session.FromString(channel.unary(
            "/mnemo.v1.StoreService/UpsertSession",
            store_pb2.UpsertSessionRequest(content_session_id="s1", project="p").SerializeToString(), 10.0))
        assert session.memory_session_id == "s1"
        big = json.dumps({"stdout": "x" * 3_000_000})  # far beyond the 64 KiB initial windows
        for n in range(3):
            request = store_pb2.RecordToolUseRequest(tool_use=common_pb2.ToolUse(
                content_session_id="s1", project="p", tool_name="Bash", tool_use_id=f"t{n}", tool_response=big))
            row = common_pb2.ToolUse.FromString(
                channel.unary("/mnemo.v1.StoreService/RecordToolUse", request.SerializeToString(), 10.0))
            assert row.response_truncated and row.response_size == len(big) and row.tool_use_id == f"t{n}"
        with pytest.raises(CallFailed):  # an error status arrives as trailers only
            channel.unary("/mnemo.v1.StoreService/UpsertSession", store_pb2.UpsertSessionRequest().SerializeToString(),
                          10.0)
    finally:
        channel.close()


def test_a_missing_socket_is_refused(settings):
    with pytest.raises(Refused):
        H2Channel(str(settings.run_dir / "nothing.sock"), 1.0)


def test_hook_clients_fall_back_to_grpc_for_the_typed_error(settings, store_server):
    clients = HookClients(settings)
    try:
        session = clients.call(
            rpcs.UPSERT_SESSION, store_pb2.UpsertSessionRequest(content_session_id="s2", project="p")
        )
        assert session.project == "p" and clients.lean_failures == []
        with pytest.raises(InvalidArgument) as caught:
            clients.call(rpcs.UPSERT_SESSION, store_pb2.UpsertSessionRequest(project="p"))
        assert "content_session_id" in str(caught.value)
        assert len(clients.lean_failures) == 1
    finally:
        clients.close()
