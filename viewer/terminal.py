"""Terminal commands: `mnemo search`, `show`, `forget`, `mark-wrong`, `stats` (`doctor`
lives in viewer/doctor.py).

They ask search_svc what the viewer asks (viewer.client), so `mnemo search` returns the
ids mem_search and the viewer return for the same query. Tables go to stdout; `--json`
prints one JSON document for scripts. Every `run_*` has the CLI's signature.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from collections.abc import Callable, Sequence
from typing import Any, TextIO, TypeVar

from mnemo.config import Settings
from mnemo.errors import MnemoError
from mnemo.vocab import OBSERVATION_TYPES, SEARCH_LIMIT_DEFAULT, SEARCH_LIMIT_MAX
from viewer import present, when
from viewer.client import MemoryClient, SearchQuery

T = TypeVar("T")


def _ask(settings: Settings, call: Callable[[MemoryClient], T]) -> T:
    """One call through a client of a running stack (started when it is local and down)."""
    from viewer.main import ensure_services

    ensure_services(settings)
    client = MemoryClient(settings)
    try:
        return call(client)
    finally:
        client.close()


def _width() -> int:
    return max(60, min(160, shutil.get_terminal_size((100, 20)).columns))


def _cut(text: str, width: int | None) -> str:
    """`text` on one line, cut to `width` columns (None: whole)."""
    flat = " ".join(text.split())
    return flat if width is None or len(flat) <= width else flat[: max(1, width - 1)] + "…"


def table(rows: Sequence[dict[str, Any]], out: TextIO) -> None:
    """id, type, date, project, title: on a terminal the title takes what the terminal has
    left; piped (grep, a file), titles are whole."""
    if not rows:
        print("Nothing found.", file=out)
        return
    title_width = _width() - 6 - 15 - 11 - 14 - 8 if out.isatty() else None
    print(f"{'ID':<6} {'TYPE':<14} {'DATE':<10} {'PROJECT':<13}  TITLE", file=out)
    for row in rows:
        print(f"{row['display_id']:<6} {row['type'][:14]:<14} {row['created_at'][:10]:<10} "
              f"{_cut(row['project'], 13):<13}  {_cut(row['title'], title_width)}", file=out)


def run_search(settings: Settings, args: argparse.Namespace) -> int:
    text = " ".join(args.query) if isinstance(args.query, list) else args.query  # `mnemo search VAT rate`
    query = SearchQuery(text=text, project=args.project or "", types=tuple(args.type or ()),
                        date_start=when.resolve(args.since or "", "--since"),
                        date_end=when.resolve(args.until or "", "--until"), files=tuple(args.file or ()),
                        limit=args.limit)
    reply = _ask(settings, lambda client: client.search(query))
    rows = [present.row_view(r) for r in reply.rows]
    if args.json:
        _print_json({"total": reply.counts.total, "strategy": reply.strategy, "rows": rows})
    else:
        table(rows, sys.stdout)
        if reply.notice:
            print(f"note: {reply.notice}", file=sys.stderr)
    return 0


def run_show(settings: Settings, args: argparse.Namespace) -> int:
    detail = _ask(settings, lambda client: client.detail(args.id))
    if args.json:
        _print_json(present.as_dict(detail))
        return 0
    out = sys.stdout
    print(f"{detail.row.display_id}  [{detail.row.type}]  {detail.row.title}", file=out)
    for key, value in present.record_meta(detail.record).items():
        print(f"  {key:<9} {value}", file=out)
    wrong = present.wrong_mark(detail.record)
    if wrong:
        print(f"  MARKED WRONG {wrong['when']}{': ' + wrong['reason'] if wrong['reason'] else ''} "
              f"(searches skip it; undo: mnemo mark-wrong --undo {detail.row.display_id})", file=out)
    for section in present.record_sections(detail.record):
        print(f"\n{section.label.upper()}", file=out)
        print("\n".join(f"  - {item}" for item in section.items) if section.items else section.text, file=out)
    for use in detail.tool_uses:
        print(f"\nTOOL USE {use.tool_name} {use.tool_use_id}", file=out)
        for label, raw in (("input", use.tool_input), ("response", use.tool_response)):
            body = present.readable(raw)
            print(f"  {label}:\n" + "\n".join("    " + line for line in body.splitlines()), file=out)
    if detail.corpora:
        print(f"\nCORPORA  {', '.join(detail.corpora)}", file=out)
    return 0


def _confirmed(what: str, assume_yes: bool) -> bool:
    if assume_yes:
        return True
    if not sys.stdin.isatty():
        print(f"mnemo forget: refusing to forget {what} without a terminal to confirm; pass --yes", file=sys.stderr)
        return False
    answer = input(f"Forget {what}? This cannot be undone. Type 'yes': ")
    return answer.strip().lower() == "yes"


def run_forget(settings: Settings, args: argparse.Namespace) -> int:
    ids, sessions, project = list(args.ids or ()), list(args.session or ()), args.project or ""
    if not (ids or sessions or project):
        print("mnemo forget: name record ids, --session S or --project P", file=sys.stderr)
        return 2
    what = ", ".join([*ids, *(f"session {s}" for s in sessions), *([f"project {project}"] if project else [])])
    if not _confirmed(what, args.yes):
        return 1
    reply = _ask(settings, lambda client: client.forget(ids, sessions, project))
    return _print_reply(args, present.as_dict(reply.deleted), reply.text)


def _print_reply(args: argparse.Namespace, payload: Any, text: str) -> int:
    """The reply as JSON for scripts (--json), else its text for a person."""
    if args.json:
        _print_json(payload)
    else:
        print(text)
    return 0


def _print_json(payload: Any) -> None:
    json.dump(payload, sys.stdout, indent=2)
    print()


def run_mark_wrong(settings: Settings, args: argparse.Namespace) -> int:
    """Mark records wrong (kept, but no search or fetch returns them) or take the mark back."""
    reply = _ask(settings, lambda client: client.mark_wrong(args.ids, undo=args.undo, reason=args.reason or ""))
    return _print_reply(args, present.as_dict(reply), reply.text)


def run_stats(settings: Settings, args: argparse.Namespace) -> int:
    health = _ask(settings, lambda client: client.health(args.project or ""))
    if health.overview is None:
        print(f"mnemo stats: {health.problem}", file=sys.stderr)
        return 2
    view = present.overview_view(health.overview)
    view["disk_bytes"] = present.disk_use(settings.home)
    if args.json:
        _print_json(view)
        return 0
    for name, count in view["counts"].items():
        print(f"{name:<14}{count:>10}")
    print(f"{'database':<14}{present.human_bytes(view['db_bytes']):>10}")
    print(f"{'home on disk':<14}{present.human_bytes(view['disk_bytes']):>10}")
    vector = view["vector"]
    print(f"{'vector lag':<14}{vector['lag'] if vector else 'n/a':>10}")
    peak = max((_day_total(d) for d in view["days"]), default=0)
    print(f"\nactivity, last {len(view['days'])} days: {sparkline(view['days'])}  (peak {peak}/day)")
    for project in view["projects"][:10]:
        print(f"  {project['project']:<24} {project['observations']:>6} obs  {project['sessions']:>4} sessions")
    return 0


def _day_total(day: dict[str, Any]) -> int:
    return int(day["observations"] + day["summaries"] + day["prompts"])


def sparkline(days: Sequence[dict[str, Any]]) -> str:
    ticks = "▁▂▃▄▅▆▇█"
    totals = [_day_total(d) for d in days]
    peak = max(totals, default=0) or 1
    return "".join(" " if t == 0 else ticks[min(7, (t * 7) // peak)] for t in totals)


# ---------------------------------------------------------------------------- arguments

def add_arguments(command: str, parser: argparse.ArgumentParser) -> None:
    """The flags of one terminal command (the `mnemo` CLI adds its setting flags too)."""
    if command == "search":
        parser.add_argument("query", nargs="+", help="what to look for (words or a question; quotes optional)")
        parser.add_argument("--project", help="only this project")
        parser.add_argument("--type", action="append", choices=OBSERVATION_TYPES, metavar="TYPE",
                            help=f"observation type, repeatable: {', '.join(OBSERVATION_TYPES)}")
        parser.add_argument("--since", type=_date, help="from this date, inclusive: 2026-01-15, yesterday, 7d, 12h")
        parser.add_argument("--until", type=_date, help="up to this date, inclusive (same forms)")
        parser.add_argument("--file", action="append", help="file path fragment (repeatable)")
        parser.add_argument("--limit", type=_limit, default=SEARCH_LIMIT_DEFAULT,
                            help=f"rows (1-{SEARCH_LIMIT_MAX}, default {SEARCH_LIMIT_DEFAULT})")
    elif command == "show":
        parser.add_argument("id", help="record id: #12 or 12 (observation), S3 (summary), P7 (prompt)")
    elif command == "forget":
        parser.add_argument("ids", nargs="*", help="record ids to forget")
        parser.add_argument("--session", action="append", help="a whole session (memory or host id)")
        parser.add_argument("--project", help="a whole project")
        parser.add_argument("--yes", action="store_true", help="do not ask for confirmation (scripts)")
    elif command == "mark-wrong":
        parser.add_argument("ids", nargs="+", help="record ids: #12 or 12 (observation), S3 (summary), P7 (prompt)")
        parser.add_argument("--undo", action="store_true", help="take the mark back: return them again")
        parser.add_argument("--reason", help="why they are wrong (shown in the viewer)")
    elif command == "stats":
        parser.add_argument("--project", help="only this project")
    if command in ("search", "show", "forget", "mark-wrong", "stats", "doctor"):
        parser.add_argument("--json", action="store_true", help="print JSON for scripts")


def _date(text: str) -> str:
    """A date flag checked while parsing (its usage printed with the error); resolved to
    an ISO text only when the search runs, so `7d` means seven days before that moment."""
    try:
        when.resolve(text, "date")
    except MnemoError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a date: use {when.FORMS}") from None
    return text


def _limit(text: str) -> int:
    try:
        limit = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if not 1 <= limit <= SEARCH_LIMIT_MAX:
        raise argparse.ArgumentTypeError(f"{limit} is out of range: use 1-{SEARCH_LIMIT_MAX}")
    return limit
