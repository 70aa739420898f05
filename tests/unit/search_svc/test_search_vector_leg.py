"""The vector leg of a hybrid search (search_svc.semantic.VectorLeg): the watermark comes back with
VectorService.Query, so no Status call precedes it; a vector_svc that does not send it is asked
for Status instead, and the pending records are the same either way."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from mnemo.rpc_context import INDEX_MODEL_KEY, INDEX_WATERMARK_KEY
from mnemo.v1 import common_pb2, store_pb2, vector_pb2
from search_svc.semantic import VectorLeg, VectorProbe, _Pending

pytestmark = pytest.mark.unit

OBS = common_pb2.DOC_KIND_OBSERVATION


class _Call:
    def __init__(self, trailer: tuple[tuple[str, str], ...]):
        self._trailer = trailer

    def trailing_metadata(self) -> tuple[tuple[str, str], ...]:
        return self._trailer


class _Query:
    def __init__(self, stubs: _Stubs):
        self._stubs = stubs

    def with_call(self, request: Any, timeout: float) -> tuple[Any, _Call]:
        self._stubs.calls.append("Query")
        reply = vector_pb2.VectorQueryResponse(hits=[vector_pb2.VectorHit(ref=common_pb2.Ref(kind=OBS, id=1),
                                                                          distance=0.5)])
        return reply, _Call(self._stubs.trailer)


class _Stubs:
    """The vector and store stubs the leg calls, recording the calls."""

    def __init__(self, trailer: tuple[tuple[str, str], ...]):
        self.trailer, self.calls = trailer, []
        self.Query = _Query(self)

    def Status(self, request: Any, timeout: float) -> vector_pb2.VectorStatusResponse:
        self.calls.append("Status")
        return vector_pb2.VectorStatusResponse(watermark=7, head_seq=9, lag=2, model="old-model")

    def Hydrate(self, request: store_pb2.HydrateRequest) -> store_pb2.HydrateResponse:
        self.calls.append("Hydrate")
        return store_pb2.HydrateResponse(rows=[common_pb2.IndexRow(ref=ref) for ref in request.refs])

    def ReadChanges(self, request: store_pb2.ReadChangesRequest) -> store_pb2.ReadChangesResponse:
        self.calls.append(f"ReadChanges after {request.after_seq}")
        return store_pb2.ReadChangesResponse(head_seq=9, changes=[
            store_pb2.Change(seq=8, ref=common_pb2.Ref(kind=OBS, id=5)),
            store_pb2.Change(seq=9, ref=common_pb2.Ref(kind=OBS, id=6))])


def _leg(stubs: _Stubs) -> tuple[VectorLeg, VectorProbe]:
    backend: Any = SimpleNamespace(vector=SimpleNamespace(stub=stubs), store=SimpleNamespace(stub=stubs))
    probe = VectorProbe(backend)
    return VectorLeg(backend, probe), probe


def _search(leg: VectorLeg) -> Any:
    reply, since = leg.neighbours([vector_pb2.VectorQueryRequest(text="q")], timeout=1.0)
    return leg.complete(reply, since, common_pb2.Filters())


def test_the_watermark_and_model_come_with_the_query_and_no_status_is_asked():
    stubs = _Stubs(((INDEX_WATERMARK_KEY, "7"), (INDEX_MODEL_KEY, "minilm")))
    leg, probe = _leg(stubs)
    semantic = _search(leg)
    assert stubs.calls == ["Query", "Hydrate", "ReadChanges after 7"]
    assert semantic.pending == _Pending(frozenset({(OBS, 5), (OBS, 6)}), {})
    assert probe.model() == "minilm" and stubs.calls.count("Status") == 0


def test_a_vector_svc_that_sends_no_watermark_is_asked_for_status_and_then_before_each_query():
    stubs = _Stubs(())
    leg, _ = _leg(stubs)
    first = _search(leg)
    assert stubs.calls == ["Query", "Status", "Hydrate", "ReadChanges after 7"]
    stubs.calls.clear()
    second = _search(leg)
    assert stubs.calls == ["Status", "Query", "Hydrate", "ReadChanges after 7"]
    assert first.pending == second.pending == _Pending(frozenset({(OBS, 5), (OBS, 6)}), {})
