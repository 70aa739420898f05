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
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from capture.transfer_claude_mem import ClaudeMemDatabase, read_claude_mem_json
from capture.transfer_formats import SourceItem, export_item, item_to_record, read_jsonl

BATCH = 500
SQLITE_MAGIC = b"SQLite format 3\x00"


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
        progress = _export_progress(client, args)
        stream = client.stub.Export(store_pb2.ExportRequest(project=args.project or ""),
                                    timeout=max(settings.rpc_timeout_s, 3600.0))
        for item in stream:
            out.write(json.dumps(item_to_record(item), ensure_ascii=False) + "\n")
            count += 1
            if progress and count % 100 == 0:
                progress(count)
        if progress:
            progress(count, final=True)
    finally:
        if args.path:
            out.close()
        client.close()
    print(f"export: {count} records" + (f" to {args.path}" if args.path else ""), file=sys.stderr)
    return 0


def _export_progress(client: Any, args: Any) -> _Progress | None:
    """A bar on a terminal's stderr, unless the JSONL itself goes to that terminal."""
    if not sys.stderr.isatty() or (not args.path and sys.stdout.isatty()):
        return None
    from mnemo.v1 import store_pb2

    stats = client.stub.Stats(store_pb2.StatsRequest(project=args.project or ""))
    # Every exported item is one of these rows; tool uses are counted store-wide (an upper bound).
    total = stats.sessions + stats.prompts + stats.observations + stats.summaries + stats.tool_uses
    return _Progress(total, "exporting")


def import_items(client: Any, items: Iterator[SourceItem], total: int = 0,
                 progress: _Progress | None = None) -> ImportReport:
    """Send items in batches; the report of what happened to each."""
    from mnemo.v1 import store_pb2

    report = ImportReport()
    batch: list[SourceItem] = []
    seen = 0

    def send() -> None:
        reply = client.stub.Import(store_pb2.ImportRequest(items=[export_item(i) for i in batch]))
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
    """sqlite | claude-mem-json | jsonl. A file with no content is JSONL of no records: what
    `mnemo export` writes for a project without any."""
    with path.open("rb") as fh:
        head = fh.read(len(SQLITE_MAGIC))
        if head == SQLITE_MAGIC:
            return "sqlite"
        fh.seek(0)
        first_line = fh.readline(1024 * 1024)
        if not first_line.strip() and all(not line.strip() for line in fh):
            return "jsonl"
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

    def __init__(self, total: int, verb: str = "importing"):
        self.total = max(total, 1)
        self.verb = verb

    def __call__(self, done: int, final: bool = False) -> None:
        width = 30
        total = done if final else max(self.total, done)  # an estimated total never shows more than 100%
        filled = min(width, int(width * done / max(total, 1)))
        sys.stderr.write(f"\r{self.verb} [{'#' * filled}{' ' * (width - filled)}] {done}/{total}")
        if final:
            sys.stderr.write("\n")
        sys.stderr.flush()
