"""The viewer with no stack behind it says so in words (never a gRPC status, never "No
records yet"), and a new browser gets in through a fresh link without a restart."""

from __future__ import annotations

import pytest
from starlette.testclient import TestClient

from mnemo.config import load_settings
from viewer import live
from viewer.app import build_app
from viewer.auth import COOKIE, LINK_HEADER, LINK_PATH, Gate
from viewer.client import MemoryClient

PORT = 8124
BASE = f"http://127.0.0.1:{PORT}"


@pytest.fixture
def nowhere(tmp_path):
    """A client of a home where no stack runs."""
    client = MemoryClient(load_settings({"home": str(tmp_path), "rpc_timeout_s": "2"}))
    yield client
    client.close()


@pytest.fixture
def gate():
    return Gate()


@pytest.fixture
def web(nowhere, gate, tmp_path):
    with TestClient(build_app(nowhere, tmp_path, gate, lambda: PORT), base_url=BASE) as client:
        yield client


def login(web, token: str) -> None:
    assert web.get(f"/?token={token}", follow_redirects=False).status_code == 303


def test_the_timeline_says_the_stack_is_down_in_words(web, gate):
    login(web, gate.token)
    page = web.get("/").text
    assert live.DOWN_TEXT.split(":")[0] in page and "mnemo up" in page
    assert "UNAVAILABLE" not in page and 'data-down="yes"' in page
    assert '<li class="empty">Records show here when the stack is back.</li>' in page


def test_other_pages_and_the_api_say_it_too(web, gate):
    login(web, gate.token)
    search = web.get("/search?q=anything")
    assert search.status_code == 503 and "not running" in search.text and "UNAVAILABLE:" not in search.text
    api = web.get("/api/search?q=anything").json()
    assert api == {"error": "UNAVAILABLE", "message": live.DOWN_TEXT}


def test_the_live_state_of_a_down_stack_has_no_rows_and_a_plain_problem(nowhere, tmp_path):
    state = live.snapshot(nowhere, tmp_path, "", live.RowCache(nowhere, ""))
    assert state["down"] is True and state["problem"] == live.DOWN_TEXT and "rows" not in state
    assert state["services"] == {"store": False, "vector": False, "search": False}


def test_a_fresh_link_needs_the_link_secret_and_works_once(web, gate):
    assert web.post(LINK_PATH).status_code == 403
    assert web.post(LINK_PATH, headers={LINK_HEADER: "wrong"}).status_code == 403
    token = web.post(LINK_PATH, headers={LINK_HEADER: gate.link_secret}).json()["token"]
    login(web, token)
    assert COOKIE in web.cookies
    web.cookies.clear()
    assert web.get(f"/?token={token}").status_code == 403  # spent
