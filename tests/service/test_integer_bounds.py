"""Every integer field of every StoreService and SearchService request, at the edges of its
type (and at 2^53 + 1, past what JSON carries exactly), never answers INTERNAL or UNKNOWN: each
is bounded where it enters (issue 35). The fields are enumerated from the descriptors, so a
field added later is tried too; each is set alone on an otherwise valid request (nested in its
message's first element), and sent with the service token and with a confined user token, on
both store backends."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from google.protobuf import json_format, message_factory
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message

from mnemo.grpc_client import open_channel
from mnemo.v1 import search_pb2, search_pb2_grpc, store_pb2, store_pb2_grpc
from search_svc import access as search_access
from store_svc import access as store_access
from tests.conftest import add_observation
from tests.server_runtime_support import TeamServer

pytestmark = [pytest.mark.service, pytest.mark.slow]

SERVICE_TOKEN = "integer-bounds-service-token"
INT32 = {FieldDescriptor.TYPE_INT32, FieldDescriptor.TYPE_SINT32, FieldDescriptor.TYPE_SFIXED32}
INT64 = {FieldDescriptor.TYPE_INT64, FieldDescriptor.TYPE_SINT64, FieldDescriptor.TYPE_SFIXED64}
UNSIGNED = {FieldDescriptor.TYPE_UINT32, FieldDescriptor.TYPE_UINT64, FieldDescriptor.TYPE_FIXED32,
            FieldDescriptor.TYPE_FIXED64}
EDGES = {
    "int32": (2**31 - 1, -(2**31), -1),
    "int64": (2**63 - 1, -(2**63), 2**53 + 1, -1),
    "uint": (2**32 - 1,),
}
NEVER = {grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN}

_OBS = {"memory_session_id": "m1", "project": "alpha", "type": "discovery", "title": "bounds", "tool_use_ids": [1]}
_SUM = {"memory_session_id": "m1", "project": "alpha", "request": "bounds"}
_TOOL = {"content_session_id": "c1", "project": "alpha", "tool_name": "Read", "tool_use_id": "t1",
         "observation_ids": [1]}
_FILTERS = {"project": "alpha", "date_start_epoch": 1, "date_end_epoch": 2}
_PAGE = {"limit": 5, "offset": 0}
_JOB = {"kind": "prime", "outcome": "running"}
_TURN = {"question": "q", "answer": "a", "citations": [1]}
# A valid request of every RPC with an integer field, every nested message present once.
STORE_BASES: dict[str, dict] = {
    "UpsertSession": {"content_session_id": "c1", "project": "alpha", "started_at_epoch": 1},
    "RecordPrompt": {"content_session_id": "c1", "project": "alpha", "prompt_text": "hi", "prompt_number": 1},
    "AddObservations": {"observations": [_OBS]},
    "AddSummaries": {"summaries": [_SUM]},
    "RecordToolUse": {"tool_use": _TOOL},
    "GetRecords": {"refs": [{"kind": "DOC_KIND_OBSERVATION", "id": 1}]},
    "Hydrate": {"refs": [{"kind": "DOC_KIND_OBSERVATION", "id": 1}], "filters": _FILTERS},
    "GetToolUses": {"ids": [1], "observation_ids": [1], "limit": 5},
    "ListRecent": {"filters": _FILTERS, "page": _PAGE},
    "Search": {"query": "bounds", "filters": _FILTERS, "page": _PAGE},
    "Timeline": {"ref": {"kind": "DOC_KIND_OBSERVATION", "id": 1}, "depth_before": 1, "depth_after": 1,
                 "filters": _FILTERS},
    "DeleteRecords": {"refs": [{"kind": "DOC_KIND_OBSERVATION", "id": 999}]},
    "ReadChanges": {"after_seq": 0, "limit": 5},
    "SaveCursor": {"token": "ms_" + "A" * 24, "state_json": "{}"},
    "LoadCursor": {"token": "ms_" + "A" * 24},
    "PurgeCursors": {},
    "WriteWorkState": {"project": "alpha", "content": "plan", "expected_version": 0},
    "ReadWorkState": {"project": "alpha", "history": 1},
    "PutCorpus": {"name": "kb", "filter": {**_FILTERS, "limit": 5}, "observation_ids": [1],
                  "stats": {"observation_count": 1}, "last_job": _JOB, "history": [_TURN]},
    "UpdateCorpus": {"name": "kb", "project": "alpha", "last_job": _JOB, "append_turn": _TURN},
    "Import": {"items": [
        {"session": {"content_session_id": "ci", "project": "alpha", "started_at_epoch": 1}},
        {"prompt": {"content_session_id": "ci", "project": "alpha", "prompt_text": "p", "prompt_number": 1}},
        {"observation": {**_OBS, "memory_session_id": "ci", "external_id": "x1"}},
        {"summary": {**_SUM, "memory_session_id": "ci", "external_id": "x2"}},
        {"tool_use": {**_TOOL, "content_session_id": "ci"}},
    ]},
    "Forget": {"refs": [{"kind": "DOC_KIND_OBSERVATION", "id": 999}]},
    "EditObservation": {"id": 1, "title": "edited"},
    "Activity": {"project": "alpha", "days": 7},
    "MarkWrong": {"refs": [{"kind": "DOC_KIND_OBSERVATION", "id": 1}]},
    "RevokeToken": {"id": 999},
    "AcquireLease": {"name": "bounds", "holder": "me", "ttl_ms": 1000},
}
SEARCH_BASES: dict[str, dict] = {
    "Search": {"query": "bounds", "limit": 5},
    "Timeline": {"anchor": "#1", "depth_before": 1, "depth_after": 1},
    "GetObservations": {"ids": [1], "limit": 5},
    "MemSearch": {"query": "bounds", "limit": 5, "max_details": 1, "depth_before": 1, "depth_after": 1},
    "GetToolUses": {"observation_ids": [1], "limit": 5},
    "WriteWorkState": {"project": "alpha", "content": "plan", "expected_version": 0},
    "ReadWorkState": {"project": "alpha", "history": 1},
    "SessionStartContext": {"project": "alpha", "token_budget": 500},
    "BuildCorpus": {"name": "kb2", "filter": {**_FILTERS, "limit": 5}},
    "QueryCorpus": {"name": "kb", "question": "bounds?", "limit": 3},
    "EditObservation": {"id": 1, "title": "edited"},
    "Overview": {"project": "alpha", "days": 7},
    "ObservationRecordEvent": {"project_id": "alpha", "event_type": "note", "payload_json": '{"text": "x"}',
                               "occurred_at_epoch": 1},
    "ObservationSearch": {"project_id": "alpha", "query": "bounds", "limit": 5},
    "ObservationContext": {"project_id": "alpha", "query": "bounds", "limit": 5},
}


def _kind(field: FieldDescriptor) -> str | None:
    if field.type in INT32:
        return "int32"
    if field.type in INT64:
        return "int64"
    return "uint" if field.type in UNSIGNED else None


def integer_paths(descriptor: Descriptor, prefix: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], str]]:
    """(path, kind) of every integer field, nested messages (not maps) included."""
    for field in descriptor.fields:
        kind = _kind(field)
        if kind:
            yield (*prefix, field.name), kind
        elif field.type == FieldDescriptor.TYPE_MESSAGE and not field.message_type.GetOptions().map_entry:
            yield from integer_paths(field.message_type, (*prefix, field.name))


def with_value(base: Message, path: tuple[str, ...], value: int) -> Message | None:
    """A copy of `base` with the field at `path` set to `value` (in a repeated message field, in
    the first element that holds the next field); None when the base has no such element."""
    request = type(base)()
    request.CopyFrom(base)
    target: Message = request
    for name in path[:-1]:
        field = target.DESCRIPTOR.fields_by_name[name]
        if field.is_repeated:
            nxt = path[path.index(name) + 1]
            elements = [e for e in getattr(target, name) if nxt not in e.DESCRIPTOR.oneofs_by_name
                        and (e.DESCRIPTOR.fields_by_name[nxt].message_type is None or e.HasField(nxt))]
            if not elements:
                return None
            target = elements[0]
        else:
            target = getattr(target, name)
    leaf = target.DESCRIPTOR.fields_by_name[path[-1]]
    if leaf.is_repeated:
        del getattr(target, path[-1])[:]
        getattr(target, path[-1]).append(value)
    else:
        setattr(target, path[-1], value)
    return request


def _cases(service: str, bases: dict[str, dict]) -> Iterator[tuple[object, str, Message]]:
    module = store_pb2 if service == "StoreService" else search_pb2
    for method in module.DESCRIPTOR.services_by_name[service].methods:
        paths = list(integer_paths(method.input_type))
        if not paths:
            continue
        assert method.name in bases, f"{service}/{method.name} has integer fields and no base request here"
        base = json_format.ParseDict(bases[method.name], message_factory.GetMessageClass(method.input_type)())
        for path, kind in paths:
            for value in EDGES[kind]:
                request = with_value(base, path, value)
                if request is not None:
                    yield method, f"{method.name}: {'.'.join(path)}={value}", request


@pytest.fixture(params=["sqlite", "postgres"])
def team(request):
    overrides = {}
    if request.param == "postgres":
        overrides = {"store_backend": "postgres", "store_dsn": request.getfixturevalue("postgres_database")}
    with tempfile.TemporaryDirectory(prefix="mnemo-int-") as home:
        server = TeamServer.start(Path(home), SERVICE_TOKEN, user_tokens=True, token_cache_s=0.0, **overrides)
        admin = open_channel(server.store_addr, auth_token=SERVICE_TOKEN)
        try:
            store = store_pb2_grpc.StoreServiceStub(admin)
            add_observation(store, project="alpha", title="bounds")
            secret = store.AddToken(store_pb2.AddTokenRequest(user="ana", projects=["alpha"])).secret
            yield server, secret
        finally:
            admin.close()
            server.stop()


def _run(address: str, token: str, service: str, bases: dict[str, dict], allowed: set[str]) -> tuple[int, list[str]]:
    """(calls made, calls answered INTERNAL or UNKNOWN) over every case of `service`."""
    channel = open_channel(address, auth_token=token)
    stub = (store_pb2_grpc.StoreServiceStub if service == "StoreService" else search_pb2_grpc.SearchServiceStub)(
        channel)
    calls, bad = 0, []
    try:
        for method, label, request in _cases(service, bases):
            if method.name not in allowed:
                continue
            calls += 1
            call = getattr(stub, method.name)
            try:
                list(call(request, timeout=30)) if method.server_streaming else call(request, timeout=30)
            except grpc.RpcError as err:
                if err.code() in NEVER:
                    bad.append(f"{label}: {err.code().name} {err.details()}")
    finally:
        channel.close()
    return calls, bad


@pytest.mark.parametrize("who", ["service", "user"])
def test_no_integer_at_its_edges_answers_internal(team, who):
    server, secret = team
    token = SERVICE_TOKEN if who == "service" else secret
    store_allowed = set(STORE_BASES) if who == "service" else set(store_access.RULES)
    search_allowed = set(SEARCH_BASES) if who == "service" else set(search_access.RULES)
    store_calls, store_bad = _run(server.store_addr, token, "StoreService", STORE_BASES, store_allowed)
    search_calls, search_bad = _run(server.url, token, "SearchService", SEARCH_BASES, search_allowed)
    assert store_calls > 150 and search_calls > 60, (store_calls, search_calls)
    assert store_bad + search_bad == []
