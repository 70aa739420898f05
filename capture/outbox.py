"""Hooks in the server runtime: nothing is lost while the team server is unreachable.

A hook event that cannot reach the server (UNAVAILABLE, DEADLINE_EXCEEDED, UNAUTHENTICATED,
or an unreadable token file) is queued here, privacy-cleaned first, and the hook answers
`{}` as always. A later hook that reaches the server replays the queue in order before its
own event, and so does SessionStart; while the queue is not empty, new events join its end,
so the server sees every session's events in the order they happened.

What is queued is the event (kind, platform, cleaned payload), not the RPCs it would have
made: an event's RPCs depend on each other's replies (the prompt's row id, the tool use's
row id in the session's journal), so replaying the event redoes them all. Every hook write
is idempotent (external ids, tool_use_id, content hashes), so an event replayed after a
lost acknowledgement, or after it half ran, creates nothing twice.

Layout: $MNEMO_HOME/outbox/ (0700), one file per event (0600) named by time and pid, so
the names sort in arrival order; a file appears whole (written aside, then renamed). One
process drains at a time (an flock on outbox/.drain that dies with its holder); an event
queued while another process drains is picked up by that drainer, which lists the folder
again before it lets go, or by the next hook. The folder is bounded (OUTBOX_MAX_BYTES);
when it is full a new event is dropped with an error line in hooks.log.

Read-only events (SessionStart's context, PreToolUse's file notes) are never queued: they
write nothing, and their answer is only useful now.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from capture.hook_call import clean_value, log
from mnemo.errors import DeadlineExceeded, InvalidArgument, MnemoError, Unauthenticated, Unavailable

OUTBOX_DIR = "outbox"
OUTBOX_MAX_BYTES = 64 * 1024 * 1024
READ_ONLY_EVENTS = frozenset({"SessionStart", "PreToolUse"})
# A hook replays for at most this long, well inside the host's hook timeout (the prompt may be
# waiting on it); what is left waits for the next hook.
DRAIN_BUDGET_S = 15.0
# What a server that cannot be reached (or does not know us yet) looks like: worth a retry.
RETRYABLE = (Unavailable, DeadlineExceeded, Unauthenticated)
# Stands for an entirely private prompt in the queue: clean() removes it, and the replayed
# UserPromptSubmit sees a private prompt again, so the session stays private in order.
PRIVATE_PROMPT = "<private></private>"
# When the host fired the event (epoch ms), kept in the queued payload: the replayed writes
# carry it (capture.hook_call.HookCall.received_ms), so records keep the time they happened
# and a replayed prompt has a stable external id.
RECEIVED_KEY = "mnemo_received_ms"

RunEvent = Callable[[Any, str, dict[str, Any], str], dict[str, Any]]


def queued_form(event: str, payload: dict[str, Any]) -> dict[str, Any]:
    """The payload as it may rest on disk: every string privacy-cleaned."""
    from mnemo.privacy import clean, is_entirely_private

    cleaned: dict[str, Any] = clean_value(payload)
    cleaned.setdefault(RECEIVED_KEY, int(time.time() * 1000))
    prompt = payload.get("prompt")
    if event == "UserPromptSubmit" and isinstance(prompt, str) and prompt.strip() and (
            is_entirely_private(prompt) or not clean(prompt)):
        cleaned["prompt"] = PRIVATE_PROMPT
    return cleaned


class Outbox:
    def __init__(self, home: Path):
        self.path = home / OUTBOX_DIR

    def entries(self) -> list[Path]:
        try:
            return sorted(p for p in self.path.iterdir() if p.name.endswith(".json"))
        except FileNotFoundError:
            return []

    def size(self) -> int:
        total = 0
        for entry in self.entries():
            with contextlib.suppress(FileNotFoundError):
                total += entry.stat().st_size
        return total

    def put(self, settings: Any, event: str, payload: dict[str, Any], platform: str) -> bool:
        """Queue one event; False (and an error line) when the outbox is full."""
        self.path.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(self.path, 0o700)
        body = json.dumps({"event": event, "platform": platform, "payload": queued_form(event, payload),
                           "queued_at": time.time()}, ensure_ascii=False).encode("utf-8")
        used = self.size()
        if used + len(body) > OUTBOX_MAX_BYTES:
            log(settings, "error", "outbox full: hook event dropped (the team server has been unreachable; "
                "check server_url, then the next hook sends what is queued)", hook=event,
                outbox=str(self.path), used_bytes=used, limit_bytes=OUTBOX_MAX_BYTES)
            return False
        name = f"{time.time_ns():020d}-{os.getpid():010d}"
        partial = self.path / f".{name}.tmp"
        fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as out:
            out.write(body)
        os.replace(partial, self.path / f"{name}.json")
        return True

    @contextlib.contextmanager
    def draining(self) -> Iterator[bool]:
        """Hold the drain lock if no other process does; yields whether this one holds it."""
        self.path.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(self.path / ".drain", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                yield False
                return
            yield True
        finally:
            os.close(fd)  # closing drops the lock

    def drain(self, settings: Any, run: RunEvent, budget_s: float = DRAIN_BUDGET_S) -> bool:
        """Replay queued events in order (drain lock held) for at most `budget_s`; True when
        the outbox is empty."""
        deadline = time.monotonic() + budget_s
        while entries := self.entries():
            for entry in entries:
                if time.monotonic() > deadline:
                    log(settings, "info", "outbox replay paused: the next hook goes on", left=len(self.entries()))
                    return False
                try:
                    item = json.loads(entry.read_bytes())
                except (OSError, ValueError) as err:
                    log(settings, "error", "outbox entry unreadable, dropped", entry=entry.name, error=str(err))
                    entry.unlink(missing_ok=True)
                    continue
                try:
                    run(settings, item["event"], item["payload"], item["platform"])
                except RETRYABLE:
                    return False
                except Exception as err:  # noqa: BLE001 - an event the server refuses would block the queue forever
                    log(settings, "error", "queued hook event refused by the server, dropped", hook=item["event"],
                        error=f"{type(err).__name__}: {err}")
                entry.unlink(missing_ok=True)
        return True


def handle_remote(settings: Any, event: str, payload: dict[str, Any], platform: str, run: RunEvent) -> dict[str, Any]:
    """One hook event in the server runtime: drain what is queued, then the event itself;
    queue it when the server cannot be reached (see the module's docstring)."""
    from mnemo.remote import server_settings

    outbox = Outbox(settings.home)
    try:
        remote = server_settings(settings)
    except InvalidArgument as err:  # a token file to fix: keep the event for when it is fixed
        log(settings, "error", "server runtime misconfigured", hook=event, error=str(err))
        if event not in READ_ONLY_EVENTS:
            outbox.put(settings, event, payload, platform)
        return {}
    if event == "PreToolUse":
        return _read_only(remote, event, payload, platform, run)  # the agent waits: no replay here
    if outbox.entries():
        state = _drain(outbox, remote, run)
        if state != "empty":
            if event in READ_ONLY_EVENTS:
                return {}
            outbox.put(settings, event, payload, platform)
            log(settings, "info", "hook event queued behind earlier ones", hook=event, reason=state,
                queued=len(outbox.entries()))
            if state == "busy":
                _drain(outbox, remote, run)  # the other drainer may have finished before our entry appeared
            return {}
    if event in READ_ONLY_EVENTS:
        return _read_only(remote, event, payload, platform, run)
    try:
        reply = run(remote, event, payload, platform)
    except RETRYABLE as err:
        outbox.put(settings, event, payload, platform)
        log(settings, "info", "team server unreachable: hook event queued", hook=event, error=str(err),
            queued=len(outbox.entries()))
        return {}
    if outbox.entries():  # queued by others while this event ran: send them now, in order
        _drain(outbox, remote, run)
    return reply


def _read_only(settings: Any, event: str, payload: dict[str, Any], platform: str, run: RunEvent) -> dict[str, Any]:
    try:
        return run(settings, event, payload, platform)
    except MnemoError as err:
        log(settings, "warning", "team server unreachable", hook=event, error=str(err))
        return {}


def _drain(outbox: Outbox, settings: Any, run: RunEvent) -> str:
    """Drain unless another process is at it: "empty" (nothing left before us), "busy"
    (another process drains) or "down" (the server still cannot be reached)."""
    with outbox.draining() as mine:
        if not mine:
            return "busy"
        emptied = outbox.drain(settings, run)
    if emptied:
        log(settings, "info", "outbox drained")
    return "empty" if emptied else "down"
