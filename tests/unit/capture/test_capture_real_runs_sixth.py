"""The observer on the sixth set of real runs (real_runs_sixth.json), recorded and measured
before the readers changed for it (0.786, 6 unknown, 0 false claims, 1 false "Fixed")."""

from __future__ import annotations

import pytest

from capture.drafts import ToolEvent
from capture.fixes import MemoryFailures, failure_keys, is_change, track
from capture.observer_shell import shell_verdict
from tests.fixtures.observer.deliveries import DELIVERIES, RUN_SETS, load_sessions, tool_event, true_fixes
from tests.unit.capture.test_capture_real_runs import real_run

pytestmark = pytest.mark.unit
SIXTH = "real_runs_sixth.json"


def test_the_sixth_set_is_benchmarked():
    assert SIXTH in RUN_SETS


def test_a_pipe_or_redirection_inside_quotes_is_part_of_the_command():
    failed = real_run("jq -e '.a | length > 5' good.json", "failed", SIXTH)
    passed = real_run("jq -e '.a | length > 1' good.json", "succeeded", SIXTH)
    as_events = [tool_event(run, "claude") for run in (failed, passed)]
    keys = [failure_keys(event) for event in as_events]
    assert keys[0] != keys[1] and keys[0][0].endswith("jq -e '.a | length > 5' good.json")
    assert not is_change(as_events[1])  # the `>` is jq's comparison, no file written
    store = MemoryFailures()
    assert [track(store, e, shell_verdict(e), {"row": n}) for n, e in enumerate(as_events)] == [None, None]
    assert not true_fixes([dict(failed, kind="run"), dict(passed, kind="run")])
    edit = ToolEvent("Bash", {"command": "echo ok > out.txt | cat"}, {"stdout": ""}, "/r")
    assert is_change(edit) and failure_keys(edit) == ["cmd:/r\0echo ok"]


def test_mochas_tap_reporter_is_its_own_summary():
    run = real_run("npx mocha spec --reporter tap 2>&1 | tail -3", "failed", SIXTH)  # "# pass 1 / # fail 1 / 1..2"
    assert {shell_verdict(tool_event(run, d)).outcome for d in DELIVERIES} == {"failed"}


def test_no_false_fix_in_the_sixth_set():
    for session in load_sessions(SIXTH):
        store, claimed = MemoryFailures(), set()
        for i, step in enumerate(session["steps"]):
            if step["kind"] == "edit":
                track(store, ToolEvent("Edit", {"file_path": step["file"]}, {}, ""), None, {"row": i})
                continue
            event = tool_event(step, "claude", None, i)
            if track(store, event, shell_verdict(event), {"row": i}):
                claimed.add(i)
        assert claimed == true_fixes(session["steps"]), session["name"]


def test_the_programs_of_a_command_are_split_outside_quotes_only():
    from capture.commands import command_kind, programs

    assert programs('cd x && python -c "import pytest; pytest.main()" | tail -2; echo done') == [
        'python -c "import pytest; pytest.main()"', "echo done"]
    assert programs("jq -e '.a | length > 5' good.json && VAR=1 npx jest | tail") == [
        "jq -e '.a | length > 5' good.json", "jest"]
    assert command_kind("git commit -m 'fix: a; pytest' && ls") == "vcs"


def test_jq_e_giving_false_is_a_condition_checked_not_a_problem_to_fix():
    run = real_run("jq -e '.a | length > 5' good.json", "failed", SIXTH)  # exit 1, "false"
    for delivery in DELIVERIES:
        verdict = shell_verdict(tool_event(run, delivery))
        assert verdict.failed and verdict.note == "The filter gave false or null"
    from capture.observer import observe

    [draft] = observe(tool_event(run, "claude"))
    assert draft.type == "discovery" and draft.title.endswith("(The filter gave false or null)")
    from capture.outcome import judge

    assert not judge("jq: error: syntax error\n", "failed", 3, command="jq -e '.a[' f.json").note  # its own error
