"""A build tool behind a short tail (real_runs_pipes.json): its silence is its success, any
line it left is not. gcc ends an error with its caret line or a note, ruff with "[*] N
fixable"; before, both were taken for a clean end and stored as successes."""

from __future__ import annotations

import pytest

from capture.observer_shell import shell_verdict
from tests.fixtures.observer.deliveries import DELIVERIES, RUN_SETS, tool_event
from tests.unit.capture.test_capture_real_runs import real_run

pytestmark = pytest.mark.unit
PIPES = "real_runs_pipes.json"


def outcomes(command: str, truth: str) -> set[str]:
    run = real_run(command, truth, PIPES)
    return {shell_verdict(tool_event(run, delivery)).outcome for delivery in DELIVERIES}


def test_the_pipes_set_is_benchmarked():
    assert PIPES in RUN_SETS


@pytest.mark.parametrize(
    ("command", "truth", "said"),
    [
        ("gcc -Wall -o bad bad.c 2>&1 | tail -1", "failed", "unknown"),  # a note: no claim
        ("gcc -Wall -o bad bad.c 2>&1 | tail -2", "failed", "unknown"),  # a caret line and a note
        ("gcc -Wall -o warn warn.c 2>&1 | tail -1", "succeeded", "unknown"),  # a warning's caret line
        ("gcc -Wall -o ok ok.c 2>&1 | tail -1", "succeeded", "succeeded"),  # nothing printed
        ("ruff check bad.py 2>&1 | tail -1", "failed", "failed"),  # "[*] 2 fixable with `--fix`."
        ("ruff check good.py 2>&1 | tail -1", "succeeded", "succeeded"),  # "All checks passed!"
        ("javac Bad.java 2>&1 | tail -1", "failed", "failed"),  # "1 error"
    ],
)
def test_a_build_tool_behind_a_short_tail_passed_only_if_it_printed_nothing_or_its_success(command, truth, said):
    assert outcomes(command, truth) == {said}
