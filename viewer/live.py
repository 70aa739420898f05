"""The timeline's live state, pushed to the page as Server-Sent Events (`/api/events`).

Each open page holds one event stream. The server looks at the stack once a second
(health of the three services, the store's counts, the change feed's head) and sends a
`state` event only when what the page shows would change: counts, health, the vector lag,
or the newest records (fetched only when the feed's head moved). A page hidden in a
background tab closes its stream (viewer.js, visibilitychange), so it costs nothing.

When the stack is down the event says so in words (`down`), never as a gRPC error, and
carries no rows: the page keeps what it showed and says the stack is not running; the
next event after a restart brings everything back.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import anyio
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import StreamingResponse

from viewer import present
from viewer.client import Health, MemoryClient

TICK_S = 1.0
# Sent when nothing changed for this long, so proxies and the browser keep the stream open.
KEEPALIVE_S = 15.0
ROWS = 50
DOWN_TEXT = "The stack is not running: `mnemo up` starts it. This page updates by itself when it is back."


def stack_down(health: Health) -> bool:
    """True when the page cannot show memory: search_svc unreachable or not answering."""
    return health.overview is None and not health.services.get("search", False)


def down_text(health: Health) -> str:
    """What to tell a person instead of a raw gRPC error."""
    if stack_down(health):
        return DOWN_TEXT
    return health.problem


def snapshot(client: MemoryClient, home: Path, project: str, rows_for: Callable[[int], list[dict[str, Any]]],
             ) -> dict[str, Any]:
    """The state a timeline page shows, as plain JSON (blocking: run off the event loop)."""
    health = client.health(project)
    state: dict[str, Any] = {"services": health.services, "down": stack_down(health), "problem": down_text(health)}
    if health.overview is not None:
        view = present.overview_view(health.overview)
        state.update(counts=view["counts"], vector=view["vector"], db=present.human_bytes(view["db_bytes"]),
                     notice=view["notice"], rows=rows_for(int(view["head_seq"])))
    state["disk"] = present.human_bytes(present.disk_use(home))  # rounded: a growing log is no news
    return state


class RowCache:
    """The newest rows, fetched again only when the store's change feed moved."""

    def __init__(self, client: MemoryClient, project: str):
        self.client, self.project = client, project
        self.head: int | None = None
        self.rows: list[dict[str, Any]] = []

    def __call__(self, head: int) -> list[dict[str, Any]]:
        if head != self.head:
            self.rows = [present.row_view(r) for r in self.client.recent(self.project, limit=ROWS)]
            self.head = head
        return self.rows


async def events(request: Request, client: MemoryClient, home: Path) -> AsyncIterator[str]:
    project = request.query_params.get("project", "")
    rows = RowCache(client, project)
    last = ""
    quiet = 0.0
    while not await request.is_disconnected():
        state = await run_in_threadpool(snapshot, client, home, project, rows)
        payload = json.dumps(state, sort_keys=True)
        if payload != last:
            last, quiet = payload, 0.0
            yield f"event: state\ndata: {payload}\n\n"
        elif quiet >= KEEPALIVE_S:
            quiet = 0.0
            yield ": keepalive\n\n"
        await anyio.sleep(TICK_S)
        quiet += TICK_S


def stream(request: Request, client: MemoryClient, home: Path) -> StreamingResponse:
    return StreamingResponse(events(request, client, home), media_type="text/event-stream",
                             headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})
