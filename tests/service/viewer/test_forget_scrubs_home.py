"""Forgetting really deletes: after a forget, no file under the home holds the text
(the database, its WAL, the FTS indexes, the vector index, logs), and every other record
stays searchable."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mnemo.errors import NotFound
from mnemo.grpc_client import connect
from mnemo.v1 import common_pb2, search_pb2, search_pb2_grpc, store_pb2
from tests.conftest import add_observation, sync_vectors

SECRET = "zanzibarquokka"  # one token, so FTS5 and the trigram index would both keep it


def files_containing(home: Path, needle: bytes) -> list[str]:
    found = []
    for root, _dirs, files in os.walk(home):
        for name in files:
            path = Path(root) / name
            if path.is_socket():
                continue
            if needle in path.read_bytes():
                found.append(str(path.relative_to(home)))
    return found


@pytest.fixture
def search(stack):
    client = connect(stack, "search", search_pb2_grpc.SearchServiceStub)
    yield client.stub
    client.close()


def test_forgotten_observation_text_is_in_no_file_under_the_home(stack, store_stub, vector_stub, search):
    keep = add_observation(store_stub, title="Keep this one about caching", narrative="a survivor note")
    doomed = add_observation(store_stub, title=f"Secret {SECRET} decision", narrative=f"{SECRET} narrative " * 50,
                             facts=[f"the {SECRET} fact"])
    store_stub.RecordToolUse(store_pb2.RecordToolUseRequest(tool_use=common_pb2.ToolUse(
        content_session_id="s1", tool_name="Bash", tool_use_id="t1", tool_input=f'{{"cmd": "echo {SECRET}"}}',
        tool_response=SECRET, observation_ids=[doomed])))
    sync_vectors(vector_stub)
    assert search.Search(search_pb2.SearchRequest(query=SECRET)).rows
    assert files_containing(stack.home, SECRET.encode())  # the check can see the text while it is there

    reply = search.Forget(search_pb2.ForgetToolRequest(ids=[f"#{doomed}"]))

    assert (reply.deleted.observations, reply.deleted.tool_uses) == (1, 1)
    assert reply.vectors_synced
    assert doomed not in [r.ref.id for r in search.Search(search_pb2.SearchRequest(query=SECRET)).rows]
    assert files_containing(stack.home, SECRET.encode()) == []
    assert [r.ref.id for r in search.Search(search_pb2.SearchRequest(query="caching")).rows][:1] == [keep]


def test_forgetting_a_session_or_project_takes_everything_filed_under_it(stack, store_stub, search):
    store_stub.RecordPrompt(store_pb2.RecordPromptRequest(content_session_id="s1", project="alpha",
                                                          prompt_text=f"please remember {SECRET}"))
    add_observation(store_stub, project="alpha", session="s1", title=f"{SECRET} in alpha")
    add_observation(store_stub, project="beta", session="s2", title=f"{SECRET} in beta")
    store_stub.WriteWorkState(store_pb2.WriteWorkStateRequest(project="beta", content=f"working on {SECRET}"))

    by_session = search.Forget(search_pb2.ForgetToolRequest(sessions=["s1"])).deleted
    assert (by_session.sessions, by_session.prompts, by_session.observations) == (1, 1, 1)
    by_project = search.Forget(search_pb2.ForgetToolRequest(project="beta")).deleted
    assert (by_project.sessions, by_project.observations) == (1, 1)

    assert files_containing(stack.home, SECRET.encode()) == []
    assert not store_stub.ReadWorkState(store_pb2.ReadWorkStateRequest(project="beta")).HasField("current")


def test_forgetting_nothing_known_is_not_found_and_bad_ids_name_the_field(stack, search):
    with pytest.raises(NotFound):
        search.Forget(search_pb2.ForgetToolRequest(ids=["#999"]))
    from mnemo.errors import InvalidArgument

    with pytest.raises(InvalidArgument, match="ids"):
        search.Forget(search_pb2.ForgetToolRequest(ids=["DROP TABLE"]))
    with pytest.raises(InvalidArgument, match="refs"):
        search.Forget(search_pb2.ForgetToolRequest())
