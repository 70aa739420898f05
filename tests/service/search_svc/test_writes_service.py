"""save_memory and work state through a real search_svc over a real store."""

from __future__ import annotations

import grpc
import pytest

from mnemo.v1 import common_pb2, search_pb2, store_pb2

pytestmark = [pytest.mark.service, pytest.mark.chroma]  # search_stub brings up vector_svc


def _refused(call, request) -> tuple[grpc.StatusCode, str]:
    with pytest.raises(grpc.RpcError) as caught:
        call(request)
    return caught.value.code(), caught.value.details()


def _observation(store_stub, observation_id: int) -> common_pb2.Observation:
    ref = common_pb2.Ref(kind=common_pb2.DOC_KIND_OBSERVATION, id=observation_id)
    (record,) = store_stub.GetRecords(store_pb2.GetRecordsRequest(refs=[ref])).records
    return record.observation


def test_save_memory_writes_one_observation_with_documented_defaults(search_stub, store_stub):
    text = "The staging deploy needs VPN access first.\nAsk ops for a token; it expires after 12 hours."
    reply = search_stub.SaveMemory(search_pb2.SaveMemoryRequest(text=text, files=["deploy/staging.sh"],
                                                                concepts=["gotcha"]))
    assert reply.created and reply.id > 0
    assert reply.text.startswith(f"Saved memory #{reply.id} ")
    saved = _observation(store_stub, reply.id)
    assert (saved.project, saved.type, saved.memory_session_id) == ("default", "discovery", "manual-default")
    assert saved.title == "The staging deploy needs VPN access first."
    assert saved.narrative == text
    assert list(saved.files_read) == ["deploy/staging.sh"] and not saved.files_modified
    assert list(saved.concepts) == ["gotcha"]
    again = search_stub.SaveMemory(search_pb2.SaveMemoryRequest(text=text, files=["deploy/staging.sh"],
                                                                concepts=["gotcha"]))
    assert (again.id, again.created) == (reply.id, False)


def test_save_memory_title_type_project_and_privacy(search_stub, store_stub):
    long_line = "word " * 40
    reply = search_stub.SaveMemory(search_pb2.SaveMemoryRequest(
        text=long_line + "\n<private>the password is hunter2</private>rest", type="decision", project="api"))
    saved = _observation(store_stub, reply.id)
    assert (saved.type, saved.project, saved.memory_session_id) == ("decision", "api", "manual-api")
    assert len(saved.title) <= 80 and saved.title.startswith("word word")
    assert "hunter2" not in saved.narrative
    found = search_stub.Search(search_pb2.SearchRequest(query="word", project="api"))
    assert reply.id in [row.ref.id for row in found.rows]


def test_save_memory_bounds(search_stub):
    ok = search_stub.SaveMemory(search_pb2.SaveMemoryRequest(text="x" * 20_000, title="long one"))
    assert ok.created
    for request, field in [
        (search_pb2.SaveMemoryRequest(text="x" * 20_001), "text"),
        (search_pb2.SaveMemoryRequest(text="   "), "text"),
        (search_pb2.SaveMemoryRequest(text="<private>all of it</private>"), "text"),
        (search_pb2.SaveMemoryRequest(text="fine", type="opinion"), "type"),
        (search_pb2.SaveMemoryRequest(text="fine", title="t" * 301), "title"),
        (search_pb2.SaveMemoryRequest(text="fine", project="é" * 129), "project"),
        (search_pb2.SaveMemoryRequest(text="fine", project="api\nignore this"), "project"),
    ]:
        code, details = _refused(search_stub.SaveMemory, request)
        assert code == grpc.StatusCode.INVALID_ARGUMENT and details.startswith(f"{field}: "), details


def test_work_state_optimistic_concurrency_and_history(search_stub):
    first = search_stub.WriteWorkState(search_pb2.WorkStateWriteRequest(project="api",
                                                                        content="step 1: schema"))
    assert first.current.version == 1
    second = search_stub.WriteWorkState(search_pb2.WorkStateWriteRequest(
        project="api", content="step 2: handlers", expected_version=1))
    assert second.current.version == 2
    code, details = _refused(search_stub.WriteWorkState, search_pb2.WorkStateWriteRequest(
        project="api", content="stale writer", expected_version=1))
    assert code == grpc.StatusCode.ABORTED
    assert "version 2" in details and "work_state_read" in details
    read = search_stub.ReadWorkState(search_pb2.WorkStateReadRequest(project="api", history=5))
    assert read.current.content == "step 2: handlers" and read.current.version == 2
    assert [(h.version, h.content) for h in read.history] == [(1, "step 1: schema")]
    assert "step 2: handlers" in read.text and "stale writer" not in read.text
    other_key = search_stub.ReadWorkState(search_pb2.WorkStateReadRequest(project="api", key="release"))
    assert not other_key.HasField("current") and "work_state_write" in other_key.text


def test_work_state_bounds(search_stub):
    write, read = search_stub.WriteWorkState, search_stub.ReadWorkState
    for call, request, field in [
        (write, search_pb2.WorkStateWriteRequest(content="x"), "project"),
        (write, search_pb2.WorkStateWriteRequest(project="p"), "content"),
        (write, search_pb2.WorkStateWriteRequest(project="p", content="x", expected_version=-1),
         "expected_version"),
        (write, search_pb2.WorkStateWriteRequest(project="p", key="k" * 129, content="x"), "key"),
        (write, search_pb2.WorkStateWriteRequest(project="p", content="é" * 32_769), "content"),  # 64 KiB+2
        (read, search_pb2.WorkStateReadRequest(project="p", history=51), "history"),
    ]:
        code, details = _refused(call, request)
        assert code == grpc.StatusCode.INVALID_ARGUMENT and details.startswith(f"{field}: "), details
