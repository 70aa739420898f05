"""The observer tells the truth about how runs ended: scored on the labelled fixtures of
tests/fixtures/observer (the same set bench/observer.py reports on)."""

from __future__ import annotations

import pytest

from capture.drafts import FAILURE_EVENT, ToolEvent
from capture.observer import observe
from capture.outcome import first_error_line, judge
from tests.fixtures.observer import load_events

pytestmark = pytest.mark.unit

EVENTS = load_events()


def as_tool_event(event: dict) -> ToolEvent:
    payload = event["payload"]
    kind = payload["hook_event_name"]
    response = ({"error": payload["error"], "is_interrupt": payload["is_interrupt"]} if kind == FAILURE_EVENT
                else payload["tool_response"])
    return ToolEvent(payload["tool_name"], payload["tool_input"], response, payload["cwd"], kind, event["platform"])


def stated(draft) -> str:
    outcome = [f.removeprefix("Outcome: ") for f in draft.facts if f.startswith("Outcome: ")]
    return outcome[0] if outcome else ("failed" if draft.type == "bugfix" else "unknown")


def test_the_fixture_set_is_large_and_covers_both_outcomes():
    labels = [e["label"]["outcome"] for e in EVENTS]
    assert len(EVENTS) >= 150
    assert labels.count("failed") >= 50 and labels.count("succeeded") >= 40 and labels.count("unknown") >= 5


@pytest.mark.parametrize("event", EVENTS, ids=[e["id"] for e in EVENTS])
def test_no_observation_claims_a_failed_run_succeeded(event):
    [draft] = observe(as_tool_event(event))
    text = "\n".join([draft.title, draft.subtitle, draft.narrative, *draft.facts])
    if event["label"]["outcome"] != "succeeded":
        assert stated(draft) != "succeeded"
        assert "passed:" not in draft.title.lower() and "It succeeded" not in text
    for name in event["label"]["failing"]:
        assert name in "\n".join([draft.title, *draft.facts])


def test_outcome_accuracy_meets_the_target():
    right = sum(stated(observe(as_tool_event(e))[0]) == e["label"]["outcome"] for e in EVENTS)
    assert right / len(EVENTS) >= 0.97


def test_the_reported_pytest_q_failure_is_a_failure_with_its_test_and_error():
    output = ("F..\nE       assert -1 == 5\nFAILED tests/test_calc.py::test_add - assert -1 == 5\n"
              "1 failed, 2 passed in 0.63s\n")
    [piped] = observe(ToolEvent("Bash", {"command": "pytest -q tests | tail -5"}, {"stdout": output, "stderr": ""},
                                "/r"))
    [failure] = observe(ToolEvent("Bash", {"command": "pytest -q tests"},
                                  {"error": f"Exit code 1\n{output}", "is_interrupt": False}, "/r", FAILURE_EVENT))
    for draft in (piped, failure):
        assert draft.type == "bugfix" and draft.title == "Tests failed: pytest -q tests: test_add"
        assert "Failing test: tests/test_calc.py::test_add" in draft.facts
        assert "First error: E assert -1 == 5" in draft.facts
        assert "It failed" in draft.narrative


def test_an_unrecognised_output_from_a_host_without_outcome_claims_nothing():
    verdict = judge("synced 14 files\n", "unknown")
    assert verdict.outcome == "unknown" and not verdict.error_line
    [draft] = observe(ToolEvent("Bash", {"command": "./sync.sh"}, "synced 14 files\n", "/r", platform="other"))
    assert "Outcome: unknown" in draft.facts and "succeeded" not in draft.narrative.replace("whether it succeeded", "")


def test_an_explicit_exit_code_wins_over_a_passing_summary():
    assert judge("5 passed in 0.1s\n", "unknown", exit_code=1).outcome == "failed"
    assert judge("5 passed in 0.1s\n", "unknown", exit_code=0).outcome == "succeeded"


def test_a_failed_edit_is_a_bugfix_candidate_naming_the_file_and_the_error():
    [draft] = observe(ToolEvent("Edit", {"file_path": "/r/src/a.py", "old_string": "x = 1", "new_string": "x = 2"},
                                {"error": "<tool_use_error>String to replace not found in file.</tool_use_error>"},
                                "/r", FAILURE_EVENT))
    assert draft.type == "bugfix" and draft.title.startswith("Edit src/a.py failed: String to replace not found")
    assert "First error: String to replace not found in file." in draft.facts


def test_the_first_error_line_skips_npm_noise():
    npm_output = "npm error code E404\nnpm error 404 Not Found - GET x\n"
    assert first_error_line(npm_output) == "npm error 404 Not Found - GET x"


@pytest.mark.parametrize(
    ("command", "text"),
    [
        ("pytest -v 2>&1 | grep -c PASSED", "9"),  # a count of passes says nothing of failures
        ("pytest 2>&1 | grep -c FAILED", "0"),  # nothing counted: grep exited 1, pytest may still have failed
        ("pytest 2>&1 | grep -ci failed", "3"),  # case-blind: a test named after failures counts too
        ("npx mocha --reporter dot 2>&1 | head -3", "\n  ....\n"),  # dots alone are passes
        ("npx mocha 2>&1 | head -3", "\n  !\n"),  # "!" marks a failure in the dot reporter only
        ("gcc -o w w.c 2>&1 | tail -1", "      |         ^~~~~~"),  # a caret line: a warning's or an error's
        ("eslint src 2>&1 | tail -1", ""),  # eslint's failure ends with a blank line
    ],
)
def test_what_a_pipe_leaves_claims_nothing_it_cannot_tell(command, text):
    assert judge(text, "succeeded", command=command).outcome == "unknown"
