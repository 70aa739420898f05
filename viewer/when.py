"""Dates as people type them, for `mnemo search --since/--until` and the viewer's search
form: an ISO date or timestamp as search_svc reads it, or a relative one (`today`,
`yesterday`, `7d`, `12h`, `2w`, `30m`), turned into the ISO text search_svc expects.

Days are UTC days, as the dates the viewer and the terminal print.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta

from mnemo.errors import InvalidArgument
from mnemo.timefmt import parse_instant

_AGO = re.compile(r"^(?P<count>\d+)\s*(?P<unit>m|min|h|d|w)$")
_UNITS = {"m": timedelta(minutes=1), "min": timedelta(minutes=1), "h": timedelta(hours=1),
          "d": timedelta(days=1), "w": timedelta(weeks=1)}
FORMS = "an ISO date (2026-01-15), a timestamp, today, yesterday, or an age such as 7d, 12h, 2w"


def resolve(text: str, field: str, now: datetime | None = None) -> str:
    """`text` as an ISO date or timestamp; "" stays "". Raises InvalidArgument naming `field`."""
    raw = text.strip().lower()
    if not raw:
        return ""
    now = now or datetime.now(UTC)
    if raw in ("today", "yesterday"):
        day: date = now.date() - timedelta(days=raw == "yesterday")
        return day.isoformat()
    ago = _AGO.match(raw)
    if ago:
        moment = now - int(ago["count"]) * _UNITS[ago["unit"]]
        return moment.strftime("%Y-%m-%dT%H:%M:%SZ")
    try:
        parse_instant(text, field)
    except InvalidArgument:
        raise InvalidArgument(field, f"{text[:40]!r} is not a date: use {FORMS}") from None
    return text.strip()
