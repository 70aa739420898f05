"""The observer on REAL tool output (tests/fixtures/observer/real_runs*.json, recorded by
generate.py), delivered as the real Claude Code CLI, "Exit code N" text and Codex's exec
text deliver it: no false claim, and each class of issue 34 pinned on its real run."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from capture.commands import exit_hidden
from capture.drafts import Draft, ToolEvent
from capture.fixes import MemoryFailures, track
from capture.observer import observe
from capture.observer_shell import shell_verdict
from capture.persisted import PERSISTED_TAIL, fit_response, with_persisted_output
from capture.summary import summarize
from tests.fixtures.observer.deliveries import (
    DELIVERIES,
    RUN_SETS,
    all_runs,
    claude_payload,
    load_sessions,
    tool_event,
)

pytestmark = pytest.mark.unit


def real_run(command: str, truth: str = "failed", run_set: str = RUN_SETS[0]) -> dict[str, Any]:
    return next(r for r in all_runs(run_set) if r["command"] == command and r["truth"] == truth)


def outcomes_in(run_set: str, command: str, truth: str) -> set[str]:
    """What the shell reader says of one real run in every delivery with an exit code."""
    run = real_run(command, truth, run_set)
    return {shell_verdict(tool_event(run, delivery)).outcome for delivery in DELIVERIES}


def draft_of(run: dict[str, Any], delivery: str = "claude", persist: Path | None = None) -> Draft:
    [draft] = observe(tool_event(run, delivery, persist))
    return draft


def text_of(draft: Draft) -> str:
    return "\n".join([draft.title, draft.subtitle, draft.narrative, *draft.facts])


def judged(delivery: str) -> Iterator[tuple[dict[str, Any], str]]:
    with tempfile.TemporaryDirectory() as tmp:
        for run_set in RUN_SETS:
            for n, run in enumerate(all_runs(run_set)):
                yield run, shell_verdict(tool_event(run, delivery, Path(tmp), n)).outcome


@pytest.mark.parametrize("delivery", DELIVERIES)
def test_no_delivery_claims_the_opposite_of_what_really_happened(delivery):
    wrong = [(run["command"], run["truth"], said) for run, said in judged(delivery)
             if said != "unknown" and said != run["truth"]]
    assert wrong == []


@pytest.mark.parametrize("delivery", DELIVERIES)
def test_outcome_accuracy_on_the_first_set_meets_the_target(delivery):
    outcomes = [(run, said) for run, said in judged(delivery) if run["cwd"].rsplit("/", 1)[-1] in FIRST_SET]
    assert sum(said == run["truth"] for run, said in outcomes) / len(outcomes) >= 0.99


FIRST_SET = {r["cwd"].rsplit("/", 1)[-1] for r in all_runs(RUN_SETS[0])}


def test_a_pipe_hiding_a_rust_panic_is_a_failure():
    draft = draft_of(real_run("cargo run 2>&1 | tail -5"))
    assert draft.type == "bugfix" and "Outcome: failed" in draft.facts and "panicked" in draft.title


def test_pytest_selecting_no_test_is_a_failure_even_behind_a_pipe():
    for command in ("python -m pytest -q -p no:cacheprovider -k nothing_matches",
                    "python -m pytest -q -p no:cacheprovider -k nothing_matches 2>&1 | tail -5"):
        draft = draft_of(real_run(command))
        assert "Outcome: failed" in draft.facts and "463 deselected" in draft.title


def test_eslint_over_max_warnings_is_a_failure_behind_a_pipe():
    draft = draft_of(real_run("npx eslint warn --max-warnings 0 2>&1 | tail -5"))
    assert "Outcome: failed" in draft.facts and "too many warnings" in draft.title


def test_reading_a_log_with_a_traceback_is_no_failure():
    for command in ("cat logs/app.log", "tail -4 logs/app.log"):
        run = real_run(command, "succeeded")
        assert "Traceback" in run["output"] or "TimeoutError" in run["output"]
        for delivery in DELIVERIES:
            draft = draft_of(run, delivery)
            assert draft.type == "discovery" and "Outcome: succeeded" in draft.facts, delivery


def test_node_test_names_its_failing_tests():
    draft = draft_of(real_run("node --test test/"))
    assert draft.title == "Tests failed: node --test test/: slug lowercases, slug trims"


def test_pytest_ids_with_spaces_and_nested_mocha_describes_are_named():
    assert "Failing test: tests/test_add.py::test_add[two and three]" in draft_of(
        real_run("python -m pytest -v -p no:cacheprovider tests")).facts
    assert "Failing test: parse numbers reads a negative number" in draft_of(real_run("npx mocha")).facts


def test_cargo_failures_list_is_read_after_tail():
    assert "Failing test: tests::parses_spaces" in draft_of(real_run("cargo test 2>&1 | tail -15")).facts


def test_colour_codes_are_stripped():
    for command in ("npx tsc --pretty", "npx vitest run 2>&1 | tail -15"):
        draft = draft_of(real_run(command))
        assert "\x1b" in real_run(command)["output"] and "\x1b" not in text_of(draft)
        assert "Outcome: failed" in draft.facts


@pytest.mark.parametrize(("command", "why"), [
    ("git commit -m 'nothing here'", "nothing to commit, working tree clean"),
    ("git pull", "There is no tracking information for the current branch."),
    ("java Boom 2>&1 | tail -5", "java.lang.NullPointerException: Cannot invoke"),
    ("python configure.py", "config missing: settings.toml not found"),
    ("python app.py", "KeyError: 'host'"),
    ("ruff check src", "Found 2 errors."),
    ("npx eslint lint", "✖ 2 problems (1 error, 1 warning)"),
    ("make", "error: expected"),
    ("docker ps", "Cannot connect to the Docker daemon"),
    ("git merge feature", "merge conflict in notes.txt"),
])
def test_titles_say_what_failed_and_why(command, why):
    draft = draft_of(real_run(command))
    assert draft.title.startswith("Command failed: ") and why in draft.title


def test_codex_exec_text_is_read_like_claude_codes():
    run = real_run("python -m pytest -q -p no:cacheprovider tests/test_add.py")
    codex = shell_verdict(tool_event(run, "codex text"))
    assert (codex.outcome, codex.exit_code) == ("failed", 1)
    assert codex.failing == ("tests/test_add.py::test_add[two and three]",)


def test_the_persisted_output_gives_the_summary_the_head_lost(tmp_path):
    run = real_run("python -m pytest -v -p no:cacheprovider slow 2>&1 | tee test.log")
    payload = claude_payload(run, tmp_path)
    assert "persistedOutputPath" in payload["tool_response"] and "1 failed" not in payload["tool_response"]["stdout"]
    draft = draft_of(run, "claude", tmp_path)
    assert "Outcome: failed" in draft.facts and "Failing test: slow/test_many.py::test_many[457]" in draft.facts
    assert shell_verdict(tool_event(run, "claude", None)).outcome == "unknown"  # head only: nothing claimed


def test_the_persisted_output_is_read_tail_first_capped_cleaned_and_only_from_tool_results(tmp_path):
    results = tmp_path / "session" / "tool-results"
    results.mkdir(parents=True)
    persisted = results / "out.txt"
    secret = "GITHUB_TOKEN=ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    persisted.write_text("x" * 100_000 + f"\n{secret}\n<private>mine</private>")
    tail = with_persisted_output({"stdout": "x", "persistedOutputPath": str(persisted)}, tmp_path)[PERSISTED_TAIL]
    assert len(tail) <= 20_000 and "ghp_A1b2" not in tail and "mine" not in tail and "[REDACTED]" in tail
    elsewhere = tmp_path / "notes.txt"
    elsewhere.write_text("1 failed")
    assert PERSISTED_TAIL not in with_persisted_output({"persistedOutputPath": str(elsewhere)}, tmp_path)
    outside = tmp_path / "other" / "tool-results"
    outside.mkdir(parents=True)
    (outside / "o.txt").write_text("1 failed")
    assert PERSISTED_TAIL not in with_persisted_output({"persistedOutputPath": str(outside / "o.txt")},
                                                       tmp_path / "session")


def session_events(name: str, upto: int | None = None) -> list[ToolEvent]:
    [session] = [s for s in load_sessions() if s["name"] == name]
    return [ToolEvent("Edit", {"file_path": s["file"], "old_string": s["old"], "new_string": s["new"]}, {}, "")
            if s["kind"] == "edit" else tool_event(s, "claude", None, i) for i, s in enumerate(session["steps"][:upto])]


def test_a_monorepo_summary_keeps_each_package_apart():
    pytest_q = "`python -m pytest -q -p no:cacheprovider`"
    before_the_edit = summarize(["fix the api"], session_events("monorepo", 4), [])
    assert before_the_edit.completed == f"Tests pass: {pytest_q} in packages/core (1 passed)."
    assert before_the_edit.next_steps.startswith(f"Fix the failing {pytest_q} in packages/api (1 failed")
    assert "passed after the changes" not in before_the_edit.learned
    after = summarize(["fix the api"], session_events("monorepo"), [])
    assert f"{pytest_q} in packages/api failed at first and passed after the changes" in after.learned
    assert f"{pytest_q} in packages/core failed at first" not in after.learned and not after.next_steps


def test_tests_pass_only_for_the_last_run_of_each_command_and_every_failing_one_is_a_next_step():
    summary = summarize(["add and sub"], session_events("py-calc"), [])
    assert "Tests pass: `python -m pytest -q -p no:cacheprovider tests/test_add.py`" in summary.completed
    assert "Tests pass: `python -m pytest -q -p no:cacheprovider` " not in summary.completed  # its last run failed
    assert "Fix the failing `python -m pytest -q -p no:cacheprovider` (1 failed, 462 passed" in summary.next_steps
    assert "Fix the failing `git status` (fatal: not a git repository" in summary.next_steps
    assert "Tests pass: `pip install pytest`" not in summary.completed


def test_the_claude_deliveries_have_the_shapes_the_real_cli_sent(tmp_path):
    recorded = json.loads((Path(__file__).parents[2] / "fixtures/observer/claude_payloads.json").read_text())
    by_command = {p["tool_input"]["command"]: p for p in recorded["payloads"]}
    lines = "".join(f"line {n:05d}\n" for n in range(4000))
    for command, output, exit_code in (
            ("echo to-out; echo to-err >&2", "to-out\nto-err\n", 0),
            ("echo to-out; echo to-err >&2; exit 3", "to-out\nto-err\n", 3),
            ("python3 -c \"print('x' * 40000)\"", "x" * 40000 + "\n", 0),
            ("python3 -c \"import sys; [print(f'line {n:05d}') for n in range(4000)]; sys.exit(2)\"", lines, 2)):
        real = by_command[command]
        ours = claude_payload({"command": command, "cwd": real["cwd"], "output": output, "exit_code": exit_code},
                              tmp_path)
        assert ours["hook_event_name"] == real["hook_event_name"]
        if exit_code:
            assert ours["error"] == real["error"]
        else:
            kept = {k: v for k, v in real["tool_response"].items() if k != "persistedOutputPath"}
            assert {k: v for k, v in ours["tool_response"].items() if k != "persistedOutputPath"} == kept


def test_a_large_response_is_stored_whole_under_the_cap_with_its_end_kept():
    response = {"stdout": "a" * 30_000 + "END", "stderr": "", "interrupted": False,
                "persistedOutputTail": "line\n" * 4000 + "1 failed, 459 passed"}
    fitted = fit_response(response, 16_384)
    stored = json.dumps(fitted, ensure_ascii=False).encode()
    assert len(stored) <= 16_384 and json.loads(stored)["interrupted"] is False
    assert fitted["stdout"].endswith("END") and fitted["persistedOutputTail"].endswith("1 failed, 459 passed")
    assert fit_response({"error": "Exit code 1\nshort"}, 16_384) == {"error": "Exit code 1\nshort"}


def test_benign_non_zero_exits_are_told_but_are_no_problem_to_fix():
    recorded = json.loads((Path(__file__).parents[2] / "fixtures/observer/claude_payloads.json").read_text())
    benign = [p for p in recorded["payloads"] if "returnCodeInterpretation" in p.get("tool_response", {})]
    assert len(benign) == 3  # grep without a match, `test -f` false, diff: PostToolUse, as the real CLI sent them
    events = [ToolEvent("Bash", p["tool_input"], p["tool_response"], p["cwd"]) for p in benign]
    for event, payload in zip(events, benign, strict=True):
        [draft] = observe(event)
        note = payload["tool_response"]["returnCodeInterpretation"]
        assert "Outcome: failed" in draft.facts and draft.type == "discovery" and draft.title.endswith(f"({note})")
    store = MemoryFailures()
    assert all(track(store, e, shell_verdict(e), {"row": 0}) is None for e in events) and not store.failures
    summary = summarize([], events, [])
    assert not summary.next_steps and "failed" not in summary.learned


@pytest.mark.parametrize("command", ["npx eslint lint", "npx tsc", "make"])
def test_a_clean_end_of_a_build_tool_behind_tail_is_its_success(command):
    run = real_run(command, "succeeded")
    short = "\n".join(run["output"].splitlines()[-5:])  # what `| tail -5` of the real output shows
    piped = dict(run, command=f"{command} 2>&1 | tail -5", output=short)
    assert shell_verdict(tool_event(piped, "claude")).outcome == "succeeded"
    # The head of an output may end before the error: it proves nothing.
    assert shell_verdict(tool_event(dict(piped, command=f"{command} 2>&1 | head -5"), "claude")).outcome == "unknown"


@pytest.mark.parametrize(("command", "hidden"), [
    ("pytest -q 2>&1 | tail -5", True), ("set -o pipefail; pytest -q | tail -5", False), ("cd app; pytest", False),
    ("pytest; echo done", True), ("make || true", True), ("make && ./app", False), ("npm run dev &", True),
    ("echo 'a | b; c'", False), ("pytest -q 2>&1 > out.log", False),
])
def test_what_hides_a_commands_own_exit_status(command, hidden):
    assert exit_hidden(command) is hidden
