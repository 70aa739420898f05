"""bench/harness.py: the one percentile and table every benchmark prints with."""

from __future__ import annotations

import pytest

from bench.harness import p50, percentile, print_table

pytestmark = pytest.mark.unit


def test_percentile_is_nearest_rank_over_the_sorted_samples():
    samples = [5.0, 1.0, 4.0, 2.0, 3.0]
    assert (percentile(samples, 0.0), p50(samples), percentile(samples, 1.0)) == (1.0, 3.0, 5.0)
    assert percentile(list(range(1, 101)), 0.95) == 95
    assert percentile([], 0.5) == 0.0


def test_print_table_aligns_a_markdown_table(capsys):
    print_table(("figure", "ms"), [("search p50", 12.5), ("x", "1")])
    lines = capsys.readouterr().out.splitlines()
    assert lines == ["| figure     | ms   |", "| ---------- | ---- |", "| search p50 | 12.5 |", "| x          | 1    |"]
