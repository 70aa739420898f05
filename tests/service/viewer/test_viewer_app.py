"""The viewer's web app and the terminal commands over a real stack: the one-time token,
escaping, one search engine for viewer, terminal and mem_search, and forgetting."""

from __future__ import annotations

import argparse
import json

import pytest
from starlette.testclient import TestClient

from mnemo.grpc_client import connect
from mnemo.v1 import search_pb2, search_pb2_grpc
from tests.conftest import add_observation, sync_vectors
from viewer import doctor, terminal
from viewer.app import build_app
from viewer.auth import COOKIE, Gate

PORT = 8123
BASE = f"http://127.0.0.1:{PORT}"
PAYLOAD = "<script>alert('x')</script>"


@pytest.fixture
def gate():
    return Gate()


@pytest.fixture
def web(stack, memory, gate):
    with TestClient(build_app(memory, stack.home, gate, lambda: PORT), base_url=BASE) as client:
        yield client


def login(web, gate) -> None:
    reply = web.get(f"/?token={gate.token}", follow_redirects=False)
    assert reply.status_code == 303 and "token" not in reply.headers["location"]
    assert COOKIE in reply.cookies


def seed(store_stub, vector_stub) -> list[int]:
    ids = [
        add_observation(store_stub, title="Login redirect loop fixed by clearing the stale cookie", type="bugfix",
                        narrative=f"The auth middleware kept a stale cookie {PAYLOAD}", files_modified=["src/auth.py"]),
        add_observation(store_stub, title="Use argon2 for password hashing", type="decision",
                        narrative="bcrypt was too slow for the login tests"),
        add_observation(store_stub, project="beta", title="Cache login pages at the edge", narrative="login cache"),
    ]
    sync_vectors(vector_stub)
    return ids


def test_the_token_works_once_and_nothing_is_served_without_the_cookie(web, gate):
    token = gate.token
    assert web.get("/").status_code == 403
    login(web, gate)
    assert web.get("/").status_code == 200
    web.cookies.clear()
    assert web.get(f"/?token={token}").status_code == 403  # spent
    assert web.get("/api/recent").status_code == 403


def test_a_foreign_host_header_or_origin_is_refused(web, gate):
    login(web, gate)
    assert web.get("/", headers={"host": f"evil.example:{PORT}"}).status_code == 403
    reply = web.post("/forget", data={"id": "1", "confirm": "yes"}, headers={"origin": "http://evil.example"})
    assert reply.status_code == 403


def test_record_content_is_escaped_in_every_page(web, gate, store_stub, vector_stub):
    first = seed(store_stub, vector_stub)[0]
    add_observation(store_stub, title=PAYLOAD)
    login(web, gate)
    for path in ("/", f"/record/{first}", "/search?q=stale+cookie"):
        html = web.get(path).text
        assert PAYLOAD not in html, path
    assert "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;" in web.get(f"/record/{first}").text


def test_viewer_terminal_and_mem_search_return_the_same_ids(stack, web, gate, store_stub, vector_stub, capsys):
    seed(store_stub, vector_stub)
    login(web, gate)
    search = connect(stack, "search", search_pb2_grpc.SearchServiceStub)
    try:
        mem = search.stub.MemSearch(search_pb2.MemSearchRequest(query="login cookie", project="alpha", limit=10))
    finally:
        search.close()
    expected = [r.display_id.lstrip("#") for r in mem.rows]
    assert expected
    viewer_ids = [r["id"] for r in web.get("/api/search", params={"q": "login cookie", "project": "alpha",
                                                                 "limit": 10}).json()["rows"]]
    parser = argparse.ArgumentParser()
    terminal.add_arguments("search", parser)
    terminal.run_search(stack, parser.parse_args(["login cookie", "--project", "alpha", "--limit", "10", "--json"]))
    terminal_ids = [r["id"] for r in json.loads(capsys.readouterr().out)["rows"]]
    assert viewer_ids == expected == terminal_ids


def test_filters_narrow_the_search(web, gate, store_stub, vector_stub):
    seed(store_stub, vector_stub)
    login(web, gate)
    rows = web.get("/api/search", params={"q": "login", "type": "decision"}).json()["rows"]
    assert [r["type"] for r in rows] == ["decision"]
    rows = web.get("/api/search", params={"q": "login", "file": "src/auth"}).json()["rows"]
    assert [r["file"] for r in rows] == ["src/auth.py"]
    assert web.get("/api/search", params={"q": "login", "from": "yesterday"}).status_code == 200
    bad = web.get("/api/search", params={"q": "login", "from": "someday"})
    assert bad.status_code == 400 and "from" in bad.json()["message"]


def test_forgetting_from_the_viewer_needs_confirmation_and_then_deletes(web, gate, store_stub, vector_stub, memory):
    first = seed(store_stub, vector_stub)[0]
    login(web, gate)
    refused = web.post("/forget", data={"id": str(first)})
    assert refused.status_code == 400 and "confirm" in refused.text
    done = web.post("/forget", data={"id": str(first), "confirm": "yes"}, follow_redirects=False)
    assert done.status_code == 303 and "Forgot" in web.get(done.headers["location"]).text
    assert web.get(f"/record/{first}").status_code == 404


def test_editing_an_observation_changes_what_search_finds(web, gate, store_stub, vector_stub, memory):
    second = seed(store_stub, vector_stub)[1]
    login(web, gate)
    web.post(f"/record/{second}/edit", data={"title": "Adopt scrypt instead", "type": "change",
                                             "concepts": "security, trade-off"})
    detail = memory.detail(str(second))
    assert (detail.record.observation.title, detail.record.observation.type) == ("Adopt scrypt instead", "change")
    assert list(detail.record.observation.concepts) == ["security", "trade-off"]
    bad = web.post(f"/record/{second}/edit", data={"type": "Not A Type"})
    assert bad.status_code == 400 and "type" in bad.text


def test_terminal_show_stats_forget_and_doctor(stack, store_stub, vector_stub, capsys, monkeypatch):
    first = seed(store_stub, vector_stub)[0]

    def run(command, argv):
        parser = argparse.ArgumentParser()
        terminal.add_arguments(command, parser)
        code = getattr(terminal, f"run_{command}")(stack, parser.parse_args(argv))
        return code, capsys.readouterr()

    code, out = run("show", [str(first)])
    assert code == 0 and "Login redirect loop" in out.out and "src/auth.py" in out.out
    code, out = run("stats", [])
    assert code == 0 and "observations" in out.out and "activity" in out.out
    monkeypatch.setattr("sys.stdin.isatty", lambda: False)
    code, out = run("forget", [str(first)])
    assert code == 1 and "--yes" in out.err
    code, out = run("forget", [str(first), "--yes"])
    assert code == 0 and "Forgot 1 observation." in out.out
    code = doctor.run_doctor(stack, argparse.Namespace(json=True))
    checks = {c["check"]: c for c in json.loads(capsys.readouterr().out)["checks"]}
    assert checks["search_svc"]["status"] == checks["store_svc"]["status"] == "ok"
