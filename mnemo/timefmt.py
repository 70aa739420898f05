"""Time in one shape everywhere: epoch milliseconds inside, ISO-8601 UTC on the outside."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

from mnemo.errors import InvalidArgument

# The instants an epoch-ms field may hold: 1970-01-01T00:00:00.000Z to 9999-12-31T23:59:59.999Z,
# the years an ISO-8601 date (and Python's datetime) can write. Bounded where a value enters, so
# no stored time fails to render later (an INTERNAL "year out of range").
MIN_EPOCH_MS = 0
MAX_EPOCH_MS = 253402300799999
EPOCH_RANGE_TEXT = f"{MIN_EPOCH_MS}..{MAX_EPOCH_MS} (epoch ms, 1970-01-01 to 9999-12-31 UTC)"


def check_epoch(field: str, epoch_ms: int) -> int:
    """`epoch_ms`, or InvalidArgument naming `field` and the allowed range."""
    if not MIN_EPOCH_MS <= epoch_ms <= MAX_EPOCH_MS:
        raise InvalidArgument(field, f"must be within {EPOCH_RANGE_TEXT}, got {epoch_ms}")
    return epoch_ms


def now_ms() -> int:
    return int(time.time() * 1000)


def iso_from_ms(epoch_ms: int, field: str = "epoch") -> str:
    """`2026-01-15T14:00:00.000Z`, the shape claude-mem stores."""
    check_epoch(field, epoch_ms)
    moment = datetime.fromtimestamp(epoch_ms / 1000, tz=UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{epoch_ms % 1000:03d}Z"


def parse_instant(text: str, field: str, *, end_of_day: bool = False) -> int:
    """Epoch ms from an ISO date or timestamp (or a number of epoch ms).

    A bare date means its first millisecond, or its last when `end_of_day` (so an
    inclusive dateEnd of 2026-01-15 covers the whole day). Naive times are UTC.
    """
    raw = text.strip()
    if raw.isdigit():
        return check_epoch(field, int(raw))
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
    try:
        return check_epoch(field, int(moment.timestamp() * 1000))
    except OverflowError:  # 9999-12-31T23:59:59-01:00 lies past what datetime can hold
        raise InvalidArgument(field, f"must be within {EPOCH_RANGE_TEXT}, got {text[:40]!r}") from None
