"""The observer on the fifth set of real runs (real_runs_fifth.json), recorded and measured
before the readers changed for it (0.904, 7 unknown, 0 false claims): each class it showed
pinned on its real run, in every delivery with an exit code."""

from __future__ import annotations

from functools import partial

import pytest

from capture.drafts import ToolEvent
from capture.fixes import MemoryFailures, track
from capture.observer_shell import shell_verdict
from capture.outcome import judge
from tests.fixtures.observer.deliveries import RUN_SETS, load_sessions, tool_event
from tests.unit.capture.test_capture_real_runs import draft_of, outcomes_in, real_run

pytestmark = pytest.mark.unit
FIFTH = "real_runs_fifth.json"
PY = "python -m pytest -p no:cacheprovider"


outcomes = partial(outcomes_in, FIFTH)


def test_the_fifth_set_is_benchmarked():
    assert FIFTH in RUN_SETS


def test_pytests_collection_summary_is_its_outcome():
    assert outcomes(f"{PY} --co -q 2>&1 | tail -2", "succeeded") == {"succeeded"}  # "3 tests collected in 2.01s"
    assert judge("\n3 tests collected, 1 error in 4.28s\n", "succeeded", command="pytest --co 2>&1 | tail -2").failed
    assert judge("no tests collected in 0.01s\n", "succeeded", command="pytest --co | tail -1").failed  # exit 5


def test_doctest_is_a_test_runner_read_from_its_own_summary():
    assert outcomes("python -m doctest -v prices.py 2>&1 | tail -3", "succeeded") == {"succeeded"}  # "Test passed."
    assert outcomes("python -m doctest -v prices.py 2>&1 | tail -3", "failed") == {"failed"}
    draft = draft_of(real_run("python -m doctest prices.py", "failed", FIFTH))
    assert draft.title == "Tests failed: python -m doctest prices.py: prices.total"
    assert draft_of(real_run("python -m doctest -v prices.py 2>&1 | tail -3", "succeeded", FIFTH)).title.startswith(
        "Tests passed: python -m doctest -v prices.py")


def test_a_silent_tool_counted_by_wc_is_read_from_the_count():
    assert outcomes("npx tsc --noEmit | wc -l", "succeeded") == {"succeeded"}  # "0"
    assert outcomes("npx tsc --noEmit | wc -l", "failed") == {"failed"}  # "1": tsc prints only its errors
    # a line from eslint may be a warning, from `tsc --listFiles` a file name: no claim
    assert judge("3\n", "succeeded", command="npx eslint src | wc -l").outcome == "unknown"
    assert judge("12\n", "succeeded", command="npx tsc --listFiles | wc -l").outcome == "unknown"
    assert judge("sh: 1: tsc: not found\n0\n", "succeeded", command="tsc | wc -l").outcome != "succeeded"


def test_git_commit_with_only_untracked_files_is_a_refusal():
    command = "git commit -am 'nothing new' 2>&1 | tail -1"
    assert outcomes(command, "failed") == {"failed"}
    assert "nothing added to commit but untracked files present" in draft_of(real_run(command, "failed", FIFTH)).title


def test_a_monorepo_fixed_package_by_package_gets_one_fix_each_and_none_across():
    [session] = [s for s in load_sessions(FIFTH) if s["name"] == "mono-fifth"]
    store, fixed = MemoryFailures(), []
    for i, step in enumerate(session["steps"]):
        if step["kind"] == "edit":
            event = ToolEvent("Edit", {"file_path": step["file"], "old_string": step["old"],
                                       "new_string": step["new"]}, {"filePath": step["file"]}, "")
            track(store, event, None, {"row": i})
            continue
        event = tool_event(step, "claude", None, i)
        if track(store, event, shell_verdict(event), {"row": i}):
            fixed.append(step["command"].split(" && ")[0])
    # web failed, api was fixed (web's rerun still fails: no fix), then web was fixed
    assert fixed == ["cd packages/api", "cd packages/web"]
