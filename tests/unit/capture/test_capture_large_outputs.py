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


def test_the_persisted_output_is_read_tail_first_capped_and_without_a_private_region_cut_in_two(tmp_path):
    from capture.persisted import PERSISTED_TAIL, TAIL_MAX_CHARS, with_persisted_output

    saved = tmp_path / "tool-results" / "run.txt"
    saved.parent.mkdir()
    # a private region opened long before the tail the hook reads, and closed inside it
    saved.write_text("head\n<private>\n" + "hidden line\n" * 20_000 + "SECRET-IN-TAIL</private>\n"
                     + "row\n" * 100 + "1 failed, 459 passed in 3.2s\n", encoding="utf-8")
    response = with_persisted_output({"stdout": "head", "persistedOutputPath": str(saved)}, tmp_path)
    tail = response[PERSISTED_TAIL]
    assert tail.endswith("1 failed, 459 passed in 3.2s") and len(tail) <= TAIL_MAX_CHARS
    assert "SECRET-IN-TAIL" not in tail and "hidden line" not in tail and "private>" not in tail
    # only a file in the transcript's tool-results folder is read: the path is host input
    elsewhere = tmp_path / "other.txt"
    elsewhere.write_text("1 failed")
    assert PERSISTED_TAIL not in with_persisted_output({"stdout": "", "persistedOutputPath": str(elsewhere)}, tmp_path)


def test_a_failures_tail_after_the_hosts_cut_keeps_no_private_text_whose_opening_tag_was_cut():
    from capture.persisted import error_cut_safely
    from mnemo.privacy import clean

    cut = "\n\n... [20000 characters truncated] ...\n\n"
    for head in ("Exit code 1\nstart <private>\n" + "x" * 4_980,  # opened before the cut
                 "Exit code 1\nstart\n" + "y" * 4_980):  # opened inside the part the host cut out
        kept = clean(error_cut_safely(head + cut + "SECRET-AFTER-CUT</private>\nE   AssertionError\n1 failed in 0.2s"))
        assert "SECRET-AFTER-CUT" not in kept and "xxx" not in kept and kept.endswith("1 failed in 0.2s"), kept[-200:]
        assert kept.startswith("Exit code 1\nstart")
    plain = "Exit code 1\nfine\n\n... [20000 characters truncated] ...\n\nstill fine </div>"
    assert error_cut_safely(plain) == plain
