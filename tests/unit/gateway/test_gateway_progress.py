"""Progress relay: values strictly increase, heartbeats never pass the total, the final one reaches it."""

from __future__ import annotations

import asyncio

import pytest

from gateway.prime import Progress

pytestmark = pytest.mark.unit


def test_values_increase_and_heartbeats_stay_below_the_next_step():
    sent: list[tuple[float, float | None, str | None]] = []

    async def send(value, total, message):
        sent.append((value, total, message))

    async def scenario():
        progress = Progress(send)
        await progress.report(0, None, "load")          # nothing done yet, total unknown
        await progress.report(0, None, "heartbeat")
        await progress.report(1, 4, "chunk 1/4")
        await progress.report(1, 4, "heartbeat")
        await progress.report(1, 4, "heartbeat")
        await progress.report(4, 4, "chunk 4/4")
        await progress.report(4, 4, "heartbeat")        # no room left: stays at the total
        await progress.finish(4, "done")                 # already there: nothing more is sent

    asyncio.run(scenario())
    values = [v for v, _, _ in sent]
    assert values[:6] == [0.5, 0.75, 1, 1.5, 1.75, 4]
    assert values[6] == 4 and len(sent) == 7
    assert all(v <= 4 for v in values)


def test_heartbeat_fires_when_the_job_is_silent():
    sent: list[str | None] = []

    async def send(value, total, message):
        sent.append(message)

    async def scenario():
        progress = Progress(send)
        beat = asyncio.ensure_future(progress.heartbeat(0.05, started=0.0))
        await asyncio.sleep(0.28)
        beat.cancel()

    asyncio.run(scenario())
    assert len(sent) >= 3 and all(m.startswith("working") for m in sent)


def test_heartbeats_repeat_the_jobs_message_and_never_nest_it():
    """Issue 33: a heartbeat's text was kept as the job's message, so the next one read
    "working (20 s): working (10 s): loaded 166 ..."."""
    sent: list[str] = []
    enough = asyncio.Event()

    async def send(value, total, message):
        sent.append(message)
        if len(sent) >= 4:
            enough.set()

    async def scenario():
        progress = Progress(send)
        await progress.report(1, 10, "loaded 166 records")
        beat = asyncio.ensure_future(progress.heartbeat(0.001, started=0.0))
        await enough.wait()
        beat.cancel()

    asyncio.run(scenario())
    for message in sent[1:]:
        assert message.count("working (") == 1 and message.endswith(": loaded 166 records"), sent
