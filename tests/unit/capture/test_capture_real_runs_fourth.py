"""The observer on the fourth set of real runs (real_runs_fourth.json), recorded before the
readers changed for it: each class it showed pinned on its real run, in every delivery."""

from __future__ import annotations

from functools import partial

import pytest

from capture.summary import summarize
from tests.fixtures.observer.deliveries import RUN_SETS, all_runs, load_sessions, tool_event
from tests.unit.capture.test_capture_real_runs import draft_of, outcomes_in, real_run

pytestmark = pytest.mark.unit
FOURTH = RUN_SETS[3]


outcomes = partial(outcomes_in, FOURTH)


@pytest.mark.parametrize(
    "command",
    [
        "jq .name bad.json 2>&1 | tail -1",  # jq's own parse error, not the data it prints
        "git show nothere 2>&1 | tail -1",  # the end of git's "ambiguous argument"
        "git cherry-pick side 2>&1 | tail -3",  # only the hints of a stopped cherry-pick are left
    ],
)
def test_what_a_tail_leaves_of_a_reader_or_git_error_is_a_failure(command):
    assert outcomes(command, "failed") == {"failed"}


def test_a_git_change_behind_a_tail_needs_its_own_summary_to_be_called_a_success():
    assert outcomes("git revert --no-edit HEAD | tail -1", "succeeded") == {"succeeded"}  # its diffstat
    # "    git push <name>" ends only git's "No configured push destination" advice
    assert outcomes("git push 2>&1 | tail -2", "failed") == {"failed"}
    assert draft_of(real_run("git push 2>&1 | tail -2", "failed", FOURTH)).title.endswith(
        "git push: no configured push destination")


def test_a_runners_failures_counted_by_grep_or_marked_by_the_dot_reporter_are_a_failure():
    counted = "python -m pytest -p no:cacheprovider -q tests/test_many.py 2>&1 | grep -c FAILED"
    assert outcomes(counted, "failed") == {"failed"}  # "9"
    assert draft_of(real_run(counted, "failed", FOURTH)).title.endswith("9 lines with FAILED")
    assert outcomes("npx mocha spec --reporter dot 2>&1 | head -4", "failed") == {"failed"}  # "!."



def test_a_dotted_python_exception_at_the_end_is_a_failure_and_the_reason():
    draft = draft_of(real_run("python loader.py 2>&1 | tail -2", "failed", FOURTH))
    assert "Outcome: failed" in draft.facts
    assert "json.decoder.JSONDecodeError: Expecting property name" in draft.title


def test_what_a_pipe_leaves_of_a_test_runners_report_is_read():
    assert outcomes("python -m unittest tests.test_ok 2>&1 | tail -1", "succeeded") == {"succeeded"}  # "OK"
    assert outcomes("npx mocha spec 2>&1 | tail -6", "failed") == {"failed"}  # a frame in the spec file
    head = draft_of(real_run("python -m pytest -p no:cacheprovider -q tests/test_many.py | head -3", "failed", FOURTH))
    assert "Outcome: failed" in head.facts and "Failing test: test_even[3]" in head.facts


def test_a_formatter_or_linter_with_nothing_to_say_behind_a_tail_passed():
    assert outcomes("cargo fmt --check 2>&1 | tail -3", "succeeded") == {"succeeded"}
    # npm's header of the script ("> lint", "> eslint src") is the output's end: eslint said nothing
    assert outcomes("npm run lint 2>&1 | tail -4", "succeeded") == {"succeeded"}
    assert outcomes("npm run lint 2>&1 | tail -4", "failed") == {"failed"}


@pytest.mark.parametrize(
    ("command", "truth", "run_set"),
    [
        ("false | tail -1", "failed", RUN_SETS[2]),
        ("timeout 1 sleep 3 | cat", "failed", FOURTH),
        ("python loader.py | tail -1", "succeeded", FOURTH),
        ("sh ok.sh | tail -1", "succeeded", FOURTH),
    ],
)
def test_a_pipe_whose_output_holds_no_evidence_stays_unknown_and_claims_nothing(command, truth, run_set):
    draft = draft_of(real_run(command, truth, run_set))
    assert "Outcome: unknown" in draft.facts and draft.type != "bugfix"
    assert not draft.title.startswith(("Tests passed", "Command failed", "Fixed"))
    assert "does not say whether it succeeded" in draft.narrative


def failed_run(command: str) -> dict:
    return next(r for s in RUN_SETS for r in all_runs(s) if r["command"] == command and r["truth"] == "failed")


@pytest.mark.parametrize(
    ("command", "why"),
    [
        ("sh exit3.sh 2>&1 | tail -1", "host db1 unreachable"),
        ("perl boom.pl 2>&1 | tail -1", "config key 'port' missing"),
        ("sqlite3 app.db 'select * from users' 2>&1 | tail -1", "no such table: users"),
        ("npm run lint 2>&1 | tail -4", "✖ 2 problems (2 errors, 0 warnings)"),
        ("git commit -m 'no add'", "no changes added to commit"),
        ("git push 2>&1 | tail -3", "push rejected"),
        ("docker run --rm hello-world", "docker: Cannot connect to the Docker daemon"),
        ("python -m json.tool bad.json", "Expecting property name enclosed in double quotes"),
        ("npx vitest run --dir nowhere", "No test files found"),
        # nothing in the output says why: the exit code, not a line that only happened to be last
        ("sh run.sh", "exit code 1"),
        ("make && ./prog", "exit code 2"),
    ],
)
def test_titles_say_why_from_the_output_or_else_give_the_exit_code(command, why):
    draft = draft_of(failed_run(command))
    assert draft.title.startswith(("Command failed: ", "Tests failed: ")) and why in draft.title, draft.title


def test_a_command_that_failed_and_then_ran_with_no_outcome_is_a_next_step_to_check():
    [session] = [s for s in load_sessions(RUN_SETS[1]) if s["name"] == "c-more"]
    events = [tool_event(step, "claude", None, i) for i, step in enumerate(session["steps"]) if step["kind"] == "run"]
    summary = summarize([], events, [])
    # `sh run.sh` failed, then `sh run.sh 2>&1 | tail -5` printed only "step one"
    assert "Check whether `sh run.sh` passes now: it failed before, and its last run does not say" in summary.next_steps
    assert "Fix the failing `sh run.sh`" not in summary.next_steps and "`sh run.sh`" not in summary.completed
    assert "Fix the failing `javac Sym.java` (1 error)\n" in summary.next_steps + "\n"  # the reason once


def test_a_command_that_timeout_stopped_is_titled_as_timed_out():
    draft = draft_of(real_run("timeout 1 sleep 3", "failed", RUN_SETS[2]))  # exit 124, no output
    assert draft.type == "bugfix" and draft.title.endswith("timeout 1 sleep 3: timed out (exit code 124)")
    assert draft_of(real_run("bash -c 'exit 4'", "failed", RUN_SETS[2])).title.endswith(": exit code 4")
