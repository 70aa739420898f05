"""How truthful is the rule observer? Scored on the labelled fixtures of tests/fixtures/observer.

For every event: the outcome the observer states (from the observation's facts: "Outcome:
succeeded|failed|unknown"; a non-shell failure is "failed") against the label; whether
it claims success on a run that failed; and how many labelled failing test names appear
in its title or facts. The baseline in the same run is the pre-issue-12 rule (exit code,
then a pytest summary framed by "=", FAILED lines counted only with stderr), so the ratio
shows what the new reader buys on this machine's identical inputs.

    .venv/bin/python bench/observer.py
"""

from __future__ import annotations

import os
import re
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from capture.drafts import FAILURE_EVENT, ToolEvent  # noqa: E402
from capture.observer import observe  # noqa: E402
from tests.fixtures.observer import load_events  # noqa: E402

TARGET_ACCURACY = 0.97


def tool_event(event: dict[str, Any]) -> ToolEvent:
    payload = event["payload"]
    kind = payload["hook_event_name"]
    response = ({"error": payload["error"], "is_interrupt": payload.get("is_interrupt", False)}
                if kind == FAILURE_EVENT else payload.get("tool_response"))
    return ToolEvent(payload["tool_name"], payload["tool_input"], response, payload["cwd"], kind, event["platform"])


def stated_outcome(event: ToolEvent) -> tuple[str, str]:
    """(outcome the observation states, its title + facts)."""
    [draft] = observe(event)
    text = "\n".join([draft.title, *draft.facts])
    stated = re.search(r"^Outcome: (\w+)$", text, re.MULTILINE)
    if stated:
        return stated.group(1), text
    return ("failed" if event.failed_call else "unknown"), text


def baseline_outcome(event: ToolEvent) -> str:
    """The observer before this issue: failed on an exit code, on a "=...=" pytest
    summary with failures, or on an error in stderr; everything else "succeeded"."""
    if event.failed_call and event.tool_name != "Bash":
        return "unknown"  # it registered no PostToolUseFailure hook: nothing was observed
    response = event.tool_response
    if event.failed_call:
        return "unknown"
    fields = response if isinstance(response, dict) else {"stdout": response}
    stdout = str(fields.get("stdout") or fields.get("output") or "")
    stderr = str(fields.get("stderr") or "")
    code = fields.get("exit_code")
    framed = re.findall(r"=+\s*(.*?\b(?:passed|failed|error)\b.*?)\s*=+\s*$", stdout, re.M)
    failed = (code not in (None, 0)) or bool(framed and re.search(r"[1-9]\d* (?:failed|error)", framed[-1]))
    failed = failed or bool(stderr.strip() and re.search(r"\bFAILED\b|Error", stderr))
    return "failed" if failed else "succeeded"


def score(events: list[dict[str, Any]], judge: Any) -> dict[str, float]:
    right = wrong_success = success_claims = names_total = names_found = 0
    for event in events:
        label = event["label"]
        outcome, text = judge(tool_event(event))
        right += outcome == label["outcome"]
        if outcome == "succeeded":
            success_claims += 1
            wrong_success += label["outcome"] == "failed"
        names_total += len(label["failing"])
        names_found += sum(1 for name in label["failing"] if name in text)
    return {
        "accuracy": right / len(events),
        "success_precision": 1 - wrong_success / success_claims if success_claims else 1.0,
        "false_success": wrong_success,
        "name_coverage": names_found / names_total if names_total else 1.0,
    }


def main() -> int:
    events = load_events()
    labels = Counter(e["label"]["outcome"] for e in events)
    started = time.perf_counter()
    new = score(events, stated_outcome)
    elapsed_ms = (time.perf_counter() - started) * 1000
    old = score(events, lambda e: (baseline_outcome(e), ""))
    print(f"observer fixtures: {len(events)} events ({', '.join(f'{k} {v}' for k, v in sorted(labels.items()))})")
    print(f"{'metric':<34}{'observer':>10}{'baseline':>10}{'ratio':>8}")
    for key, title in (("accuracy", "outcome accuracy"), ("success_precision", "precision of 'succeeded' claims"),
                       ("false_success", "'succeeded' claims on failed runs"), ("name_coverage",
                                                                                  "failing test names covered")):
        ratio = new[key] / old[key] if old[key] else float("inf") if new[key] else 1.0
        print(f"{title:<34}{new[key]:>10.3f}{old[key]:>10.3f}{ratio:>8.2f}")
    print(f"observer time: {elapsed_ms / len(events):.2f} ms/event; load average {os.getloadavg()}")
    ok = new["accuracy"] >= TARGET_ACCURACY and new["false_success"] == 0
    print(f"targets (accuracy >= {TARGET_ACCURACY}, no 'succeeded' on a failed run): {'met' if ok else 'NOT met'}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
