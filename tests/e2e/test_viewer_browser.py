"""The viewer in a real browser: headless Chromium (Debian's package) driven over the
DevTools protocol with the `websockets` package; no browser is downloaded at run time.

`mnemo ui` runs as a subprocess (`python -m viewer`) over a real stack; hooks are replayed
as real `mnemo hook` processes. Screenshots go to $MNEMO_SCREENSHOT_DIR (default: a
`mnemo-viewer-screenshots` folder in the temp dir).
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from websockets.sync.client import ClientConnection, connect

from bench.replay import make_workspace, payloads, run_hook
from mnemo.config import Settings
from mnemo.grpc_client import connect as connect_service
from mnemo.v1 import common_pb2, search_pb2_grpc, store_pb2, store_pb2_grpc
from tests.conftest import subprocess_env, wait_for

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or "/usr/bin/chromium"
pytestmark = pytest.mark.skipif(
    not os.access(CHROMIUM, os.X_OK),
    reason="no Chromium: install Debian's `chromium` package (apt-get install -y chromium) to run the browser tests",
)
SCREENSHOTS = Path(os.environ.get("MNEMO_SCREENSHOT_DIR") or Path(tempfile.gettempdir()) / "mnemo-viewer-screenshots")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--remote-debugging-port=0", "--window-size=1280,900", "--hide-scrollbars"]
LIVE_BUDGET_S = 2.0


class Page:
    """One Chromium tab over CDP: navigate, evaluate, wait, screenshot."""

    def __init__(self, ws: ClientConnection):
        self.ws, self._next = ws, 0
        self.call("Page.enable")
        self.call("Runtime.enable")

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        self._next += 1
        self.ws.send(json.dumps({"id": self._next, "method": method, "params": params}))
        while True:
            message = json.loads(self.ws.recv(timeout=30))
            if message.get("id") == self._next:
                if "error" in message:
                    raise AssertionError(f"{method}: {message['error']}")
                return message.get("result", {})

    def evaluate(self, expression: str) -> Any:
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise AssertionError(f"page script failed: {result['exceptionDetails']}")
        return result["result"].get("value")

    def goto(self, url: str) -> None:
        self.call("Page.navigate", url=url)
        self.wait_ready()

    def wait_ready(self) -> None:
        time.sleep(0)  # let navigation start before the ready check below
        wait_for(lambda: self.evaluate("document.readyState === 'complete' && !!document.body"), 10, "page load")

    def click(self, selector: str) -> None:
        self.evaluate(f"document.querySelector({json.dumps(selector)}).click()")

    def key(self, key: str) -> None:
        self.evaluate(f"document.dispatchEvent(new KeyboardEvent('keydown', {{key: {json.dumps(key)}}}))")

    def screenshot(self, name: str) -> Path:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        # A page that has just loaded can be laid out at 0 width for a moment (Chromium then
        # refuses the capture): wait until it has a size.
        wait_for(lambda: self.evaluate("document.readyState === 'complete' && !!document.body"
                                       " && document.documentElement.scrollWidth > 0"
                                       " && document.documentElement.scrollHeight > 0"), 10, "a laid-out page")
        data = self.call("Page.captureScreenshot", format="png", captureBeyondViewport=True)["data"]
        path = SCREENSHOTS / f"{name}.png"
        path.write_bytes(base64.b64decode(data))
        return path


@pytest.fixture
def browser() -> Iterator[Page]:
    profile = Path(tempfile.mkdtemp(prefix="mnemo-chromium-"))
    proc = subprocess.Popen([CHROMIUM, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        port_file = profile / "DevToolsActivePort"
        wait_for(lambda: port_file.exists() and len(port_file.read_text().splitlines()) >= 2, 20, "Chromium to start")
        port = int(port_file.read_text().splitlines()[0])
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=5) as reply:
            targets = json.loads(reply.read())
        page_ws = next(t["webSocketDebuggerUrl"] for t in targets if t["type"] == "page")
        with connect(page_ws, max_size=None, open_timeout=10) as ws:
            yield Page(ws)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture
def viewer_url(stack: Settings) -> Iterator[str]:
    env = subprocess_env(stack)
    proc = subprocess.Popen([sys.executable, "-m", "viewer", "--port", "0"], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, cwd=Path(__file__).resolve().parents[2])
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("mnemo viewer: http://127.0.0.1:"), line
        yield line.split(": ", 1)[1].strip()
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        if proc.stdout is not None:
            proc.stdout.close()


def timeline_ids(page: Page) -> list[str]:
    return page.evaluate("Array.from(document.querySelectorAll('#timeline .row')).map(r => r.dataset.id)") or []


def store_ids(settings: Settings) -> set[str]:
    client = connect_service(settings, "store", store_pb2_grpc.StoreServiceStub)
    try:
        rows = client.stub.ListRecent(store_pb2.ListRecentRequest(page=common_pb2.Page(limit=50))).rows
    finally:
        client.close()
    return {r.display_id.lstrip("#") for r in rows}


def test_viewer_shows_each_replayed_hook_live_then_searches_opens_and_forgets(stack, viewer_url, browser, tmp_path):
    browser.goto(viewer_url)  # redeems the one-time token, lands on the timeline with a cookie
    assert "token=" not in browser.evaluate("location.href")
    assert browser.evaluate("document.title").startswith("Timeline")
    repo, transcript = make_workspace(tmp_path)
    env = subprocess_env(stack)
    latencies = []
    for event, payload in payloads(repo, transcript):
        done = run_hook(event, payload, env)
        assert done.returncode == 0, done.stderr
        finished = time.monotonic()
        expected = store_ids(stack)
        wait_for(lambda expected=expected: expected <= set(timeline_ids(browser)), LIVE_BUDGET_S,
                 f"the timeline to show {sorted(expected)} after {event}")
        latencies.append(time.monotonic() - finished)
    assert timeline_ids(browser), "the replayed session produced no records"
    assert max(latencies) < LIVE_BUDGET_S
    browser.goto(viewer_url.split("?")[0])  # counts and the chart are drawn on load
    browser.screenshot("timeline")

    browser.key("/")
    assert browser.evaluate("document.activeElement.id") == "quick-search"
    browser.evaluate("document.getElementById('quick-search').value = 'checkout'; "
                     "document.querySelector('form.quick').submit()")
    browser.wait_ready()
    wait_for(lambda: browser.evaluate("location.pathname") == "/search", 5, "the search page")
    results = browser.evaluate("Array.from(document.querySelectorAll('#results .row')).map(r => r.dataset.id)")
    assert results, "the search found nothing for 'checkout'"
    browser.screenshot("search")

    browser.key("j")
    browser.key("Enter")
    wait_for(lambda: browser.evaluate("location.pathname").startswith("/record/"), 5, "the record page")
    browser.wait_ready()
    opened = browser.evaluate("document.querySelector('article.record').dataset.record")
    assert opened == results[0]
    browser.screenshot("record")

    browser.key("d")
    assert browser.evaluate("document.getElementById('forget').open") is True
    browser.click("#forget-button")
    wait_for(lambda: browser.evaluate("location.pathname") == "/", 5, "the timeline after forgetting")
    browser.wait_ready()
    assert "Forgot" in browser.evaluate("document.querySelector('.notice').textContent")
    assert opened not in timeline_ids(browser)
    assert opened not in store_ids(stack)


def test_stored_script_payload_renders_as_inert_text(stack, viewer_url, browser):
    client = connect_service(stack, "search", search_pb2_grpc.SearchServiceStub)
    payload = "<script>document.title='pwned';window.__pwned=1</script><img src=x onerror=\"window.__pwned=2\">"
    from mnemo.v1 import search_pb2

    saved = client.stub.SaveMemory(search_pb2.SaveMemoryRequest(text=f"{payload} narrative", title=payload,
                                                                project="xss"))
    client.close()
    browser.goto(viewer_url)
    browser.goto(viewer_url.split("?")[0] + f"record/{saved.id}")
    assert browser.evaluate("document.getElementById('record-title').textContent") == payload
    assert browser.evaluate("window.__pwned === undefined")
    assert browser.evaluate("document.querySelectorAll('article script, article img').length") == 0
    assert not browser.evaluate("document.title").startswith("pwned")
    browser.goto(viewer_url.split("?")[0])  # the live timeline renders it through textContent too
    wait_for(lambda: str(saved.id) in timeline_ids(browser), 3, "the payload in the timeline")
    browser.evaluate("new Promise(r => setTimeout(r, 1200))")  # one live refresh of the list
    assert browser.evaluate("window.__pwned === undefined")
    assert browser.evaluate("document.querySelectorAll('#timeline script, #timeline img').length") == 0


def search_result_ids(page: Page, base: str, query: str) -> list[str]:
    page.goto(f"{base}search?q={urllib.parse.quote(query)}")
    return page.evaluate("Array.from(document.querySelectorAll('#results .row')).map(r => r.dataset.id)") or []


def test_marking_a_record_wrong_from_the_keyboard_hides_it_until_undone(stack, viewer_url, browser):
    from mnemo.v1 import search_pb2

    client = connect_service(stack, "search", search_pb2_grpc.SearchServiceStub)
    try:
        saved = client.stub.SaveMemory(search_pb2.SaveMemoryRequest(
            text="The staging database listens on port 6543", title="Staging database port", project="ops"))
    finally:
        client.close()
    base = viewer_url.split("?")[0]
    browser.goto(viewer_url)
    assert str(saved.id) in search_result_ids(browser, base, "staging database port")

    browser.goto(f"{base}record/{saved.id}")
    browser.key("w")
    assert browser.evaluate("document.getElementById('wrong').open") is True
    assert browser.evaluate("document.activeElement.name") == "reason"
    browser.evaluate("document.activeElement.value = 'it moved to 5433'")
    browser.click("#wrong-button")
    wait_for(lambda: browser.evaluate("!!document.getElementById('wrong-banner')"), 5, "the wrong banner")
    assert "it moved to 5433" in browser.evaluate("document.getElementById('wrong-banner').textContent")
    browser.screenshot("record-marked-wrong")
    assert str(saved.id) not in search_result_ids(browser, base, "staging database port")

    browser.goto(f"{base}record/{saved.id}")
    browser.key("w")
    browser.click("#wrong-button")  # the same key and button take the mark back
    wait_for(lambda: browser.evaluate("!document.getElementById('wrong-banner')"), 5, "the banner to go")
    assert str(saved.id) in search_result_ids(browser, base, "staging database port")


def count_shown(page: Page, name: str) -> int:
    return int(page.evaluate(f"document.querySelector('[data-count=\"{name}\"]').textContent"))


def save_memory(settings: Settings, text: str) -> int:
    from mnemo.v1 import search_pb2

    client = connect_service(settings, "search", search_pb2_grpc.SearchServiceStub)
    try:
        return int(client.stub.SaveMemory(search_pb2.SaveMemoryRequest(text=text, project="live")).id)
    finally:
        client.close()


def set_hidden(page: Page, hidden: bool) -> None:
    """What a browser does when the tab goes to the background (or comes back)."""
    page.evaluate(f"Object.defineProperty(document, 'hidden', {{value: {json.dumps(hidden)}, configurable: true}});"
                  "document.dispatchEvent(new Event('visibilitychange'))")


def test_counts_and_the_list_are_pushed_live_and_a_hidden_tab_pauses(stack, viewer_url, browser):
    browser.goto(viewer_url)
    wait_for(lambda: browser.evaluate("stream !== null && stream.readyState === 1"), 5, "the event stream")
    before = count_shown(browser, "observations")
    first = save_memory(stack, "Counters follow the store without a reload")
    wait_for(lambda: count_shown(browser, "observations") == before + 1, LIVE_BUDGET_S, "the count to follow")
    wait_for(lambda: str(first) in timeline_ids(browser), LIVE_BUDGET_S, "the new record in the list")

    set_hidden(browser, True)
    assert browser.evaluate("stream === null")  # a hidden tab holds no stream and asks nothing
    second = save_memory(stack, "Saved while the tab was hidden")
    assert count_shown(browser, "observations") == before + 1
    set_hidden(browser, False)
    wait_for(lambda: count_shown(browser, "observations") == before + 2, LIVE_BUDGET_S, "the count after showing")
    wait_for(lambda: str(second) in timeline_ids(browser), LIVE_BUDGET_S, "the record saved while hidden")


@pytest.fixture
def own_stack() -> Iterator[dict[str, str]]:
    """A stack of its own (`mnemo up`), which a test may stop and start again."""
    root = Path(tempfile.mkdtemp(prefix="mnemo-live-"))  # short: Unix socket paths are limited
    env = {k: v for k, v in os.environ.items() if not k.startswith("MNEMO_")}
    env.update({"MNEMO_HOME": str(root / "home"), "MNEMO_EMBEDDER": "hash", "MNEMO_LOG_LEVEL": "warning"})
    mnemo = str(Path(sys.executable).parent / "mnemo")
    try:
        assert subprocess.run([mnemo, "up"], env=env, capture_output=True, timeout=120).returncode == 0
        yield env
    finally:
        subprocess.run([mnemo, "down"], env=env, capture_output=True, timeout=60)
        shutil.rmtree(root, ignore_errors=True)


def test_a_stopped_stack_is_said_plainly_and_the_page_recovers_when_it_is_back(own_stack, browser):
    mnemo = str(Path(sys.executable).parent / "mnemo")
    viewer = subprocess.Popen([sys.executable, "-m", "viewer", "--port", "0"], env=own_stack, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True)
    try:
        assert viewer.stdout is not None
        url = viewer.stdout.readline().split(": ", 1)[1].strip()
        browser.goto(url)
        assert browser.evaluate("document.querySelector('[data-service=\"search\"]').classList.contains('up')")

        assert subprocess.run([mnemo, "down"], env=own_stack, capture_output=True, timeout=60).returncode == 0
        wait_for(lambda: browser.evaluate("!document.getElementById('stack-problem').hidden"), 10, "the down banner")
        banner = browser.evaluate("document.getElementById('stack-problem').textContent")
        assert "not running" in banner and "mnemo up" in banner
        page = browser.evaluate("document.body.innerText")
        assert "UNAVAILABLE" not in page and "grpc" not in page.lower() and "No records yet" not in page
        assert browser.evaluate("document.querySelector('[data-service=\"search\"]').classList.contains('down')")
        browser.screenshot("timeline-stack-down")
        browser.goto(url.split("?")[0])  # a page opened while it is down says so too
        page = browser.evaluate("document.body.innerText")
        assert "not running" in page and "No records yet" not in page and "UNAVAILABLE" not in page

        assert subprocess.run([mnemo, "up"], env=own_stack, capture_output=True, timeout=120).returncode == 0
        wait_for(lambda: browser.evaluate("document.getElementById('stack-problem')?.hidden === true"
                                          " && !!document.querySelector('[data-count=\"observations\"]')"),
                 15, "the page to recover")
        assert browser.evaluate("Array.from(document.querySelectorAll('[data-service]'))"
                                ".every(p => p.classList.contains('up'))")
    finally:
        viewer.terminate()
        viewer.wait(timeout=10)
        if viewer.stdout is not None:
            viewer.stdout.close()
