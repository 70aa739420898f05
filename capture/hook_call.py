"""One hook invocation and what every event handler shares: the payload, the clients,
the session's journal, and the writes (tool use rows, observations).

Split from capture.hooks so the tool-event handlers (capture.hook_tools) and the
session handlers (capture.hooks) read one vocabulary without importing each other.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from capture.journal import Journal, SessionState
from capture.project import project_name

if TYPE_CHECKING:  # the observer compiles many patterns: imported only by the events that use it
    from capture.drafts import Draft
    from mnemo.logfile import RotatingFile

TOOL_TEXT_PRECAP = 1024 * 1024


class HookCall:
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
        # Set on an event replayed from the server runtime's outbox (capture.outbox.RECEIVED_KEY):
        # when the host fired it, which the replayed writes carry. 0: now.
        received = payload.get("mnemo_received_ms")
        self.received_ms = received if isinstance(received, int) and received > 0 else 0

    def state(self) -> SessionState | None:
        return self.journal.load_state()

    def ensure_session(self, user_prompt: str = "") -> SessionState:
        """The session's state, creating the session row on first sight."""
        state = self.state()
        if state is not None and state.memory_session_id:
            return state
        from capture import wire

        session = self.clients.call_wire(wire.UPSERT_SESSION, {
            "content_session_id": self.session_id, "project": self.project, "platform_source": self.platform,
            "user_prompt": user_prompt,
        })
        state = SessionState(self.platform, session["project"] or self.project,
                             memory_session_id=session["memory_session_id"] or self.session_id)
        self.journal.save_state(state)
        return state


def record_tool_use(hook: HookCall, state: SessionState, name: str, tool_input: Any, tool_response: Any) -> Any:
    from capture import rpcs
    from mnemo.v1 import common_pb2, store_pb2

    tool_use = common_pb2.ToolUse(
        content_session_id=hook.session_id, project=state.project,
        tool_use_id=str(hook.payload.get("tool_use_id") or "")[:256], tool_name=name[:256],
        tool_input=json_text(tool_input), tool_response=json_text(tool_response),
        cwd=hook.cwd, prompt_number=state.prompt_number, created_at_epoch=hook.received_ms,
    )
    return hook.clients.call(rpcs.RECORD_TOOL_USE, store_pb2.RecordToolUseRequest(tool_use=tool_use))


def add_observations(hook: HookCall, state: SessionState, drafts: list[Draft], tool_use_ids: list[int],
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
            created_at_epoch=hook.received_ms,
        )
        for i, d in enumerate(drafts)
    ]
    reply = hook.clients.call(rpcs.ADD_OBSERVATIONS, store_pb2.AddObservationsRequest(observations=observations))
    return list(reply.ids)


def clean_value(value: Any) -> Any:
    """The same structure with every string privacy-cleaned (so JSON text stays valid),
    and otherwise as the host sent it: code, diffs and outputs keep their indentation
    and final newline."""
    if isinstance(value, str):
        return keep_edges(value[:TOOL_TEXT_PRECAP])
    if isinstance(value, dict):
        return {str(k): clean_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [clean_value(v) for v in value]
    return value


def keep_edges(text: str) -> str:
    """mnemo.privacy.clean without its trimming: the leading and trailing whitespace of
    the original is put back around what is left."""
    from mnemo.privacy import clean  # its patterns compile at import: only hooks that store text pay

    cleaned = clean(text)
    if not cleaned:
        return cleaned
    lead = text[: len(text) - len(text.lstrip())]
    trail = text[len(text.rstrip()):]
    return lead + cleaned + trail


def json_text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def parse_json(text: str) -> Any:
    if not text:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return text  # capped by the store: the prefix is still useful text


def log(settings: Any, level: str, message: str, **fields: Any) -> None:
    """One JSON line in $MNEMO_HOME/logs/hooks.log, private (0600) and rotated past
    settings.log_max_bytes like every mnemo log (mnemo.logfile: stdlib only, since
    structlog costs ~100 ms of import per hook). Never raises, never writes to stdout."""
    if level == "debug" and getattr(settings, "log_level", "info") != "debug":
        return
    try:
        logs_dir = settings.logs_dir
        logs_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        record = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "level": level,
            "event": message,
            "pid": os.getpid(),
            **fields,
        }
        _log_file(logs_dir / "hooks.log", settings).write(json.dumps(record, default=str) + "\n")
    except Exception:  # noqa: BLE001 - logging must not break the host either
        pass


_LOG_FILES: dict[Path, RotatingFile] = {}


def _log_file(path: Path, settings: Any) -> RotatingFile:
    """One open log per path and process (a hook logs a few lines, and its process ends)."""
    if path not in _LOG_FILES:
        from mnemo.logfile import RotatingFile

        _LOG_FILES[path] = RotatingFile(path, settings.log_max_bytes, settings.log_backups)
    return _LOG_FILES[path]
