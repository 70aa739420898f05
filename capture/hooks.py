"""`mnemo hook EVENT`: one agent-host hook event, JSON on stdin, a reply on stdout.

A hook never breaks the host: whatever goes wrong (garbage stdin, the stack down and
unstartable, a bug here) is logged to $MNEMO_HOME/logs/hooks.log, a valid empty reply
is printed and the exit status is 0. stdout carries the reply and nothing else.

Events (Claude Code names; kebab/snake case accepted too):
- SessionStart: start the stack if needed; inject the start-of-session context.
- UserPromptSubmit: upsert the session, record the prompt. An entirely private prompt is
  stored nowhere, and the tool uses that follow it are not recorded either.
- PostToolUse: record the raw tool use, compile observations (read-only tools are
  merged per burst at Stop, see capture.observer).
- Stop: flush read bursts, write the summary of the stretch since the previous Stop.
- SessionEnd: the same flush, then mark the session completed.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import TYPE_CHECKING, Any

from capture.journal import Journal, SessionState, entries_digest
from capture.project import project_name
from mnemo.privacy import clean, is_entirely_private, strip_private
from mnemo.vocab import DEFAULT_PLATFORM

if TYPE_CHECKING:  # the observer compiles many patterns: imported only by the events that use it
    from capture.observer import Draft, ToolEvent

EVENTS = {
    "sessionstart": "SessionStart",
    "userpromptsubmit": "UserPromptSubmit",
    "posttooluse": "PostToolUse",
    "stop": "Stop",
    "sessionend": "SessionEnd",
}
CONTEXT_TAG = "mnemo-context"
# Kept equal to capture.observer.READ_ONLY_TOOLS (a unit test checks), so the hot
# path of a read does not import the observer.
READ_ONLY_TOOLS = frozenset({"Read", "Grep", "Glob", "LS"})
MAX_STDIN_BYTES = 32 * 1024 * 1024
TOOL_TEXT_PRECAP = 1024 * 1024


def run(settings: Any, args: Any) -> int:
    """CLI entry point: always exit 0 with a valid reply."""
    started = time.perf_counter()
    event = canonical_event(getattr(args, "event", ""))
    platform = (getattr(args, "platform", "") or DEFAULT_PLATFORM).strip().lower()
    reply: dict[str, Any] = {}
    try:
        payload = read_payload(sys.stdin)
        reply = handle(settings, event, payload, platform)
    except Exception as err:  # noqa: BLE001 - the host must never see a hook fail
        import traceback

        log(settings, "error", "hook failed", hook=event, error=f"{type(err).__name__}: {err}",
            trace=traceback.format_exc(limit=8))
        reply = {}
    finally:
        log(settings, "debug", "hook done", hook=event, ms=round((time.perf_counter() - started) * 1000, 1))
    sys.stdout.write(json.dumps(reply))
    sys.stdout.flush()
    return 0


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


def handle(settings: Any, event: str, payload: dict[str, Any], platform: str) -> dict[str, Any]:
    """Do the event's work; the reply to print."""
    handler = _HANDLERS.get(event)
    if handler is None:
        log(settings, "warning", "unknown hook event", hook=event)
        return {}
    check_payload(payload)
    from capture.client import HookClients

    clients = HookClients(settings)
    try:
        return handler(_Hook(settings, clients, payload, platform))
    finally:
        clients.close()
        if clients.lean_failures:
            log(settings, "warning", "lean calls redone through grpc", hook=event, calls=clients.lean_failures)


_TEXT_FIELDS = ("session_id", "cwd", "prompt", "tool_name", "tool_use_id", "transcript_path", "hook_event_name")


def check_payload(payload: dict[str, Any]) -> None:
    """Refuse input that is not what a host sends (ValueError), before any RPC: garbage
    must neither be stored nor start the stack."""
    for name in _TEXT_FIELDS:
        if name in payload and payload[name] is not None and not isinstance(payload[name], str):
            raise ValueError(f"hook input field {name!r} must be a string")
    if not str(payload.get("session_id") or "").strip():
        raise ValueError("hook input has no session_id")


class _Hook:
    """One hook invocation: its payload, clients, and the session's journal."""

    def __init__(self, settings: Any, clients: Any, payload: dict[str, Any], platform: str):
        self.settings = settings
        self.clients = clients
        self.payload = payload
        self.platform = platform
        self.session_id = str(payload.get("session_id") or "")[:256]
        self.cwd = str(payload.get("cwd") or "")
        self.project = project_name(self.cwd or None, settings.project)
        if not self.session_id:
            raise ValueError("hook input has no session_id")  # check_payload refuses it first
        self.journal = Journal(settings.home / "capture", platform, self.session_id)

    def state(self) -> SessionState | None:
        return self.journal.load_state()

    def ensure_session(self, user_prompt: str = "") -> SessionState:
        """The session's state, creating the session row on first sight."""
        state = self.state()
        if state is not None and state.memory_session_id:
            return state
        from capture import rpcs
        from mnemo.v1 import store_pb2

        session = self.clients.call(rpcs.UPSERT_SESSION, store_pb2.UpsertSessionRequest(
            content_session_id=self.session_id, project=self.project, platform_source=self.platform,
            user_prompt=user_prompt,
        ))
        state = SessionState(self.session_id, self.platform, session.project or self.project,
                             memory_session_id=session.memory_session_id or self.session_id)
        self.journal.save_state(state)
        return state


# --------------------------------------------------------------------------------------
# events


def _session_start(hook: _Hook) -> dict[str, Any]:
    from capture import rpcs
    from mnemo.v1 import search_pb2

    reply = hook.clients.call(rpcs.SESSION_START_CONTEXT, search_pb2.SessionStartContextRequest(
        project=hook.project, token_budget=hook.settings.context_token_budget,
    ))
    text = reply.text.strip()
    if not text:
        return {}
    return {"hookSpecificOutput": {
        "hookEventName": "SessionStart",
        "additionalContext": f"<{CONTEXT_TAG}>\n{text}\n</{CONTEXT_TAG}>",
    }}


def _user_prompt_submit(hook: _Hook) -> dict[str, Any]:
    raw = str(hook.payload.get("prompt") or "")
    text = clean(raw)
    if is_entirely_private(raw) or (raw.strip() and not text):
        # Stored nowhere, not even in the session row; and what follows it stays private too.
        state = hook.state()
        if state is not None:
            state.private = True
            hook.journal.save_state(state)
        else:
            hook.journal.save_state(SessionState(hook.session_id, hook.platform, hook.project, private=True))
        return {}
    from capture import rpcs
    from mnemo.v1 import store_pb2

    state = hook.ensure_session(user_prompt=text)
    result = hook.clients.call(rpcs.RECORD_PROMPT, store_pb2.RecordPromptRequest(
        content_session_id=hook.session_id, platform_source=hook.platform, project=state.project,
        prompt_text=text,
    ))
    state.private = False
    # A "duplicate" reply still names the stored prompt (a retried call, a double-fired hook).
    if result.prompt.id and result.prompt.id != state.last_prompt_id:
        state.prompt_number = result.prompt.prompt_number
        state.last_prompt_id = result.prompt.id
        hook.journal.append({"p": result.prompt.id, "n": result.prompt.prompt_number})
    hook.journal.save_state(state)
    return {}


def _post_tool_use(hook: _Hook) -> dict[str, Any]:
    tool_name = str(hook.payload.get("tool_name") or "")
    if not tool_name or tool_name in hook.settings.skip_tools:
        return {}
    state = hook.state()
    if state is not None and state.private:
        return {}
    state = hook.ensure_session()
    tool_input = clean_value(hook.payload.get("tool_input"))
    tool_response = clean_value(hook.payload.get("tool_response"))
    row = _record_tool_use(hook, state, tool_name, tool_input, tool_response)
    if tool_name in READ_ONLY_TOOLS:
        hook.journal.append({"t": row.id, "n": state.prompt_number, "r": 1})
        return {}
    from capture.observer import ToolEvent

    drafts, _generator = _observe(hook.settings, ToolEvent(tool_name, tool_input, tool_response, hook.cwd))
    ids = _add_observations(hook, state, drafts, [row.id], f"tool:{row.tool_use_id or row.id}")
    hook.journal.append({"t": row.id, "n": state.prompt_number, "o": ids})
    return {}


def _stop(hook: _Hook) -> dict[str, Any]:
    if not (hook.state() or SessionState("", "", "")).private:
        _flush(hook, write_summary=True)
    return {}


def _session_end(hook: _Hook) -> dict[str, Any]:
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


_HANDLERS = {
    "SessionStart": _session_start,
    "UserPromptSubmit": _user_prompt_submit,
    "PostToolUse": _post_tool_use,
    "Stop": _stop,
    "SessionEnd": _session_end,
}


# --------------------------------------------------------------------------------------
# the work


def _record_tool_use(hook: _Hook, state: SessionState, name: str, tool_input: Any, tool_response: Any) -> Any:
    from capture import rpcs
    from mnemo.v1 import common_pb2, store_pb2

    tool_use = common_pb2.ToolUse(
        content_session_id=hook.session_id, project=state.project,
        tool_use_id=str(hook.payload.get("tool_use_id") or "")[:256], tool_name=name[:256],
        tool_input=_json_text(tool_input), tool_response=_json_text(tool_response),
        cwd=hook.cwd, prompt_number=state.prompt_number,
    )
    return hook.clients.call(rpcs.RECORD_TOOL_USE, store_pb2.RecordToolUseRequest(tool_use=tool_use))


def _observe(settings: Any, event: ToolEvent) -> tuple[list[Draft], str]:
    if settings.anthropic_api_key:
        from capture.llm_observer import observe_with_llm

        return observe_with_llm(settings, event)
    from capture.observer import observe

    return observe(event), "deterministic"


def _add_observations(hook: _Hook, state: SessionState, drafts: list[Draft], tool_use_ids: list[int],
                      key: str) -> list[int]:
    if not drafts:
        return []
    from capture import rpcs
    from mnemo.v1 import common_pb2, store_pb2

    observations = [
        common_pb2.Observation(
            memory_session_id=state.memory_session_id, project=state.project, type=d.type, title=d.title,
            subtitle=d.subtitle, narrative=d.narrative, facts=d.facts, concepts=d.concepts,
            files_read=d.files_read, files_modified=d.files_modified, prompt_number=state.prompt_number,
            tool_use_ids=tool_use_ids, external_id=f"mnemo:{hook.journal.key}:{key}:{i}",
        )
        for i, d in enumerate(drafts)
    ]
    reply = hook.clients.call(rpcs.ADD_OBSERVATIONS, store_pb2.AddObservationsRequest(observations=observations))
    return list(reply.ids)


def _flush(hook: _Hook, write_summary: bool) -> None:
    """Merge pending read bursts into observations and summarize the stretch."""
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
        observation_ids += _add_observations(hook, state, [merge_reads(events)], row_ids,
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


def _fetch_tool_uses(hook: _Hook, ids: list[int]) -> dict[int, Any]:
    from capture import rpcs
    from mnemo.v1 import store_pb2

    found: dict[int, Any] = {}
    for start in range(0, len(ids), 100):
        chunk = ids[start : start + 100]
        reply = hook.clients.call(rpcs.GET_TOOL_USES, store_pb2.GetToolUsesRequest(ids=chunk, limit=len(chunk)))
        found.update({t.id: t for t in reply.tool_uses})
    return found


def _event_of(tool_use: Any) -> ToolEvent:
    from capture.observer import ToolEvent

    return ToolEvent(
        tool_use.tool_name, _parse_json(tool_use.tool_input), _parse_json(tool_use.tool_response), tool_use.cwd
    )


def _write_summary(
    hook: _Hook,
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
    last_message = strip_private(last_assistant_message(str(hook.payload.get("transcript_path") or "")))
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


# --------------------------------------------------------------------------------------
# helpers


def clean_value(value: Any) -> Any:
    """The same structure with every string privacy-cleaned (so JSON text stays valid)."""
    if isinstance(value, str):
        return clean(value[:TOOL_TEXT_PRECAP])
    if isinstance(value, dict):
        return {str(k): clean_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [clean_value(v) for v in value]
    return value


def _json_text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def _parse_json(text: str) -> Any:
    if not text:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return text  # capped by the store: the prefix is still useful text


def log(settings: Any, level: str, message: str, **fields: Any) -> None:
    """One JSON line in $MNEMO_HOME/logs/hooks.log (stdlib only: structlog costs ~100 ms
    of import per hook). Never raises, never writes to stdout."""
    if level == "debug" and getattr(settings, "log_level", "info") != "debug":
        return
    try:
        logs_dir = settings.logs_dir
        logs_dir.mkdir(parents=True, exist_ok=True)
        record = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "level": level,
            "event": message,
            "pid": os.getpid(),
            **fields,
        }
        with open(logs_dir / "hooks.log", "a", encoding="utf-8") as fh:
            fh.write(json.dumps(record, default=str) + "\n")
    except Exception:  # noqa: BLE001 - logging must not break the host either
        pass
