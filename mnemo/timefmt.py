"""Time in one shape everywhere: epoch milliseconds inside, ISO-8601 UTC on the outside."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

from mnemo.errors import InvalidArgument


def now_ms() -> int:
    return int(time.time() * 1000)


def iso_from_ms(epoch_ms: int) -> str:
    """`2026-01-15T14:00:00.000Z`, the shape claude-mem stores."""
    moment = datetime.fromtimestamp(epoch_ms / 1000, tz=UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{epoch_ms % 1000:03d}Z"


def parse_instant(text: str, field: str, *, end_of_day: bool = False) -> int:
    """Epoch ms from an ISO date or timestamp (or a number of epoch ms).

    A bare date means its first millisecond, or its last when `end_of_day` (so an
    inclusive dateEnd of 2026-01-15 covers the whole day). Naive times are UTC.
    """
    raw = text.strip()
    if raw.isdigit():
        return int(raw)
    try:
        if len(raw) == 10:
            day = datetime.strptime(raw, "%Y-%m-%d").replace(tzinfo=UTC)
            if end_of_day:
                day += timedelta(days=1, milliseconds=-1)
            return int(day.timestamp() * 1000)
        moment = datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:
        raise InvalidArgument(field, f"expected an ISO-8601 date or timestamp, got {text[:40]!r}") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return int(moment.timestamp() * 1000)
