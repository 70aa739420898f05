"""Marking a record wrong over the real stack: hybrid search (lexical and vector halves),
mem_search, get_observations, the viewer and `mnemo mark-wrong` all stop returning it;
undo brings it back; the viewer still shows it to its owner, marked."""

from __future__ import annotations

import argparse
import json

import pytest
from starlette.testclient import TestClient

from mnemo.errors import InvalidArgument, NotFound
from mnemo.v1 import search_pb2
from tests.conftest import add_observation, sync_vectors
from viewer import terminal
from viewer.app import build_app
from viewer.auth import Gate

PORT = 8124
BASE = f"http://127.0.0.1:{PORT}"


@pytest.fixture
def seeded(store_stub, vector_stub) -> tuple[int, int]:
    wrong = add_observation(store_stub, title="Retry the flaky upload three times",
                            narrative="the upload endpoint fails under load; retrying fixes it", type="decision")
    right = add_observation(store_stub, title="Upload failures came from a missing content length",
                            narrative="setting the header fixed the upload for good", type="bugfix")
    sync_vectors(vector_stub)
    return wrong, right


def ids_of(rows) -> list[int]:
    return [row.ref.id for row in rows]


def test_a_marked_record_is_returned_by_no_search_and_undo_brings_it_back(search_stub, memory, seeded):
    wrong, right = seeded
    queries = ("flaky upload retry", "repeat the failing transfer several times")
    for query in queries:  # both halves find it while it is not marked
        assert wrong in ids_of(search_stub.Search(search_pb2.SearchRequest(query=query)).rows), query

    reply = memory.mark_wrong([f"#{wrong}"], reason="the real cause was the header")
    assert [r.id for r in reply.changed] == [wrong] and "wrong" in reply.text

    # Hybrid (lexical plus vector), semantic-only wording, mem_search and the recent listing.
    for query in queries:
        assert wrong not in ids_of(search_stub.Search(search_pb2.SearchRequest(query=query)).rows), query
    mem = search_stub.MemSearch(search_pb2.MemSearchRequest(query="upload", limit=10))
    assert f"#{wrong}" not in [row.display_id for row in mem.rows] and f"#{right}" in [r.display_id for r in mem.rows]
    assert wrong not in ids_of(memory.recent())
    fetched = search_stub.GetObservations(search_pb2.GetObservationsRequest(ids=[wrong, right]))
    assert [o.id for o in fetched.observations] == [right]
    assert f"Marked wrong by the owner (not shown): #{wrong}" in fetched.text

    # The owner still sees it, with the mark and the reason.
    detail = memory.detail(str(wrong))
    assert detail.record.marked_wrong.reason == "the real cause was the header"

    assert [r.id for r in memory.mark_wrong([str(wrong)], undo=True).changed] == [wrong]
    assert wrong in ids_of(search_stub.Search(search_pb2.SearchRequest(query="flaky upload retry")).rows)
    assert not memory.detail(str(wrong)).record.HasField("marked_wrong")


def test_bad_ids_name_the_field_and_unknown_ids_are_not_found(memory, seeded):
    with pytest.raises(InvalidArgument, match=r"ids\[0\]"):
        memory.mark_wrong(["DROP TABLE"])
    with pytest.raises(NotFound, match="#999"):
        memory.mark_wrong(["999"])


def test_the_viewer_marks_and_unmarks_from_the_record_page(stack, memory, seeded):
    wrong, _ = seeded
    gate = Gate()
    with TestClient(build_app(memory, stack.home, gate, lambda: PORT), base_url=BASE) as web:
        web.get(f"/?token={gate.token}")
        reason = "<b>stale</b> advice"
        done = web.post(f"/record/{wrong}/wrong", data={"reason": reason}, follow_redirects=False)
        assert done.status_code == 303 and done.headers["location"] == f"/record/{wrong}"
        page = web.get(f"/record/{wrong}").text
        assert 'id="wrong-banner"' in page and "&lt;b&gt;stale&lt;/b&gt; advice" in page and reason not in page
        assert str(wrong) not in [row["id"] for row in web.get("/api/recent").json()["rows"]]
        web.post(f"/record/{wrong}/wrong", data={"undo": "yes"})
        assert 'id="wrong-banner"' not in web.get(f"/record/{wrong}").text
        assert str(wrong) in [row["id"] for row in web.get("/api/recent").json()["rows"]]
        bad = web.post("/record/nonsense/wrong", data={})
        assert bad.status_code == 400 and "ids[0]" in bad.text


def test_terminal_mark_wrong_and_show(stack, seeded, capsys):
    wrong, _ = seeded

    def run(command: str, argv: list[str]) -> tuple[int, str]:
        parser = argparse.ArgumentParser()
        terminal.add_arguments(command, parser)
        function = getattr(terminal, f"run_{command.replace('-', '_')}")
        code = function(stack, parser.parse_args(argv))
        return code, capsys.readouterr().out

    code, out = run("mark-wrong", [str(wrong), "--reason", "superseded"])
    assert code == 0 and f"#{wrong}" in out
    code, out = run("show", [str(wrong)])
    assert code == 0 and "MARKED WRONG" in out and "superseded" in out
    code, out = run("search", ["flaky upload", "--json"])
    assert str(wrong) not in [row["id"] for row in json.loads(out)["rows"]]
    code, out = run("mark-wrong", [str(wrong), "--undo", "--json"])
    assert code == 0 and json.loads(out)["changed"][0] == {"kind": "observation", "id": wrong}
