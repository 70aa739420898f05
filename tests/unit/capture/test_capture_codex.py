"""Codex as the real CLI (0.171, recorded by tests/fixtures/observer/codex_shapes.py) shows a
shell run: "Chunk ID: ...\nWall time: ...\nProcess exited with code N\nOriginal token count:
T\nOutput:\n..." to the model, the output alone (no exit code) to its PostToolUse hook, cut
past 10,000 tokens to its first and last 5,000 characters. The benchmark's Codex deliveries
are built in that format and read like Claude Code's."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from capture.drafts import ToolEvent
from capture.observer import observe
from capture.observer_shell import shell_verdict
from tests.fixtures.observer.deliveries import HOOK_DELIVERY, codex_exec_text, codex_output, tool_event
from tests.unit.capture.test_capture_real_runs import real_run

pytestmark = pytest.mark.unit
RECORDED = json.loads((Path(__file__).parents[2] / "fixtures/observer/codex_payloads.json").read_text())
LINES = "".join(f"line {n:05d}\n" for n in range(4000))
# (command, its merged output, exit code): what those commands print, known without running them
KNOWN = {
    "echo to-out; echo to-err >&2": ("to-out\nto-err\n", 0),
    "echo to-out; echo to-err >&2; exit 3": ("to-out\nto-err\n", 3),
    "python3 -c \"print('x' * 40000)\"": ("x" * 40000 + "\n", 0),
    "python3 -c \"import sys; [print(f'line {n:05d}') for n in range(4000)]; sys.exit(2)\"": (LINES, 2),
    "grep -n no-such-text /etc/hostname": ("", 1),
    "true": ("", 0),
}


def _without_id_and_time(text: str) -> str:
    return re.sub(r"^Chunk ID: \w+\nWall time: [\d.]+ seconds\n", "", text)


@pytest.mark.parametrize("command", list(KNOWN))
def test_the_codex_deliveries_have_the_shapes_the_real_cli_sent(command):
    n = RECORDED["commands"].index(command)
    output, code = KNOWN[command]
    run = {"command": command, "output": output, "exit_code": code, "seconds": 0.1}
    assert _without_id_and_time(codex_exec_text(run)) == _without_id_and_time(RECORDED["model_saw"][n])
    [hook] = [p for p in RECORDED["hook_payloads"] if p["tool_input"]["command"] == command]
    assert hook["hook_event_name"] == "PostToolUse" and codex_output(output) == hook["tool_response"]


@pytest.mark.parametrize(("n", "outcome", "code"), [(0, "succeeded", 0), (1, "failed", 3), (5, "failed", 2),
                                                    (6, "failed", 1), (7, "succeeded", 0)])
def test_the_exit_code_in_codexs_exec_text_is_read(n, outcome, code):
    event = ToolEvent("Bash", {"command": RECORDED["commands"][n]}, RECORDED["model_saw"][n], "/w", "PostToolUse",
                      "codex")
    verdict = shell_verdict(event)
    assert (verdict.outcome, verdict.exit_code) == (outcome, code)


def test_a_cut_output_is_read_without_codexs_warning_and_its_end_is_there():
    event = ToolEvent("Bash", {"command": RECORDED["commands"][5]}, RECORDED["model_saw"][5], "/w", "PostToolUse",
                      "codex")
    [draft] = observe(event)
    assert "Warning: truncated output" not in draft.narrative and "line 03999" in draft.narrative


def test_a_codex_hook_without_an_exit_code_is_judged_by_the_output_alone():
    hook = next(p for p in RECORDED["hook_payloads"] if p["tool_input"]["command"].endswith("exit 3"))
    event = ToolEvent("Bash", hook["tool_input"], hook["tool_response"], hook["cwd"], "PostToolUse", "codex")
    assert shell_verdict(event).outcome == "unknown"  # "to-out\nto-err": nothing says it failed
    # a real pytest failure says so in its output, exit code or not
    failed = real_run("python -m pytest -q -p no:cacheprovider")
    assert shell_verdict(tool_event(failed, HOOK_DELIVERY)).outcome == "failed"
