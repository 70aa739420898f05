"""The error contract, table-driven: every MnemoError class raised inside a real servicer path
becomes its gRPC status code, and error_from_rpc() rebuilds the same class and message."""

from __future__ import annotations

import grpc
import pytest

from mnemo import errors
from mnemo.grpc_client import error_from_rpc, open_channel
from mnemo.grpc_server import build_server
from mnemo.v1 import store_pb2, store_pb2_grpc
from store_svc.core import Store
from store_svc.servicer import register

pytestmark = pytest.mark.service


def _make(cls: type[errors.MnemoError]) -> errors.MnemoError:
    return cls("field_x", "a rule that was broken") if cls is errors.InvalidArgument else cls(f"{cls.__name__} says no")


class _RaisingStore(Store):
    """The real store and servicer, with Stats raising whatever the test asks for."""

    to_raise: errors.MnemoError | None = None

    def stats(self, request):
        if self.to_raise is not None:
            raise self.to_raise
        return super().stats(request)


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    store = _RaisingStore(tmp_path_factory.mktemp("errs") / "mnemo.db")
    handle = build_server("127.0.0.1:0", lambda server: register(server, store), insecure_no_auth=True)
    channel = open_channel(handle.address)
    yield store, store_pb2_grpc.StoreServiceStub(channel)
    channel.close()
    handle.stop(0)
    store.close()


@pytest.mark.parametrize("cls", errors.ALL_ERRORS, ids=lambda c: c.__name__)
def test_each_error_class_maps_to_its_status_and_back(served, cls):
    store, stub = served
    store.to_raise = _make(cls)
    try:
        with pytest.raises(grpc.RpcError) as err:
            stub.Stats(store_pb2.StatsRequest(), timeout=10)
    finally:
        store.to_raise = None
    assert err.value.code() == getattr(grpc.StatusCode, cls.code)
    rebuilt = error_from_rpc(err.value)
    assert type(rebuilt) is cls and str(rebuilt) == str(_make(cls))


def test_an_unexpected_exception_is_internal_without_a_traceback(served):
    store, stub = served
    store.to_raise = None

    original = store.stats
    store.stats = lambda request: (_ for _ in ()).throw(ZeroDivisionError("secret internals"))
    try:
        with pytest.raises(grpc.RpcError) as err:
            stub.Stats(store_pb2.StatsRequest(), timeout=10)
    finally:
        store.stats = original
    assert err.value.code() == grpc.StatusCode.INTERNAL
    assert "secret internals" not in err.value.details() and "ref=" in err.value.details()
