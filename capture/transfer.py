"""`mnemo import PATH` and `mnemo export [--project P] [PATH]`.

Import reads one of three formats, recognised by content (never by file name):
- a claude-mem SQLite database (opened READ-ONLY; tables sdk_sessions, user_prompts,
  observations, session_summaries of its published schema),
- a claude-mem export JSON file ({"sessions", "prompts", "observations", "summaries"}),
- mnemo's own JSONL (docs/jsonl.md: one {"kind": ..., fields} object per line).

Records go to StoreService.Import in batches, sessions first. The store deduplicates
(external ids, content hashes, natural keys), so importing twice stores once. claude-mem
rows get external ids `claude-mem:<kind>:<row id>`. Every text is privacy-cleaned on the
way (claude-mem leaks an entirely private first prompt into sdk_sessions.user_prompt;
that text is dropped here, and the store cleans again). A bad record is reported with
its line number or row id; the rest is imported. Original timestamps are kept.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mnemo.privacy import clean

BATCH = 500
KINDS = ("session", "prompt", "observation", "summary", "tool_use")
SQLITE_MAGIC = b"SQLite format 3\x00"


@dataclass
class SourceItem:
    """One record read from a source: a message to import, or why it cannot be."""

    where: str
    kind: str = ""
    message: Any = None
    error: str = ""
    private: bool = False
    """True when the record was left out because nothing was left after privacy stripping."""


@dataclass
class ImportReport:
    imported: int = 0
    skipped: int = 0
    private: int = 0
    bad: list[tuple[str, str]] = field(default_factory=list)

    def text(self) -> str:
        parts = [f"imported {self.imported}", f"already present {self.skipped}"]
        if self.private:
            parts.append(f"left out as private {self.private}")
        parts.append(f"bad {len(self.bad)}")
        return "import: " + ", ".join(parts)


# --------------------------------------------------------------------------------------
# CLI entry points


def run_import(settings: Any, args: Any) -> int:
    path = Path(args.path).expanduser()
    if not path.is_file():
        print(f"mnemo import: {path} is not a file", file=sys.stderr)
        return 2
    source_format = detect_format(path)
    total, items = open_source(path, source_format)
    client = _store_client(settings)
    try:
        report = import_items(client, items, total, progress=_Progress(total) if sys.stderr.isatty() else None)
    finally:
        client.close()
    for where, message in report.bad:
        print(f"bad record at {where}: {message}", file=sys.stderr)
    print(f"{report.text()} (from {source_format} {path})")
    return 1 if report.bad else 0


def run_export(settings: Any, args: Any) -> int:
    from mnemo.v1 import store_pb2

    client = _store_client(settings)
    out = open(args.path, "w", encoding="utf-8") if args.path else sys.stdout  # noqa: SIM115
    count = 0
    try:
        stream = client.stub.Export(store_pb2.ExportRequest(project=args.project or ""),
                                    timeout=max(settings.rpc_timeout_s, 3600.0))
        for item in stream:
            out.write(json.dumps(item_to_record(item), ensure_ascii=False) + "\n")
            count += 1
    finally:
        if args.path:
            out.close()
        client.close()
    print(f"export: {count} records" + (f" to {args.path}" if args.path else ""), file=sys.stderr)
    return 0


def import_items(client: Any, items: Iterator[SourceItem], total: int = 0,
                 progress: Callable[[int], None] | None = None) -> ImportReport:
    """Send items in batches; the report of what happened to each."""
    from mnemo.v1 import store_pb2

    report = ImportReport()
    batch: list[SourceItem] = []
    seen = 0

    def send() -> None:
        reply = client.stub.Import(store_pb2.ImportRequest(items=[_export_item(i) for i in batch]))
        report.imported += reply.imported
        report.skipped += reply.skipped
        for error in reply.errors:
            report.bad.append((batch[error.index].where, error.message))
        batch.clear()

    for item in items:
        seen += 1
        if item.private:
            report.private += 1
        elif item.error:
            report.bad.append((item.where, item.error))
        else:
            batch.append(item)
            if len(batch) >= BATCH:
                send()
        if progress and seen % 100 == 0:
            progress(seen)
    if batch:
        send()
    if progress:
        progress(seen, final=True)
    return report


# --------------------------------------------------------------------------------------
# formats


def detect_format(path: Path) -> str:
    """sqlite | claude-mem-json | jsonl."""
    with path.open("rb") as fh:
        head = fh.read(len(SQLITE_MAGIC))
        if head == SQLITE_MAGIC:
            return "sqlite"
        fh.seek(0)
        first_line = fh.readline(1024 * 1024)
    try:
        first = json.loads(first_line)
    except ValueError:
        return "claude-mem-json"  # a pretty-printed document; a bad JSONL line 1 is reported too
    return "jsonl" if isinstance(first, dict) and "kind" in first else "claude-mem-json"


def open_source(path: Path, source_format: str) -> tuple[int, Iterator[SourceItem]]:
    if source_format == "sqlite":
        return ClaudeMemDatabase(path).open()
    if source_format == "jsonl":
        return read_jsonl(path)
    return read_claude_mem_json(path)


# -- mnemo JSONL -----------------------------------------------------------------------


def read_jsonl(path: Path) -> tuple[int, Iterator[SourceItem]]:
    with path.open("rb") as fh:
        total = sum(1 for line in fh if line.strip())

    def items() -> Iterator[SourceItem]:
        # Two passes, sessions first: the store files prompts and observations under them.
        for sessions_pass in (True, False):
            with path.open("r", encoding="utf-8", errors="replace") as fh:
                for number, line in enumerate(fh, 1):
                    if not line.strip():
                        continue
                    item = record_to_item(line, f"line {number}")
                    if (item.kind == "session") == sessions_pass:
                        yield item

    return total, items()


def record_to_item(line: str, where: str) -> SourceItem:
    try:
        record = json.loads(line)
    except ValueError as err:
        return SourceItem(where, error=f"not valid JSON ({err.msg} at column {err.colno})")
    if not isinstance(record, dict):
        return SourceItem(where, error="not a JSON object")
    kind = record.get("kind")
    if kind not in KINDS:
        return SourceItem(where, kind="?", error=f"unknown kind {kind!r}; expected one of {', '.join(KINDS)}")
    fields = {k: v for k, v in record.items() if k != "kind"}
    try:
        return SourceItem(where, kind, message=dict_to_message(_message_class(kind), fields))
    except ValueError as err:
        return SourceItem(where, kind, error=str(err))


def item_to_record(item: Any) -> dict[str, Any]:
    """One ExportItem as a JSONL record: {"kind": ..., every field of the message}."""
    kind = item.WhichOneof("item")
    return {"kind": kind, **message_to_dict(getattr(item, kind))}


def message_to_dict(message: Any) -> dict[str, Any]:
    """Every field (defaults included), arrays as lists, int64 as JSON numbers."""
    out: dict[str, Any] = {}
    for descriptor in message.DESCRIPTOR.fields:
        value = getattr(message, descriptor.name)
        out[descriptor.name] = list(value) if descriptor.is_repeated else value
    return out


def dict_to_message(cls: Any, data: dict[str, Any]) -> Any:
    """A message from a dict, refusing unknown fields and values of the wrong type."""
    message = cls()
    by_name = cls.DESCRIPTOR.fields_by_name
    for name, value in data.items():
        descriptor = by_name.get(name)
        if descriptor is None:
            raise ValueError(f"unknown field {name!r} for a {cls.DESCRIPTOR.name}")
        if value is None:
            continue
        if descriptor.is_repeated:
            if not isinstance(value, list):
                raise ValueError(f"{name}: expected an array")
            getattr(message, name).extend(_scalar(descriptor, name, v) for v in value)
        else:
            setattr(message, name, _scalar(descriptor, name, value))
    return message


def _scalar(descriptor: Any, name: str, value: Any) -> Any:
    kind = descriptor.cpp_type
    if kind == descriptor.CPPTYPE_STRING:
        if not isinstance(value, str):
            raise ValueError(f"{name}: expected a string, got {type(value).__name__}")
        return value
    if kind == descriptor.CPPTYPE_BOOL:
        if not isinstance(value, bool):
            raise ValueError(f"{name}: expected true or false")
        return value
    if kind in (descriptor.CPPTYPE_INT32, descriptor.CPPTYPE_INT64, descriptor.CPPTYPE_UINT32,
                descriptor.CPPTYPE_UINT64):
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"{name}: expected an integer, got {value!r}"[:200])
        return value
    if kind in (descriptor.CPPTYPE_DOUBLE, descriptor.CPPTYPE_FLOAT):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"{name}: expected a number")
        return value
    raise ValueError(f"{name}: unsupported field type")


def _message_class(kind: str) -> Any:
    from mnemo.v1 import common_pb2

    return {"session": common_pb2.Session, "prompt": common_pb2.UserPrompt, "observation": common_pb2.Observation,
            "summary": common_pb2.Summary, "tool_use": common_pb2.ToolUse}[kind]


def _export_item(item: SourceItem) -> Any:
    from mnemo.v1 import store_pb2

    return store_pb2.ExportItem(**{item.kind: item.message})


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
                platform_source=_text(row, "platform_source") or "claude",
                # claude-mem stores an entirely private first prompt verbatim here: clean() drops it.
                user_prompt=clean(_text(row, "user_prompt")), status=_text(row, "status") or "active",
                started_at=started, started_at_epoch=started_epoch, completed_at=completed,
                completed_at_epoch=completed_epoch, prompt_counter=_int(row, "prompt_counter"),
                custom_title=clean(_text(row, "custom_title")), external_id=f"claude-mem:session:{row.get('id')}",
            )

        return _guarded(where, "session", build)

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
                platform_source=_text(row, "platform_source") or _text(owner, "platform_source") or "claude",
                external_id=f"claude-mem:prompt:{row.get('id')}",
            )

        return _guarded(where, "prompt", build)

    def observation(self, row: dict[str, Any], where: str) -> SourceItem:
        from mnemo.v1 import common_pb2

        def build() -> Any:
            epoch, iso = _time_pair(row, "created_at")
            return common_pb2.Observation(
                memory_session_id=_text(row, "memory_session_id", required=True),
                project=_text(row, "project", required=True), type=_text(row, "type", required=True),
                title=_text(row, "title"), subtitle=_text(row, "subtitle"), narrative=_text(row, "narrative"),
                text=_text(row, "text"), facts=_array(row, "facts"), concepts=_array(row, "concepts"),
                files_read=_array(row, "files_read"), files_modified=_array(row, "files_modified"),
                prompt_number=_int(row, "prompt_number"), discovery_tokens=_int(row, "discovery_tokens"),
                created_at=iso, created_at_epoch=epoch, external_id=f"claude-mem:obs:{row.get('id')}",
            )

        return _guarded(where, "observation", build)

    def summary(self, row: dict[str, Any], where: str) -> SourceItem:
        from mnemo.v1 import common_pb2

        def build() -> Any:
            epoch, iso = _time_pair(row, "created_at")
            return common_pb2.Summary(
                memory_session_id=_text(row, "memory_session_id", required=True),
                project=_text(row, "project", required=True), request=clean(_text(row, "request")),
                investigated=_text(row, "investigated"), learned=_text(row, "learned"),
                completed=_text(row, "completed"), next_steps=_text(row, "next_steps"), notes=_text(row, "notes"),
                files_read=_array(row, "files_read"), files_edited=_array(row, "files_edited"),
                prompt_number=_int(row, "prompt_number"), discovery_tokens=_int(row, "discovery_tokens"),
                created_at=iso, created_at_epoch=epoch, external_id=f"claude-mem:summary:{row.get('id')}",
            )

        return _guarded(where, "summary", build)


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
                raise _bad_file(self.path, "an SQLite database, but not claude-mem's (no sdk_sessions table)")
            total = sum(conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]  # table names are constants
                        for t, _ in self.TABLES if t in present)
        except sqlite3.Error as err:
            conn.close()
            raise _bad_file(self.path, f"cannot read the database: {err}") from None
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
                convert = getattr(rows, kind)
                for row in conn.execute(f"SELECT * FROM {table} ORDER BY id"):  # constant table names
                    data = dict(row)
                    if kind == "session":
                        rows.remember_session(data)
                    yield convert(data, f"{table} row id={data.get('id')}")
        finally:
            conn.close()


def read_claude_mem_json(path: Path) -> tuple[int, Iterator[SourceItem]]:
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as err:
        raise _bad_file(path, f"not valid JSON ({err})") from None
    if not isinstance(document, dict) or not any(k in document for k in ("observations", "sessions")):
        raise _bad_file(path, "not a claude-mem export (no observations/sessions arrays) nor mnemo JSONL")
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
                if kind == "session":
                    rows.remember_session(row)
                yield getattr(rows, kind)(row, where)

    return total, items()


def _bad_file(path: Path, why: str) -> Exception:
    from mnemo.errors import InvalidArgument

    return InvalidArgument(str(path), why)


def _guarded(where: str, kind: str, build: Callable[[], Any]) -> SourceItem:
    try:
        message = build()
    except (ValueError, TypeError) as err:
        return SourceItem(where, kind, error=str(err))
    if message is None:
        return SourceItem(where, kind, private=True)
    return SourceItem(where, kind, message=message)


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


# --------------------------------------------------------------------------------------
# plumbing


def _store_client(settings: Any) -> Any:
    """A store client; starts the local stack first when the store is down."""
    from mnemo.grpc_client import check_health, connect
    from mnemo.v1 import store_pb2_grpc

    if not check_health(settings.address("store"), tls_ca=settings.tls_ca):
        from mnemo.stack import ensure_stack

        ensure_stack(settings, settings.start_timeout_s)
    client = connect(settings, "store", store_pb2_grpc.StoreServiceStub)
    client.timeout = max(client.timeout, 120.0)  # a batch of 500 imports in one transaction
    return client


class _Progress:
    """A one-line progress bar on stderr (only used when stderr is a terminal)."""

    def __init__(self, total: int):
        self.total = max(total, 1)

    def __call__(self, done: int, final: bool = False) -> None:
        width = 30
        filled = min(width, int(width * done / self.total))
        sys.stderr.write(f"\rimporting [{'#' * filled}{' ' * (width - filled)}] {done}/{self.total}")
        if final:
            sys.stderr.write("\n")
        sys.stderr.flush()
