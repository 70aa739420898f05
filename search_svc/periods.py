"""Dates a query names, resolved to the records written then.

"What broke the deploy on 14 February, 2024?", "when did we fix the cache in March 2023?",
"the 2025-10-21 deploy": a question that names a day, a month or a year is usually about
records written then. `named_periods` finds those dates in the query text (plain words: no
user text becomes syntax) and `Period.contains` tells whether a record's timestamp falls in
one. search_svc (search_svc.retrieval) gives the candidates written in a named period a
fused bonus (search_svc.fusion.with_period_bonus). The query's words are searched as before;
a date never filters anything out.

A named day covers one day either side (records are stored in UTC while the person asking
thinks in local time, and "on May 7" is often said of the evening before or the morning
after). A month or day without a year ("the outage in June", "on October 2") means that month
or day in any year; a lone month name counts only when capitalised ("may" is a verb).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import lru_cache

_MONTH_NAMES = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
                "november", "december")
MONTHS = {name: number for number, name in enumerate(_MONTH_NAMES, start=1)}
_ABBREVIATIONS = {name[:3]: number for name, number in MONTHS.items()} | {"sept": 9}
_MONTH = r"(?P<{}>" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r"|" + \
    "|".join(sorted(_ABBREVIATIONS, key=len, reverse=True)) + r")\.?"
_DAY = r"(?P<{}>[0-3]?\d)(?:st|nd|rd|th)?"
_YEAR = r"(?P<{}>(?:19|20)\d\d)"
# One alternative per form; the first that matches at a position wins (longest forms first).
_FORMS = re.compile("|".join((
    r"\b" + _YEAR.format("iso_year") + r"-(?P<iso_month>[01]\d)-(?P<iso_day>[0-3]\d)\b",
    r"\b" + _DAY.format("dm_day") + r"\s+(?:of\s+)?" + _MONTH.format("dm_month") + r"(?:,?\s+" + _YEAR.format("dm_year")
    + r")?\b",
    r"\b" + _MONTH.format("md_month") + r"\s+" + _DAY.format("md_day") + r"(?!\d)(?:,?\s+" + _YEAR.format("md_year")
    + r")?\b",
    r"\b" + _MONTH.format("my_month") + r",?\s+" + _YEAR.format("my_year") + r"\b",
    r"\b" + _MONTH.format("m_month") + r"\b",
    r"\b" + _YEAR.format("y_year") + r"\b",
)), re.IGNORECASE)
DAY_SLACK = timedelta(days=1)
MAX_PERIODS = 8
"""A pasted log full of dates must not turn every record into a period match."""


@dataclass(frozen=True)
class Period:
    """A day, month or year a query names; 0 where a part was not named. Without a year it is
    that month (and day) of any year."""

    year: int = 0
    month: int = 0
    day: int = 0

    @property
    def anchored(self) -> bool:
        """Whether the period is one span of time (a year was named) rather than a month or day of any year."""
        return bool(self.year)

    def span_ms(self) -> tuple[int, int]:
        """[start, end) in epoch ms of an anchored period (a day with DAY_SLACK either side)."""
        return _span_ms(self.year, self.month, self.day)

    def contains(self, epoch_ms: int) -> bool:
        if self.anchored:
            start, end = self.span_ms()
            return start <= epoch_ms < end
        when = datetime.fromtimestamp(epoch_ms / 1000, tz=UTC)
        if not self.day:
            return when.month == self.month
        return any((when + shift).month == self.month and (when + shift).day == self.day
                   for shift in (-DAY_SLACK, timedelta(0), DAY_SLACK))


def named_periods(text: str) -> list[Period]:
    """The days, months and years `text` names, in order, without repeats (at most MAX_PERIODS)."""
    found: list[Period] = []
    for match in _FORMS.finditer(text):
        period = _period_of(match)
        if period is not None and period not in found:
            found.append(period)
            if len(found) == MAX_PERIODS:
                break
    return _with_shared_year(found)


def _with_shared_year(periods: list[Period]) -> list[Period]:
    """"between March 4 and March 9 2024": a day or month without a year takes the one year
    the query names elsewhere (when it names exactly one)."""
    years = {p.year for p in periods if p.year}
    if len(years) != 1:
        return periods
    year = years.pop()
    out: list[Period] = []
    for period in periods:
        named = period if period.year else _checked(year, period.month, period.day)
        if named is not None and named not in out:
            out.append(named)
    return out


def _period_of(match: re.Match[str]) -> Period | None:
    parts = {name: value for name, value in match.groupdict().items() if value}
    if "iso_year" in parts:
        return _checked(int(parts["iso_year"]), int(parts["iso_month"]), int(parts["iso_day"]))
    for form in ("dm", "md"):
        if f"{form}_day" in parts:
            year = int(parts[f"{form}_year"]) if f"{form}_year" in parts else 0
            return _checked(year, _month_number(parts[f"{form}_month"]), int(parts[f"{form}_day"]))
    if "my_month" in parts:
        return Period(int(parts["my_year"]), _month_number(parts["my_month"]))
    if "m_month" in parts:
        word = parts["m_month"]
        # A lone month name only when capitalised and written out ("may", "mar", "sept" are words).
        return Period(month=MONTHS[word.lower()]) if word[0].isupper() and word.lower() in MONTHS else None
    return Period(int(parts["y_year"]))


def _month_number(word: str) -> int:
    word = word.lower().rstrip(".")
    return MONTHS.get(word) or _ABBREVIATIONS[word]


def _checked(year: int, month: int, day: int) -> Period | None:
    """The period, or None when it is no date (month 13, 31 February)."""
    try:
        datetime(year or 2000, month, day or 1)  # 2000: a leap year, so 29 February stays a date
    except ValueError:
        return None
    return Period(year, month, day)


@lru_cache(maxsize=256)
def _span_ms(year: int, month: int, day: int) -> tuple[int, int]:
    """Period.span_ms, computed once per period rather than once per candidate it is checked against."""
    if day:
        start = datetime(year, month, day, tzinfo=UTC)
        return _ms(start - DAY_SLACK), _ms(start + timedelta(days=1) + DAY_SLACK)
    if month:
        next_month = datetime(year + month // 12, month % 12 + 1, 1, tzinfo=UTC)
        return _ms(datetime(year, month, 1, tzinfo=UTC)), _ms(next_month)
    return _ms(datetime(year, 1, 1, tzinfo=UTC)), _ms(datetime(year + 1, 1, 1, tzinfo=UTC))


def _ms(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)
