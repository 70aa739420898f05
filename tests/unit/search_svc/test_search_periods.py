"""Dates a query names (search_svc.periods) and the bonus fusion gives records written then."""

from datetime import UTC, datetime

import pytest

from search_svc.fusion import FusionParams, fuse, with_period_bonus
from search_svc.periods import MAX_PERIODS, Period, named_periods

pytestmark = pytest.mark.unit


def ms(*parts: int) -> int:
    return int(datetime(*parts, tzinfo=UTC).timestamp() * 1000)


@pytest.mark.parametrize(("text", "expected"), [
    ("What broke the deploy on 14 February, 2024?", [Period(2024, 2, 14)]),
    ("which tests failed on May 7, 2025", [Period(2025, 5, 7)]),
    ("on the 3rd of Sept. 2021", [Period(2021, 9, 3)]),
    ("the 2025-10-21 deploy", [Period(2025, 10, 21)]),
    ("what changed in March 2023?", [Period(2023, 3)]),
    ("the release of 2022", [Period(2022)]),
    ("the flaky build in June", [Period(month=6)]),
    ("the outage on October 2", [Period(month=10, day=2)]),
    ("between March 4 and March 9 2024", [Period(2024, 3, 4), Period(2024, 3, 9)]),
])
def test_days_months_and_years_are_read_from_plain_words(text, expected):
    assert named_periods(text) == expected


@pytest.mark.parametrize("text", [
    "may I ask about the cache",  # "may" is a verb unless capitalised
    "fix the mar parser",
    "timeout on 31 Feb 2023",  # no such day
    "the 2023-13-01 build",
    "nothing dated here",
])
def test_words_that_only_look_like_dates_name_no_period(text):
    assert named_periods(text) == []


def test_a_pasted_log_full_of_dates_names_at_most_a_few_periods():
    text = " ".join(f"2023-01-{day:02d}" for day in range(1, 29))
    assert len(named_periods(text)) == MAX_PERIODS


def test_a_named_day_covers_one_day_either_side():
    period = Period(2024, 2, 14)
    assert period.span_ms() == (ms(2024, 2, 13), ms(2024, 2, 16))
    assert period.contains(ms(2024, 2, 13, 8)) and period.contains(ms(2024, 2, 15, 23))
    assert not period.contains(ms(2024, 2, 16)) and not period.contains(ms(2024, 2, 12, 23))


def test_a_month_or_day_without_a_year_matches_it_in_any_year():
    assert Period(month=6).contains(ms(2019, 6, 30)) and not Period(month=6).contains(ms(2019, 7, 1))
    assert Period(month=10, day=2).contains(ms(2021, 10, 3, 12))
    assert not Period(month=10, day=2).contains(ms(2021, 10, 5))


def test_december_ends_at_the_new_year():
    assert Period(2023, 12).span_ms() == (ms(2023, 12, 1), ms(2024, 1, 1))


def test_candidates_written_in_a_named_period_gain_the_bonus():
    fused = fuse([("old", 3.0), ("dated", 1.0)], [], FusionParams(method="zscore"), lexical_depth=10)
    placement = {"old": ("p", ms(2024, 1, 5)), "dated": ("p", ms(2024, 2, 14, 9))}
    ranked = with_period_bonus(fused, placement, named_periods("on 14 February, 2024"),
                               FusionParams(period_bonus=4.0))
    assert [f.key for f in ranked] == ["dated", "old"]
    assert ranked[0].score == pytest.approx(next(f.score for f in fused if f.key == "dated") + 4.0)


def test_no_named_period_or_no_bonus_leaves_the_ranking_alone():
    fused = fuse([("a", 3.0), ("b", 1.0)], [], FusionParams(method="zscore"))
    placement = {"a": ("p", ms(2024, 1, 5)), "b": ("p", ms(2024, 2, 14))}
    assert with_period_bonus(fused, placement, [], FusionParams(period_bonus=4.0)) == fused
    assert with_period_bonus(fused, placement, [Period(2024, 2, 14)], FusionParams(period_bonus=0.0)) == fused
