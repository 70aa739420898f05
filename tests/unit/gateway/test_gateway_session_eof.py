"""At EOF every request still running is answered once: with its result when it finishes (issue
33: docs/gateway.md says they finish first), with an error when it outlives the grace, even one
whose task never took a step."""

from __future__ import annotations

import asyncio
import json

import pytest

from gateway.server import CLOSED_MESSAGE, Session
from gateway.spec import ToolResult

pytestmark = pytest.mark.unit


class _Core:
    """The part of the gateway's core a session uses besides call_tool."""

    by_name: dict = {}
    structured = False

    def attach(self, notify) -> None:
        pass


class _NeverAnswers(_Core):
    """A gateway whose tool calls run until cancelled: the client leaves while they are in flight."""

    async def call_tool(self, name, arguments, progress):
        await asyncio.Event().wait()


def _call(request_id) -> bytes:
    frame = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
             "params": {"name": "search", "arguments": {"query": "deploy"}}}
    return json.dumps(frame).encode()


def _sent(session: Session) -> list[dict]:
    return [json.loads(line) for line in session.sent]  # type: ignore[attr-defined]


class _AnswersWhenReleased(_Core):
    """A gateway whose tool calls finish once the test lets them, after the client closed stdin."""

    def __init__(self):
        self.release = asyncio.Event()

    async def call_tool(self, name, arguments, progress):
        await self.release.wait()
        return ToolResult(f"{name} done")


def _session(gateway=None) -> Session:
    sent: list[bytes] = []
    session = Session(gateway or _NeverAnswers(), sent.append)  # type: ignore[arg-type]
    session.version = "2025-06-18"  # initialized
    session.sent = sent  # type: ignore[attr-defined]
    return session


def test_requests_running_at_eof_finish_and_get_their_results():
    async def scenario() -> Session:
        gateway = _AnswersWhenReleased()
        session = _session(gateway)
        for n in range(8):
            session.receive(_call(n))
        stopping = asyncio.ensure_future(session.drain())  # EOF read: the client sent all it will
        await asyncio.sleep(0)
        gateway.release.set()
        await stopping
        return session

    frames = _sent(asyncio.run(scenario()))
    assert sorted(frame["id"] for frame in frames) == list(range(8))
    assert all(frame["result"]["content"][0]["text"] == "search done" for frame in frames), frames


def test_requests_read_with_the_eof_in_one_batch_each_get_the_closed_error_past_the_grace():
    async def scenario() -> Session:
        session = _session()
        session.eof_grace_s = 0.0
        session.receive(_call("started"))
        await asyncio.sleep(0)  # this one reaches its tool call
        for n in range(3):      # these arrive with the EOF: cancelled before their first step
            session.receive(_call(f"late-{n}"))
        await session.drain()
        return session

    frames = _sent(asyncio.run(scenario()))
    assert sorted(frame["id"] for frame in frames) == ["late-0", "late-1", "late-2", "started"]
    assert all(frame["error"] == {"code": -32000, "message": CLOSED_MESSAGE} for frame in frames)


def test_a_request_the_client_cancels_gets_no_reply_even_before_its_first_step():
    async def scenario() -> Session:
        session = _session()
        session.receive(_call(7))
        session.receive(_call(8))
        session.eof_grace_s = 0.0
        cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7}}
        session.receive(json.dumps(cancel).encode())
        await session.drain()
        return session

    session = asyncio.run(scenario())
    assert [frame["id"] for frame in _sent(session)] == [8]
    assert not session.cancelled and not session.running
