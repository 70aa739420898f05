"""Reading claude-mem's formats: its SQLite database (read-only) and its export JSON.

claude-mem rows get external ids `claude-mem:<kind>:<row id>`, so importing twice stores
once; every text is privacy-cleaned on the way (claude-mem leaks an entirely private
first prompt into sdk_sessions.user_prompt; that text is dropped here).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from capture.transfer_formats import SourceItem, bad_file, guarded
from mnemo.privacy import clean
from mnemo.vocab import DEFAULT_PLATFORM, SUMMARY_FIELDS

# -- claude-mem ------------------------------------------------------------------------


class ClaudeMemRows:
    """Row mapping shared by the database and the JSON export (same column names)."""

    def __init__(self) -> None:
        self.sessions_by_id: dict[int, dict[str, Any]] = {}
        self.sessions_by_content: dict[str, dict[str, Any]] = {}
        self.sessions_by_memory: dict[str, dict[str, Any]] = {}

    def remember_session(self, row: dict[str, Any]) -> None:
        if row.get("id") is not None:
            self.sessions_by_id[row["id"]] = row
        if row.get("content_session_id"):
            self.sessions_by_content.setdefault(str(row["content_session_id"]), row)
        if row.get("memory_session_id"):
            self.sessions_by_memory[str(row["memory_session_id"])] = row

    def session(self, row: dict[str, Any], where: str) -> SourceItem:
        from mnemo.v1 import common_pb2

        def build() -> Any:
            started_epoch, started = _time_pair(row, "started_at")
            completed_epoch, completed = _time_pair(row, "completed_at", required=False)
            return common_pb2.Session(
                content_session_id=_text(row, "content_session_id", required=True),
                memory_session_id=_text(row, "memory_session_id"), project=_text(row, "project", required=True),
                platform_source=_text(row, "platform_source") or DEFAULT_PLATFORM,
                # claude-mem stores an entirely private first prompt verbatim here: clean() drops it.
                user_prompt=clean(_text(row, "user_prompt")), status=_text(row, "status") or "active",
                started_at=started, started_at_epoch=started_epoch, completed_at=completed,
                completed_at_epoch=completed_epoch, prompt_counter=_int(row, "prompt_counter"),
                custom_title=clean(_text(row, "custom_title")), external_id=f"claude-mem:session:{row.get('id')}",
            )

        return guarded(where, "session", build)

    def prompt(self, row: dict[str, Any], where: str) -> SourceItem:
        from mnemo.v1 import common_pb2

        owner = (self.sessions_by_id.get(row.get("session_db_id"))  # type: ignore[arg-type]
                 or self.sessions_by_content.get(str(row.get("content_session_id"))) or {})

        def build() -> Any:
            text = clean(_text(row, "prompt_text"))
            if not text:
                return None
            epoch, iso = _time_pair(row, "created_at")
            return common_pb2.UserPrompt(
                content_session_id=_text(row, "content_session_id", required=True),
                prompt_number=_int(row, "prompt_number"), prompt_text=text, created_at=iso, created_at_epoch=epoch,
                project=_text(row, "project") or _text(owner, "project"),
                platform_source=_text(row, "platform_source") or _text(owner, "platform_source") or DEFAULT_PLATFORM,
                external_id=f"claude-mem:prompt:{row.get('id')}",
            )

        return guarded(where, "prompt", build)

    def observation(self, row: dict[str, Any], where: str) -> SourceItem:
        return guarded(where, "observation", lambda: _message_of(_OBSERVATION_COLUMNS, row))

    def summary(self, row: dict[str, Any], where: str) -> SourceItem:
        return guarded(where, "summary", lambda: _message_of(_SUMMARY_COLUMNS, row))

    def item(self, kind: str, row: dict[str, Any], where: str) -> SourceItem:
        """The row of one table as an item; sessions are remembered for the prompts that follow."""
        if kind == "session":
            self.remember_session(row)
        converted: SourceItem = getattr(self, kind)(row, where)
        return converted


@dataclass(frozen=True)
class _Columns:
    """How the rows of one claude-mem table become a common_pb2 message: the columns and
    the fields share their names, so a table of names by reader does the mapping."""

    message: str  # the common_pb2 class
    id_prefix: str  # external id: claude-mem:<id_prefix>:<row id>
    required: tuple[str, ...]
    texts: tuple[str, ...]
    arrays: tuple[str, ...]
    cleaned: tuple[str, ...] = ()  # texts where claude-mem may have kept private content
    ints: tuple[str, ...] = ("prompt_number", "discovery_tokens")


_OBSERVATION_COLUMNS = _Columns(
    "Observation", "obs", required=("memory_session_id", "project", "type"),
    texts=("title", "subtitle", "narrative", "text"), arrays=("facts", "concepts", "files_read", "files_modified"),
)
_SUMMARY_COLUMNS = _Columns(
    "Summary", "summary", required=("memory_session_id", "project"),
    texts=SUMMARY_FIELDS,
    arrays=("files_read", "files_edited"), cleaned=("request",),
)


def _message_of(columns: _Columns, row: dict[str, Any]) -> Any:
    """The message of one row; a ValueError names the first bad column (in the table's order)."""
    from mnemo.v1 import common_pb2

    epoch, iso = _time_pair(row, "created_at")
    fields: dict[str, Any] = {name: _text(row, name, required=True) for name in columns.required}
    for name in columns.texts:
        value = _text(row, name)
        fields[name] = clean(value) if name in columns.cleaned else value
    fields |= {name: _array(row, name) for name in columns.arrays}
    fields |= {name: _int(row, name) for name in columns.ints}
    message_class = getattr(common_pb2, columns.message)
    return message_class(**fields, created_at=iso, created_at_epoch=epoch,
                         external_id=f"claude-mem:{columns.id_prefix}:{row.get('id')}")


class ClaudeMemDatabase:
    TABLES = (("sdk_sessions", "session"), ("user_prompts", "prompt"), ("observations", "observation"),
              ("session_summaries", "summary"))

    def __init__(self, path: Path):
        self.path = path

    def open(self) -> tuple[int, Iterator[SourceItem]]:
        conn = self._connect()
        try:
            present = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            if "sdk_sessions" not in present:
                raise bad_file(self.path, "an SQLite database, but not claude-mem's (no sdk_sessions table)")
            total = sum(conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]  # table names are constants
                        for t, _ in self.TABLES if t in present)
        except sqlite3.Error as err:
            conn.close()
            raise bad_file(self.path, f"cannot read the database: {err}") from None
        except Exception:
            conn.close()
            raise
        return total, self._items(conn, present)

    def _connect(self) -> sqlite3.Connection:
        uri = f"{self.path.resolve().as_uri()}?mode=ro"
        conn = sqlite3.connect(uri, uri=True)
        conn.row_factory = sqlite3.Row
        return conn

    def _items(self, conn: sqlite3.Connection, present: set[str]) -> Iterator[SourceItem]:
        rows = ClaudeMemRows()
        try:
            for table, kind in self.TABLES:
                if table not in present:
                    continue
                for row in conn.execute(f"SELECT * FROM {table} ORDER BY id"):  # constant table names
                    data = dict(row)
                    yield rows.item(kind, data, f"{table} row id={data.get('id')}")
        finally:
            conn.close()


def read_claude_mem_json(path: Path) -> tuple[int, Iterator[SourceItem]]:
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as err:
        raise bad_file(path, f"not valid JSON ({err})") from None
    if not isinstance(document, dict) or not any(k in document for k in ("observations", "sessions")):
        raise bad_file(path, "not a claude-mem export (no observations/sessions arrays) nor mnemo JSONL")
    sections = (("sessions", "session"), ("prompts", "prompt"), ("observations", "observation"),
                ("summaries", "summary"))
    total = sum(len(document.get(k) or []) for k, _ in sections)

    def items() -> Iterator[SourceItem]:
        rows = ClaudeMemRows()
        for key, kind in sections:
            values = document.get(key) or []
            if not isinstance(values, list):
                yield SourceItem(key, error=f'"{key}" is not an array')
                continue
            for index, row in enumerate(values):
                where = f"{key}[{index}]" + (f" (id={row.get('id')})" if isinstance(row, dict) else "")
                if not isinstance(row, dict):
                    yield SourceItem(where, error="not an object")
                    continue
                yield rows.item(kind, row, where)

    return total, items()


def _text(row: dict[str, Any], key: str, required: bool = False) -> str:
    value = row.get(key)
    if value is None or value == "":
        if required:
            raise ValueError(f"{key} is missing")
        return ""
    if not isinstance(value, (str, int, float)):
        raise ValueError(f"{key}: expected text, got {type(value).__name__}")
    return str(value)


def _int(row: dict[str, Any], key: str) -> int:
    value = row.get(key)
    if value is None or value == "":
        return 0
    if isinstance(value, bool):
        raise ValueError(f"{key}: expected an integer")
    try:
        return int(value)
    except (TypeError, ValueError):
        raise ValueError(f"{key}: expected an integer, got {str(value)[:40]!r}") from None


def _array(row: dict[str, Any], key: str) -> list[str]:
    """A claude-mem JSON-text array column (or an array already, in an export file)."""
    value = row.get(key)
    if value is None or value == "":
        return []
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            raise ValueError(f"{key}: not a JSON array ({value[:40]!r})") from None
    if not isinstance(value, list):
        raise ValueError(f"{key}: expected a JSON array, got {type(value).__name__}")
    return [item if isinstance(item, str) else json.dumps(item) for item in value if item is not None]


def _time_pair(row: dict[str, Any], prefix: str, required: bool = True) -> tuple[int, str]:
    """(epoch ms, ISO text) from `<prefix>_epoch` and/or `<prefix>`, keeping what is there."""
    from mnemo.timefmt import iso_from_ms, parse_instant

    epoch = _int(row, f"{prefix}_epoch")
    iso = _text(row, prefix)
    if not epoch and iso:
        try:
            epoch = parse_instant(iso, prefix)
        except Exception:  # noqa: BLE001 - InvalidArgument; reported as a bad record
            raise ValueError(f"{prefix}: not an ISO-8601 time ({iso[:40]!r})") from None
    if not epoch:
        if required:
            raise ValueError(f"{prefix}_epoch is missing")
        return 0, ""
    return epoch, iso or iso_from_ms(epoch)


