"""`mnemo hook EVENT`: one agent-host hook event, JSON on stdin, a reply on stdout.

A hook never breaks the host: whatever goes wrong (garbage stdin, the stack down and
unstartable, a bug here) is logged to $MNEMO_HOME/logs/hooks.log, a valid empty reply
is printed and the exit status is 0. stdout carries the reply and nothing else.

Events (Claude Code names; kebab/snake case accepted too):
- SessionStart: start the stack if needed; inject the start-of-session context.
- UserPromptSubmit: upsert the session, record the prompt. An entirely private prompt is
  stored nowhere, and the tool uses that follow it are not recorded either.
- PreToolUse (Read): the recent observations about the file, as additional context.
- PostToolUse / PostToolUseFailure: record the raw tool use, compile observations (a
  failure is a bugfix candidate, linked to its fix later; read-only tools are merged per
  burst at Stop). See capture.hook_tools.
- SubagentStop: the sub-agent's final report, kept as its claim.
- PreCompact, Stop: flush read bursts, write the summary of the stretch since the
  previous Stop (before compaction drops it from the context).
- SessionEnd: the same flush, then mark the session completed.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import TYPE_CHECKING, Any

from capture.hook_call import HookCall, add_observations, log, parse_json
from capture.hook_tools import CONTEXT_TAG, READ_ONLY_TOOLS, post_tool_use, post_tool_use_failure, pre_tool_use
from capture.journal import Journal, SessionState, entries_digest
from mnemo.vocab import DEFAULT_PLATFORM

if TYPE_CHECKING:  # the observer compiles many patterns: imported only by the events that use it
    from capture.observer import ToolEvent
    from mnemo.config import Settings

__all__ = ["CONTEXT_TAG", "EVENTS", "READ_ONLY_TOOLS", "handle", "log", "run"]

EVENTS = {
    "sessionstart": "SessionStart",
    "userpromptsubmit": "UserPromptSubmit",
    "pretooluse": "PreToolUse",
    "posttooluse": "PostToolUse",
    "posttoolusefailure": "PostToolUseFailure",
    "subagentstop": "SubagentStop",
    "precompact": "PreCompact",
    "stop": "Stop",
    "sessionend": "SessionEnd",
}
MAX_STDIN_BYTES = 32 * 1024 * 1024
# Events on the agent's critical path: a short deadline, and no stack start to wait for.
FAST_EVENTS = {"PreToolUse": 2.0}
FLUSH_WAIT_S = 10.0
WORKER_TURN_WAIT_S = 30.0


def run(settings: Any, args: Any) -> int:
    """CLI entry point: always exit 0 with a valid reply."""
    started = time.perf_counter()
    event = canonical_event(getattr(args, "event", ""))
    platform = (getattr(args, "platform", "") or DEFAULT_PLATFORM).strip().lower()
    reply: dict[str, Any] = {}
    worker_of: Journal | None = None
    try:
        payload = without_private_identifiers(read_payload(sys.stdin))
        handed_off, worker_of = _hand_off(settings, event, payload, platform)
        if not handed_off:
            reply = handle(settings, event, payload, platform)
    except Exception as err:  # noqa: BLE001 - the host must never see a hook fail
        import traceback

        log(settings, "error", "hook failed", hook=event, error=f"{type(err).__name__}: {err}",
            trace=traceback.format_exc(limit=8))
        reply = {}
    finally:
        if worker_of is not None:
            worker_of.unmark_inflight(os.getpid())
        log(settings, "debug", "hook done", hook=event, ms=round((time.perf_counter() - started) * 1000, 1))
    sys.stdout.write(json.dumps(reply))
    sys.stdout.flush()
    return 0


def _hand_off(settings: Any, event: str, payload: dict[str, Any], platform: str) -> tuple[bool, Journal | None]:
    """(True, None) in a parent that forked a worker for the event (capture.detach);
    (False, the session's journal) in that worker; (False, None) when not detaching."""
    from capture import detach

    session_id = payload.get("session_id")
    if not (detach.wanted(event) and isinstance(session_id, str) and session_id.strip()):
        return False, None
    journal = Journal(settings.home / "capture", platform, session_id[:256])
    pid = detach.fork_worker()
    if pid:
        journal.mark_inflight(pid)
        return True, None
    detach.await_marker(journal, os.getpid())
    if not journal.wait_for_earlier(os.getpid(), WORKER_TURN_WAIT_S):
        log(settings, "warning", "worker ran before earlier hooks finished", hook=event, session=journal.key)
    return False, journal


def canonical_event(name: str) -> str:
    return EVENTS.get(name.replace("-", "").replace("_", "").lower(), name)


def read_payload(stream: Any) -> dict[str, Any]:
    if stream is None or stream.isatty():
        return {}
    raw = stream.buffer.read(MAX_STDIN_BYTES) if hasattr(stream, "buffer") else stream.read()
    if not raw or not raw.strip():
        return {}
    payload = json.loads(raw)
    if not isinstance(payload, dict):
        raise ValueError(f"hook input must be a JSON object, got {type(payload).__name__}")
    return payload


# Host-given names of things: they reach the journal's key, the store's rows and external
# ids, so a <private> region or a secret in one is dropped like in any text.
IDENTIFIER_FIELDS = ("session_id", "tool_use_id", "tool_name", "cwd", "transcript_path", "agent_id", "agent_type")


def without_private_identifiers(payload: dict[str, Any]) -> dict[str, Any]:
    """The payload with every identifier privacy-cleaned (mnemo.privacy.clean), before the
    hand-off: the parent, its worker and the next hooks key the session's journal alike."""
    present = [name for name in IDENTIFIER_FIELDS if isinstance(payload.get(name), str) and payload[name]]
    if not present:
        return payload
    from mnemo.privacy import clean

    return {**payload, **{name: clean(payload[name]) for name in present}}


def handle(settings: Any, event: str, payload: dict[str, Any], platform: str) -> dict[str, Any]:
    """Do the event's work; the reply to print."""
    handler = _HANDLERS.get(event)
    if handler is None:
        log(settings, "warning", "unknown hook event", hook=event)
        return {}
    check_payload(payload)
    if getattr(settings, "server_url", ""):  # the server runtime: queued while the server is unreachable
        from capture.outbox import handle_remote

        return handle_remote(settings, event, payload, platform, run_event)
    return run_event(settings, event, payload, platform)


def run_event(settings: Any, event: str, payload: dict[str, Any], platform: str) -> dict[str, Any]:
    """One known event's work through fresh clients (errors raised as they are)."""
    handler = _HANDLERS[event]
    from capture.client import HookClients

    budget = FAST_EVENTS.get(event)
    clients = HookClients(settings, timeout=budget, may_start_stack=budget is None)
    try:
        return handler(HookCall(settings, clients, payload, platform))
    finally:
        clients.close()
        if clients.lean_failures:
            log(settings, "warning", "lean calls redone through grpc", hook=event, calls=clients.lean_failures)


_TEXT_FIELDS = ("session_id", "cwd", "prompt", "tool_name", "tool_use_id", "transcript_path", "hook_event_name",
                "error", "last_assistant_message", "agent_type", "agent_id", "agent_transcript_path", "trigger")


def check_payload(payload: dict[str, Any]) -> None:
    """Refuse input that is not what a host sends (ValueError), before any RPC: garbage
    must neither be stored nor start the stack."""
    for name in _TEXT_FIELDS:
        if name in payload and payload[name] is not None and not isinstance(payload[name], str):
            raise ValueError(f"hook input field {name!r} must be a string")
    if not str(payload.get("session_id") or "").strip():
        raise ValueError("hook input has no session_id")


# --------------------------------------------------------------------------------------
# events


def _session_start(hook: HookCall) -> dict[str, Any]:
    from capture import wire

    _warm_semantic_search(hook.settings)
    reply = hook.clients.call_wire(wire.SESSION_START_CONTEXT, {
        "project": hook.project, "token_budget": hook.settings.context_token_budget,
    })
    text = reply["text"].strip()
    if not text or not (reply["observations"] or reply["summaries"]):
        return {}  # a new project: "no previous sessions" is not worth the model's context
    return {"hookSpecificOutput": {
        "hookEventName": "SessionStart",
        "additionalContext": f"<{CONTEXT_TAG}>\n{text}\n</{CONTEXT_TAG}>",
    }}


def _warm_semantic_search(settings: Settings) -> None:
    """A session is about to search: wake a vector_svc that idled out (mnemo/wake.py), so it is
    back before the first search instead of answering that one lexically. No-op on a server."""
    if settings.server_url:
        return
    from mnemo import wake

    wake.request(settings.run_dir, "vector")


def _user_prompt_submit(hook: HookCall) -> dict[str, Any]:
    raw = str(hook.payload.get("prompt") or "")
    from mnemo.privacy import clean, is_entirely_private

    text = clean(raw)
    if is_entirely_private(raw) or (raw.strip() and not text):
        # Stored nowhere, not even in the session row; and what follows it stays private too.
        state = hook.state() or SessionState(hook.platform, hook.project)
        state.private = True
        hook.journal.save_state(state)
        return {}
    from capture import wire

    state = hook.ensure_session(user_prompt=text)
    request: dict[str, Any] = {"content_session_id": hook.session_id, "platform_source": hook.platform,
                               "project": state.project, "prompt_text": text}
    if hook.received_ms:  # replayed from the outbox: its own time, and a key a second replay finds
        request.update(created_at_epoch=hook.received_ms,
                       external_id=f"mnemo:{hook.journal.key}:prompt:{hook.received_ms}")
    prompt = hook.clients.call_wire(wire.RECORD_PROMPT, request)["prompt"]
    state.private = False
    # A "duplicate" reply still names the stored prompt (a retried call, a double-fired hook).
    if prompt["id"] and prompt["id"] != state.last_prompt_id:
        state.prompt_number = prompt["prompt_number"]
        state.last_prompt_id = prompt["id"]
        hook.journal.append({"p": prompt["id"], "n": prompt["prompt_number"]})
    hook.journal.save_state(state)
    return {}


def _stop(hook: HookCall) -> dict[str, Any]:
    if not (hook.state() or SessionState("", "")).private:
        _flush(hook, write_summary=True)
    return {}


def _session_end(hook: HookCall) -> dict[str, Any]:
    state = hook.state()
    if state is not None and not state.private:
        _flush(hook, write_summary=True)
    if state is not None and state.memory_session_id:
        from capture import rpcs
        from mnemo.v1 import store_pb2

        hook.clients.call(rpcs.COMPLETE_SESSION, store_pb2.CompleteSessionRequest(
            content_session_id=hook.session_id, platform_source=hook.platform, status="completed",
        ))
    hook.journal.forget()
    return {}


def _pre_compact(hook: HookCall) -> dict[str, Any]:
    """The context is about to be compacted: write down the stretch so far while the
    transcript still holds it (the same work as Stop)."""
    return _stop(hook)


def _subagent_stop(hook: HookCall) -> dict[str, Any]:
    """A sub-agent finished: its report, kept as what it said (the Task tool's own
    PostToolUse records the call; this keeps the agent's type and final words)."""
    state = hook.state()
    from mnemo.privacy import strip_private

    report = strip_private(str(hook.payload.get("last_assistant_message") or ""))
    if not report or (state is not None and state.private):
        return {}
    from capture.drafts import Draft, first_line, keyword_concepts

    state = hook.ensure_session()
    agent = str(hook.payload.get("agent_type") or "sub-agent")[:80]
    draft = Draft(
        type="discovery",
        title=f"Sub-agent {agent} reported: {first_line(report, 90)}",
        subtitle=f"Final report of the {agent} sub-agent",
        narrative=f"The {agent} sub-agent reported (its own words, not checked by a tool):\n{report}",
        facts=[f"Sub-agent: {agent}", f"Report: {first_line(report, 200)}"],
        concepts=["how-it-works"] + keyword_concepts(report[:2000]),
    ).cleaned()
    agent_id = str(hook.payload.get("agent_id") or "")[:128] or "unknown"
    ids = add_observations(hook, state, [draft], [], f"subagent:{agent_id}")
    hook.journal.append({"n": state.prompt_number, "o": ids})
    return {}


_HANDLERS = {
    "SessionStart": _session_start,
    "UserPromptSubmit": _user_prompt_submit,
    "PreToolUse": pre_tool_use,
    "PostToolUse": post_tool_use,
    "PostToolUseFailure": post_tool_use_failure,
    "SubagentStop": _subagent_stop,
    "PreCompact": _pre_compact,
    "Stop": _stop,
    "SessionEnd": _session_end,
}


# --------------------------------------------------------------------------------------
# the work


def _flush(hook: HookCall, write_summary: bool) -> None:
    """Merge pending read bursts into observations and summarize the stretch."""
    # Tool uses fired before this event and still being written by workers belong to it.
    if not hook.journal.wait_for_earlier(os.getpid(), FLUSH_WAIT_S):
        log(hook.settings, "warning", "flushing while tool-use hooks are still running", session=hook.journal.key)
    claimed = hook.journal.claim()
    entries = Journal.read(claimed)
    state = hook.state()
    if state is None or not state.memory_session_id:
        Journal.release(claimed)
        return
    tool_uses = _fetch_tool_uses(hook, [int(e["t"]) for e in entries if "t" in e])
    observation_ids: list[int] = []
    for burst in _bursts(entries):
        events = [_event_of(tool_uses[e["t"]]) for e in burst if e["t"] in tool_uses]
        if not events:
            continue
        from capture.observer import merge_reads

        row_ids = [e["t"] for e in burst]
        state.prompt_number = burst[-1].get("n", state.prompt_number)
        observation_ids += add_observations(hook, state, [merge_reads(events)], row_ids,
                                             f"reads:{row_ids[0]}-{row_ids[-1]}")
    observation_ids += [i for e in entries for i in e.get("o", [])]
    if write_summary:
        last_prompt = [state.last_prompt_id] if entries and state.last_prompt_id else []
        prompt_ids = [e["p"] for e in entries if "p" in e] or last_prompt
        _write_summary(hook, state, entries, prompt_ids, tool_uses, observation_ids)
    Journal.release(claimed)


def _bursts(entries: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Maximal runs of read-only tool uses within one prompt, in journal order."""
    bursts: list[list[dict[str, Any]]] = []
    current: list[dict[str, Any]] = []
    for entry in entries:
        is_read = "t" in entry and entry.get("r")
        if is_read and current and current[-1].get("n") == entry.get("n"):
            current.append(entry)
            continue
        if current:
            bursts.append(current)
        current = [entry] if is_read else []
    if current:
        bursts.append(current)
    return bursts


def _fetch_tool_uses(hook: HookCall, ids: list[int]) -> dict[int, Any]:
    from capture import rpcs
    from mnemo.v1 import store_pb2

    found: dict[int, Any] = {}
    for start in range(0, len(ids), 100):
        chunk = ids[start : start + 100]
        reply = hook.clients.call(rpcs.GET_TOOL_USES, store_pb2.GetToolUsesRequest(ids=chunk, limit=len(chunk)))
        found.update({t.id: t for t in reply.tool_uses})
    return found


def _event_of(tool_use: Any) -> ToolEvent:
    from capture.drafts import FAILURE_EVENT, ToolEvent

    response = parse_json(tool_use.tool_response)
    # A failure is stored as the host's error fields (capture.hook_tools._response_of).
    failed = isinstance(response, dict) and "error" in response and set(response) <= {
        "error", "is_interrupt", "duration_ms"}
    return ToolEvent(tool_use.tool_name, parse_json(tool_use.tool_input), response, tool_use.cwd,
                     FAILURE_EVENT if failed else "PostToolUse")


def _write_summary(
    hook: HookCall,
    state: SessionState,
    entries: list[dict[str, Any]],
    prompt_ids: list[int],
    tool_uses: dict[int, Any],
    observation_ids: list[int],
) -> None:
    if not entries:
        return  # nothing happened since the previous Stop: its summary stands
    from capture import rpcs
    from capture.summary import ObservationView, is_empty, summarize
    from capture.transcript import last_assistant_message
    from mnemo.privacy import strip_private
    from mnemo.v1 import common_pb2, store_pb2

    refs = [common_pb2.Ref(kind=common_pb2.DOC_KIND_PROMPT, id=i) for i in prompt_ids]
    refs += [common_pb2.Ref(kind=common_pb2.DOC_KIND_OBSERVATION, id=i) for i in dict.fromkeys(observation_ids)]
    records = hook.clients.call(rpcs.GET_RECORDS, store_pb2.GetRecordsRequest(refs=refs)).records if refs else []
    prompts = [r.prompt.prompt_text for r in records if r.WhichOneof("record") == "prompt"]
    observations = [
        ObservationView(o.type, o.title, list(o.facts), list(o.files_read), list(o.files_modified))
        for o in (r.observation for r in records if r.WhichOneof("record") == "observation")
    ]
    events = [_event_of(tool_uses[e["t"]]) for e in entries if e.get("t") in tool_uses]
    said = hook.payload.get("last_assistant_message")  # Claude Code 2.1 sends it; older hosts: the transcript
    last_message = strip_private(said if isinstance(said, str) and said else last_assistant_message(
        str(hook.payload.get("transcript_path") or "")))
    summary = summarize(prompts, events, observations, last_message)
    if is_empty(summary):
        return
    summary.memory_session_id = state.memory_session_id
    summary.project = state.project
    summary.prompt_number = state.prompt_number
    summary.external_id = f"mnemo:{hook.journal.key}:summary:{_stretch_key(state, entries)}"
    hook.clients.call(rpcs.ADD_SUMMARIES, store_pb2.AddSummariesRequest(summaries=[summary]))


def _stretch_key(state: SessionState, entries: list[dict[str, Any]]) -> str:
    """Names the stretch a summary covers by the rows in it, so a replayed hook sequence
    (where the store answers the repeated prompt with "duplicate") yields the same key."""
    tool_ids = [int(e["t"]) for e in entries if "t" in e]
    prompt_ids = [int(e["p"]) for e in entries if "p" in e] or [state.last_prompt_id]
    if tool_ids:
        return f"p{prompt_ids[-1]}:t{min(tool_ids)}-{max(tool_ids)}"
    return f"p{prompt_ids[-1]}:{entries_digest(entries)}"
