"""Long failing outputs as the real Claude Code CLI delivers them (real_runs_large.json):
past 10,000 characters its `error` keeps the first and last 5,000 of the output's first
30,000, and no file keeps the rest. What arrives is read; what did not is not claimed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from capture.persisted import host_cut
from tests.fixtures.observer.deliveries import RUN_SETS, claude_payload
from tests.unit.capture.test_capture_real_runs import draft_of, real_run

pytestmark = pytest.mark.unit
LARGE = "real_runs_large.json"
PY_V = "python -m pytest -v -p no:cacheprovider"


def test_the_large_set_is_benchmarked():
    assert LARGE in RUN_SETS


def test_a_failure_under_30000_characters_is_read_from_the_tail_the_host_kept():
    run = real_run(f"{PY_V} tests/test_wide.py", run_set=LARGE)
    assert 10_000 < len(run["output"]) < 30_000
    error = claude_payload(run)["error"]
    assert "characters truncated]" in error and "3 failed, 297 passed" in error[-5_000:]
    draft = draft_of(run)
    assert "3 failed, 297 passed" in draft.facts
    assert [f for f in draft.facts if f.startswith("Failing test:")] == [
        f"Failing test: tests/test_wide.py::test_value[{n}]" for n in (5, 150, 295)
    ]
    assert any(f.startswith("The host left out ") and "middle" in f for f in draft.facts)


@pytest.mark.parametrize(
    ("command", "arrived", "lost"),
    [
        (f"{PY_V} tests/test_huge.py", "tests/test_huge.py::test_value[10]", "test_value[690]"),
        ("python -m unittest -v tests.test_units", "tests.test_units.Units.test_unit_007", "test_unit_880"),
    ],
)
def test_a_failure_over_30000_characters_names_what_arrived_and_says_the_end_did_not(command, arrived, lost):
    run = real_run(command, run_set=LARGE)
    assert len(run["output"]) > 30_000 and lost in run["output"][30_000:]
    error = claude_payload(run)["error"]
    assert arrived in error and lost not in error  # what the real CLI sends: the end is gone
    draft = draft_of(run)
    assert "Outcome: failed" in draft.facts and f"Failing test: {arrived}" in draft.facts
    assert lost not in draft.title and not any("passed" in f for f in draft.facts)  # no count it did not see
    assert any("its end (a summary, the failing names) did not arrive" in f for f in draft.facts)
    assert "Output (the end of what the host kept):" in draft.narrative


def test_a_piped_large_failure_is_read_from_the_persisted_output(tmp_path):
    run = real_run(f"{PY_V} tests/test_huge.py 2>&1 | tail -400", run_set=LARGE)
    assert run["exit_code"] == 0 and len(run["output"]) > 30_000
    draft = draft_of(run, "claude", tmp_path)
    assert "2 failed, 698 passed" in draft.facts and "Failing test: tests/test_huge.py::test_value[690]" in draft.facts


def test_the_cut_is_told_from_the_real_clis_own_payload():
    recorded = json.loads((Path(__file__).parents[2] / "fixtures/observer/claude_payloads.json").read_text())
    [large_failure] = [p for p in recorded["payloads"] if "range(4000)" in p["tool_input"]["command"]]
    assert "did not arrive" in host_cut(large_failure["error"])
    assert host_cut("Exit code 1\nshort output") == "" and host_cut("") == ""
