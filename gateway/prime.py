"""The prime relay: a corpus job's PrimeEvents become MCP progress, with heartbeats.

The job fails the gRPC way: its stream ends with an error status, which the client maps
to the MnemoError with that code (NOT_FOUND, UNAVAILABLE...), rendered like any tool
error. Cancelling the tool call cancels the RPC, and with it the job.
"""

from __future__ import annotations

import asyncio
import math
import time
from dataclasses import dataclass

from gateway.client import StreamRpc
from gateway.spec import Args, ProgressFn, ToolCall, ToolOutput
from mnemo.errors import Cancelled, FailedPrecondition
from mnemo.v1 import search_pb2


class Progress:
    """Relays job progress. Values only ever increase (the MCP spec asks for that): a
    heartbeat moves halfway to the next whole step, never past the total."""

    def __init__(self, send: ProgressFn):
        self._send = send
        self.value = 0.0
        self.total: float | None = None
        self.message = "starting"
        self.last_sent = time.monotonic()

    def _advance(self, done: float) -> float:
        if done > self.value:
            return done
        ceiling = float(math.floor(self.value) + 1)
        if self.total:
            ceiling = min(ceiling, self.total)
        return self.value + (ceiling - self.value) / 2 if ceiling > self.value else self.value

    async def report(self, done: float, total: float | None, message: str) -> None:
        """The job's own progress: `message` is what later heartbeats repeat."""
        self.message = message
        await self._emit(done, total, message)

    async def _emit(self, done: float, total: float | None, shown: str) -> None:
        self.total = total if total else self.total
        self.value = self._advance(done)
        self.last_sent = time.monotonic()
        await self._send(self.value, self.total, shown)

    async def finish(self, total: float, message: str) -> None:
        if total > self.value:
            await self.report(total, total, message)

    async def heartbeat(self, interval: float, started: float) -> None:
        """Send a notification whenever `interval` passed without one."""
        while True:
            await asyncio.sleep(max(0.01, self.last_sent + interval - time.monotonic()))
            if time.monotonic() - self.last_sent >= interval:
                elapsed = int(time.monotonic() - started)
                # Shown, not kept: the next heartbeat says the job's message again, not this one.
                await self._emit(self.value, self.total, f"working ({elapsed} s): {self.message}")


@dataclass(frozen=True)
class PrimeRelay:
    """The handler of prime_corpus and reprime_corpus."""

    rpc: StreamRpc[search_pb2.CorpusNameRequest, search_pb2.PrimeEvent]

    async def __call__(self, call: ToolCall, args: Args) -> ToolOutput:
        name = args["name"]
        progress = Progress(call.progress)
        heartbeat = asyncio.ensure_future(progress.heartbeat(call.heartbeat_interval_s, time.monotonic()))
        try:
            request = search_pb2.CorpusNameRequest(name=name, project=args.get("project", ""))
            final = await self._relay(call, request, progress)
        finally:
            heartbeat.cancel()
        if final is None:
            raise FailedPrecondition("the job ended without a result; run list_corpora to see its outcome")
        if final.phase == "cancelled":  # the service stopped while the caller still listened
            raise Cancelled(final.result_text or final.message or "the job cancelled")
        if final.total and final.phase == "done":
            await progress.finish(float(final.total), final.message or final.phase)
        return ToolOutput(final.result_text or final.message or f"corpus {name} primed")

    async def _relay(self, call: ToolCall, request: search_pb2.CorpusNameRequest,
                     progress: Progress) -> search_pb2.PrimeEvent | None:
        """Report every event as progress until the final one, which is returned."""
        events = call.client.stream(self.rpc, request)
        try:
            async for event in events:
                if event.final:
                    return event
                await progress.report(float(event.done), float(event.total) or None, event.message or event.phase)
        finally:
            await events.aclose()
        return None
